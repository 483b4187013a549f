"""The mailbox: the texts themselves, in and out, and delivering them through their carrier.

``inbox`` stores each incoming text in the inbox (one group commit per burst), owns the
Inbox table and how far a carrier's own inbox was read (InboxCursor); ``outbox`` owns the
Outbox table (every query of it); ``delivery`` (``Sender``) sends the outbox through the
carrier of each text's channel (``carrier.base``: Twilio, or the household's phone for SMS)
with retries and records what it said. Beside them: ``channels`` plans the channel of each
text, ``held`` judges texts held for the person, ``sms_optout`` keeps Twilio's own SMS
opt-out.

Why apart from ``answering``: the mailbox holds texts and sits below the conversation,
because a confirmation's rule reads it (a question counts as asked only once its carrier
accepted its text, docs/architecture.md, "Confirmations"). The workers that answer the texts sit
above the conversation, in ``answering``, and only move texts between the two.
"""
