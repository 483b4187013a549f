"""For ``mediabot check``: is ``[twilio] whatsapp_from`` a WhatsApp sender of this account?

A messaging service (``MG...``) is fetched from Twilio's Messaging API; a number is looked
up among the account's incoming phone numbers (a WhatsApp sender is a number of the
account); Twilio's shared sandbox number is nobody's own, so it is accepted with a note.
"""

import requests
from twilio.base.exceptions import TwilioException, TwilioRestException
from twilio.rest import Client

from mediabot.carrier.twilio.client import TwilioCode, describe_failure
from mediabot.config import TwilioConfig
from mediabot.text.phones import split_channel

SANDBOX = "+14155238886"


def check_whatsapp_sender(client: Client, config: TwilioConfig) -> tuple[bool, str]:
    """(ok, one line) for ``config.whatsapp_from``; the line names the fix when not ok.
    Never raises for HTTP or network errors."""
    sender = config.whatsapp_from
    try:
        if sender.startswith("MG"):
            return _messaging_service(client, sender)
        return _number(client, config.account_sid, split_channel(sender)[1])
    except (TwilioException, requests.RequestException) as exc:
        if isinstance(exc, TwilioRestException) and exc.code == TwilioCode.NOT_FOUND:
            return False, (f"{sender} is not a messaging service of this account; set "
                           "[twilio] whatsapp_from to the MG... SID of the one with your "
                           "WhatsApp sender")
        return False, describe_failure(exc, config.auth_token)


def _messaging_service(client: Client, sid: str) -> tuple[bool, str]:
    service = client.messaging.v1.services(sid).fetch()
    return True, (f"sender is the messaging service {sid} ({service.friendly_name}); "
                  "replies go from its WhatsApp sender")


def _number(client: Client, account_sid: str, number: str) -> tuple[bool, str]:
    if number == SANDBOX:
        return True, (f"sender whatsapp:{SANDBOX} is Twilio's shared sandbox: only phones "
                      "that sent it your sandbox's join word get messages; fine "
                      "for trying, not for a household")
    owned = client.api.v2010.accounts(account_sid).incoming_phone_numbers.list(
        phone_number=number, limit=1)
    if not owned:
        return False, (f"whatsapp:{number} is not a number of this account; set [twilio] "
                       "whatsapp_from to your WhatsApp sender (Messaging > Senders > "
                       "WhatsApp senders) or its messaging service (MG...)")
    return True, f"sender whatsapp:{number} is a number of this account"
