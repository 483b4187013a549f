"""The mailbox: texts in and out, and the two tables that hold them.

``intake`` stores each webhook's text in the inbox (one group commit per burst of requests),
``delivery`` delivers the outbox through Twilio and records what Twilio said. Both sit below the
conversation, because a confirmation's rule reads them: a question counts as asked only once
Twilio accepted its text (docs/architecture.md, "Confirmations"). Beside the sender:
``channels`` plans the channel of each text, ``held`` judges texts held for the person,
``sms_optout`` keeps Twilio's own SMS opt-out, ``twilio_client`` reads what Twilio said.
"""
