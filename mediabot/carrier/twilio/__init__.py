"""Twilio as a carrier: SMS and WhatsApp through its REST API, its answers read once.

- ``client``: building Twilio's client, ``mediabot check``'s look at the account, and what
  a send's answer or error means (``classify``, ``TwilioCode``).
- ``carrier``: ``TwilioCarrier``, the ``carrier.base.Carrier`` that sends one text
  (free-form or as a WhatsApp template) and asks for its delivery reports.
- ``whatsapp_sender``: ``mediabot check``'s look at the WhatsApp sender.
"""
