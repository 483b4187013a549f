"""The household's own Android phone as an SMS carrier, through the open-source "SMS Gateway
for Android" app (``me.capcom.smsgateway``; docs/android-phone.md is the operator's guide).

The phone sends through Android's own SMS stack, so to the network these are ordinary texts
from the household's SIM. It is reached in one of three modes (``settings.Mode``): its Local
server on the LAN, the app's cloud, or a private server; incoming texts come back by reading
the phone's inbox (Local, ``inbox.py``) or as signed webhooks (cloud and private,
``signing.py``, ``events.py``).

The modules, each with one job:

- ``settings``: the frozen settings, the mode a URL names, the paths per mode.
- ``errors``: ``GatewayError``, the one error every call raises, "worth another try" or
  "refused".
- ``client``: ``GatewayClient``, the bounded HTTP calls (send, state, inbox, health,
  webhooks, device settings), plain ``requests``.
- ``outgoing``: what is sent (E.164 addresses, the request body, the parts the phone splits a
  text into) and what the phone says of it (``SendState``, states that only move forward).
- ``signing``: the webhook signature and its clock window, pure.
- ``events``: a webhook body read into an event, pure.
- ``inbox``: the Local inbox read into texts, what is unique about one, and the cursor.
- ``health``: the phone's health and settings read into what ``mediabot check`` says.
- ``times``: the app's timestamps, read with their zone and written as the phone reads them.

Nothing here touches the database or the mailbox; what was taken is the caller's to store.
"""
