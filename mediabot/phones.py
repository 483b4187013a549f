"""Phone numbers in E.164, the one form users are stored and matched in."""

import re

from .config import E164


def normalise_phone(text: str, default_country: str = "1") -> str:
    """'+1 (555) 123-4567', '555-123-4567' (North American) -> '+15551234567'.

    Raises ValueError saying how to write the number when it cannot be read as E.164.
    """
    raw = text.strip()
    digits = re.sub(r"[\s().\-]", "", raw)
    if digits.startswith("00"):
        digits = "+" + digits[2:]
    if not digits.startswith("+") and digits.isdigit():
        if len(digits) == 10:
            digits = "+" + default_country + digits
        elif len(digits) == 11 and digits.startswith(default_country):
            digits = "+" + digits
    if not E164.match(digits):
        raise ValueError(f"{text!r} is not a phone number in E.164; write it as + country "
                         "code and number, e.g. +15551234567")
    return digits
