"""Phone numbers as people write them, at home and abroad, read with libphonenumber."""

import re

import pytest
from click.testing import CliRunner

from mediabot.cli import main
from mediabot.config import ConfigError, parse_config
from mediabot.store import db
from mediabot.text.phones import inbound_phone, normalise_phone
from tests.support.config_files import dead_servers, write_config


@pytest.mark.parametrize("text,region,expected", [
    ("+15551234567", "US", "+15551234567"),
    ("+1 (555) 123-4567", "US", "+15551234567"),
    ("555-123-4567", "US", "+15551234567"),
    ("15551234567", "US", "+15551234567"),
    ("0044 20 7946 0958", "US", "+442079460958"),
    ("07700 900123", "GB", "+447700900123"),
    ("+44 7700 900123", "DE", "+447700900123"),
    ("0151 1234567", "DE", "+491511234567"),
    ("06 12 34 56 78", "fr", "+33612345678"),
])
def test_normalised_to_e164_in_the_default_region(text, region, expected):
    assert normalise_phone(text, region) == expected


@pytest.mark.parametrize("text,region,reason", [
    ("12345", "US", "too short"),
    ("+1555123456789012", "US", "too long"),
    ("555-1234", "US", "the area code is missing"),
    ("+0123456789", "US", "could not interpret numbers after plus-sign"),
    ("call me", "US", "the string supplied did not seem to be a phone number"),
    ("", "US", "the string supplied did not seem to be a phone number"),
    ("07700 9001234567", "GB", "too long"),
    ("07700", "GB", "the area code is missing"),
])
def test_an_impossible_number_is_refused_with_the_librarys_reason(text, region, reason):
    with pytest.raises(ValueError) as info:
        normalise_phone(text, region)
    assert str(info.value) == (
        f"{text!r} is not a phone number ({reason}); write it as + country code and number "
        f"(E.164, e.g. +15551234567), or as dialled in {region} ([sms] default_region)")


def test_twilio_senders_in_e164_are_taken_as_sent():
    assert inbound_phone("+447700900123", "US") == "+447700900123"
    with pytest.raises(ValueError):
        inbound_phone("Vodafone", "GB")


def test_a_uk_household_writes_its_numbers_as_dialled_at_home(tmp_path):
    path = write_config(tmp_path, server={"public_url": "https://sms.example.com"},
                        database={"path": tmp_path / "m.db"}, sms={"default_region": "GB"},
                        users=[{"phone": "07700 900123", "name": "Olivia", "role": "admin"}])
    runner = CliRunner()
    added = runner.invoke(main, ["users", "add", "07700 900456", "--name", "Harry",
                                 "--config", str(path)])
    assert added.output == "added +447700900456 (Harry) as member\n"
    listing = runner.invoke(main, ["users", "list", "--config", str(path)]).output
    assert re.search(r"^\+447700900123\s+Olivia\s+admin", listing, re.M)
    assert re.search(r"^\+447700900456\s+Harry\s+member", listing, re.M)
    chat = runner.invoke(main, ["chat", "--as", "07700 900999", "--config", str(path)],
                         input="hi\n")
    db.database.close()
    assert chat.exit_code == 1
    assert "+447700900999 is not a user" in chat.output


def test_a_config_user_that_cannot_be_a_number_is_one_line_with_the_reason():
    raw = {"server": {"public_url": "https://sms.example.com"}, "sms": {"default_region": "GB"},
           "users": [{"phone": "07700 9001234567", "name": "Olivia"}]}
    with pytest.raises(ConfigError) as info:
        parse_config(raw, source="cfg.toml", environ={})
    assert info.value.problems == [
        "cfg.toml: [[users]] #1: phone = '07700 9001234567' is not a phone number (too long); "
        "write it as + country code and number (E.164, e.g. +15551234567), or as dialled in GB "
        "([sms] default_region)"]


def test_an_unknown_region_is_refused_with_the_fix():
    raw = {"server": {"public_url": "https://sms.example.com"}, "sms": {"default_region": "UK"}}
    with pytest.raises(ConfigError) as info:
        parse_config(raw, source="cfg.toml", environ={})
    assert info.value.problems == [
        "cfg.toml: [sms] default_region = 'UK' is not a region with known phone numbers (the "
        "United Kingdom is \"GB\"); use a two-letter ISO 3166 code like \"US\", \"GB\" or \"DE\""]


def test_check_warns_when_the_twilio_number_is_from_another_region(tmp_path):
    path = write_config(
        tmp_path, server={"public_url": "https://sms.home.test"},
        database={"path": tmp_path / "m.db"},
        **dead_servers(from_number="+447700900001"))
    output = CliRunner().invoke(main, ["check", "--config", str(path)]).output
    assert ("warn sms: your Twilio number +447700900001 is from GB, but numbers written "
            "without + and a country code (in [[users]], users add, chat --as) are read as US "
            "numbers — set [sms] default_region = \"GB\" if that is where the household is"
            ) in output
    path.write_text(path.read_text() + '[sms]\ndefault_region = "GB"\n')
    assert "warn sms:" not in CliRunner().invoke(main, ["check", "--config", str(path)]).output
