"""The carriers a test's sender delivers through: Twilio carrying both channels, as a
daemon without the phone has it."""

from mediabot.carrier.base import Carriers
from mediabot.carrier.twilio.carrier import TwilioCarrier


def twilio_carriers(config):
    twilio = TwilioCarrier.for_config(config)
    return Carriers(sms=twilio, whatsapp=twilio)


def gateway_client(phone, **changes):
    """The gateway's client pointed at the fake phone ``phone`` (``changes``: settings)."""
    from mediabot.carrier.sms_gateway.client import GatewayClient
    from mediabot.carrier.sms_gateway.settings import GatewaySettings

    settings = {"url": phone.url, "username": phone.username, "password": phone.password,
                "timeout": 2.0, **changes}
    return GatewayClient(GatewaySettings(**settings))
