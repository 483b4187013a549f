"""The mailbox: the texts themselves, in and out, and delivering them through Twilio.

``inbox`` stores each webhook's text in the inbox (one group commit per burst of requests)
and owns the Inbox table; ``outbox`` owns the Outbox table (every query of it);
``delivery`` (``Sender``) sends the outbox through Twilio with retries and records what
Twilio said; ``twilio_client`` builds and checks Twilio's client and reads its answers.
Beside them: ``channels`` plans the channel of each text, ``held`` judges texts held for
the person, ``sms_optout`` keeps Twilio's own SMS opt-out, ``whatsapp_sender`` checks the
WhatsApp sender.

Why apart from ``answering``: the mailbox holds texts and sits below the conversation,
because a confirmation's rule reads it (a question counts as asked only once Twilio accepted
its text, docs/architecture.md, "Confirmations"). The workers that answer the texts sit
above the conversation, in ``answering``, and only move texts between the two.
"""
