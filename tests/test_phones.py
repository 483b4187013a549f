import pytest

from mediabot.phones import normalise_phone


@pytest.mark.parametrize("text,expected", [
    ("+15551234567", "+15551234567"),
    ("+1 (555) 123-4567", "+15551234567"),
    ("555-123-4567", "+15551234567"),
    ("15551234567", "+15551234567"),
    ("0044 20 7946 0958", "+442079460958"),
])
def test_normalised_to_e164(text, expected):
    assert normalise_phone(text) == expected


@pytest.mark.parametrize("text", ["", "12345", "call me", "+0123456789", "+1555123456789012"])
def test_invalid_numbers_are_refused_with_the_fix(text):
    with pytest.raises(ValueError, match="E.164"):
        normalise_phone(text)
