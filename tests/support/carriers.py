"""The carriers a test's sender delivers through: Twilio carrying both channels, as a
daemon without the phone has it."""

from mediabot.carrier.base import Carriers
from mediabot.carrier.twilio.carrier import TwilioCarrier


def twilio_carriers(config):
    twilio = TwilioCarrier.for_config(config)
    return Carriers(sms=twilio, whatsapp=twilio)
