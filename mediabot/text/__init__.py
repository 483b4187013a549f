"""Text rules shared by every layer: SMS encoding and segments (``sms``), WhatsApp's
(``whatsapp``), the words people text (``keywords``), phone numbers, local time, masking of
secrets, public URLs, the ``env`` file's lines and the household's language. Pure functions
of their arguments, except that ``language`` reads its catalogs and ``localtime`` the host's
zone once each; nothing here opens the database or the network.
"""
