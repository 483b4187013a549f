"""Phone numbers in E.164, the one form users are stored and matched in, and the channel
(SMS or WhatsApp) a number is texted on: Twilio writes a WhatsApp user as "whatsapp:+1...",
the same person's number with a prefix, so both channels reach one user.

Numbers are read with ``phonenumbers`` (Google's libphonenumber metadata): a number with its
country code ("+44 7700 900123", "0044 7700 900123") is read as it is, one written the way
it is dialled at home ("07700 900123", "(555) 123-4567") in ``[sms] default_region``. A
number that cannot exist is refused with the library's reason. Numbers are checked for being
*possible* (right length for the country), not *assigned*: fictional 555 numbers pass.
"""

import re
from enum import StrEnum

import phonenumbers
from phonenumbers import NumberParseException, PhoneNumberFormat, ValidationResult

E164 = re.compile(r"^\+[1-9]\d{6,14}$")
DEFAULT_REGION = "US"


class Channel(StrEnum):
    """The channels one number is texted on (stored as these words in ``inbox.channel``,
    ``outbox.channel`` and ``users.channel``)."""

    SMS = "sms"
    WHATSAPP = "whatsapp"


SMS, WHATSAPP = Channel.SMS, Channel.WHATSAPP
CHANNELS = tuple(Channel)
WHATSAPP_PREFIX = "whatsapp:"
REASONS = {
    ValidationResult.TOO_SHORT: "too short",
    ValidationResult.TOO_LONG: "too long",
    ValidationResult.INVALID_LENGTH: "not a length numbers there have",
    ValidationResult.INVALID_COUNTRY_CODE: "no country has that code",
    ValidationResult.IS_POSSIBLE_LOCAL_ONLY: "the area code is missing",
}


def is_region(code: str) -> bool:
    """A two-letter region the library has numbering rules for ("US", "GB", "DE", ...)."""
    return code.upper() in phonenumbers.SUPPORTED_REGIONS


def normalise_phone(text: str, region: str = DEFAULT_REGION) -> str:
    """'+1 (555) 123-4567', '555-123-4567' (region US), '07700 900123' (GB) -> E.164.

    Raises ValueError naming the library's reason and how to write the number.
    """
    raw = text.strip()
    if raw.startswith("00"):        # the international prefix most of the world dials
        raw = "+" + raw[2:]
    try:
        number = phonenumbers.parse(raw, region.upper())
    except NumberParseException as exc:
        raise ValueError(_refusal(text, _parse_reason(exc), region)) from None
    verdict = phonenumbers.is_possible_number_with_reason(number)
    if verdict != ValidationResult.IS_POSSIBLE:
        raise ValueError(_refusal(text, REASONS.get(verdict, "not possible"), region))
    return phonenumbers.format_number(number, PhoneNumberFormat.E164)


def home_regions(number: str) -> tuple[str, ...]:
    """The regions sharing ``number``'s country code, the main one first: "+44..." -> GB, GG,
    IM, JE; () when it is not in E.164."""
    try:
        parsed = phonenumbers.parse(number, None)
    except NumberParseException:
        return ()
    if parsed.country_code is None:
        return ()
    return tuple(phonenumbers.region_codes_for_country_code(parsed.country_code))


def inbound_phone(sender: str, region: str = DEFAULT_REGION) -> str:
    """Twilio's ``From``: already E.164 for phones (kept as sent, no parsing on the hot
    path); anything else is read like a typed number. ValueError when it is none."""
    return sender if E164.match(sender) else normalise_phone(sender, region)


def split_channel(address: str) -> tuple[Channel, str]:
    """Twilio's address of a person: "whatsapp:+14155552671" -> ("whatsapp", "+14155552671"),
    a plain number -> ("sms", number). The number part is not checked here."""
    if address[:len(WHATSAPP_PREFIX)].lower() == WHATSAPP_PREFIX:
        return WHATSAPP, address[len(WHATSAPP_PREFIX):].strip()
    return SMS, address


def channel_address(channel: str, phone: str) -> str:
    """Twilio's ``To``/``From`` for ``phone`` on ``channel`` (split_channel's inverse)."""
    return WHATSAPP_PREFIX + phone if channel == WHATSAPP else phone


def _parse_reason(exc: NumberParseException) -> str:
    """The library's own words: "(1) The string supplied did not seem to be ..." -> "the
    string supplied did not seem to be ..."."""
    words = re.sub(r"^\(\d+\)\s*", "", str(exc)).rstrip(".")
    return words[:1].lower() + words[1:]


def _refusal(text: str, why: str, region: str) -> str:
    return (f"{text!r} is not a phone number ({why}); write it as + country code and number "
            f"(E.164, e.g. +15551234567), or as dialled in {region.upper()} "
            "([sms] default_region)")
