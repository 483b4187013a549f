"""The carriers a text can travel by: what mediabot's mailbox hands a text to, and what hands
texts back. Each carrier is one folder (``sms_gateway/``: the household's own Android phone);
this package sits above ``text/`` and ``config/`` and below the mailbox's delivery, and takes
its settings as plain values, never the config package's types.
"""
