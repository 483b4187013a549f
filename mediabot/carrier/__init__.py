"""The carriers a text can travel by: what mediabot's mailbox hands a text to, and what hands
texts back. Each carrier is one folder (``sms_gateway/``: the household's own Android phone);
this package sits above ``text/`` and ``config/`` and below the mailbox's delivery. Each
carrier folder takes its settings as plain values, never the config package's types;
``configured.py`` alone reads them from the config: which carriers it sets up and what each
still needs.
"""
