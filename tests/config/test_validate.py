"""The rules each setting is held to (``config/validate.py``): one line per problem naming the
file, key, value and fix, every problem at once, never a secret's value, and the needs a
command names."""

import pytest

from mediabot.config import parse_config
from tests.support.config_files import MINIMAL, problems_of, raw_with, write_config


def test_bad_environment_values_are_named():
    problems = problems_of(MINIMAL, {"MEDIABOT_SERVER_PORT": "eighty", "MEDIABOT_LLM_MODLE": "x"})
    assert any("MEDIABOT_SERVER_PORT" in p and "whole number" in p for p in problems)
    assert any("MEDIABOT_LLM_MODLE" in p and "not a known setting" in p for p in problems)


@pytest.mark.parametrize("raw,needle", [
    ({"twilio": MINIMAL["twilio"]}, "[server] public_url is required"),
    (raw_with(server={"public_url": "ftp://x"}), "public_url = 'ftp://x' is not an http(s) URL"),
    (raw_with(server={"public_url": "sms.example.com"}), "is not an http(s) URL"),
    ({"server": MINIMAL["server"]}, "[twilio] account_sid is required"),
    (raw_with(twilio={"from_number": "5550001111"}), "from_number = '5550001111' is not in E.164"),
    (raw_with(users=[{"phone": "555-1234", "name": "A"}]),
     "phone = '555-1234' is not a phone number (the area code is missing)"),
    (raw_with(users=[{"phone": "+15551234567", "role": "owner"}]), "role = 'owner' is not a role"),
    (raw_with(history={"max_messages": 0}), "[history] max_messages = 0 must be greater than 0"),
    (raw_with(confirmation={"ttl_seconds": -5}), "ttl_seconds = -5 must be greater than 0"),
    (raw_with(llm={"max_retries": -1}), "max_retries = -1 must be 0 or more"),
    (raw_with(llm={"max_reply_tokens": 0}), "[llm] max_reply_tokens = 0 must be greater than 0"),
    (raw_with(llm={"max_reply_tokens": 10}), "max_reply_tokens = 10 is too few for a tool call or "
                                          "an SMS reply; use at least 64"),
    (raw_with(server={"drain_seconds": 60}), "[server] drain_seconds = 60 must be below 45"),
    (raw_with(server={"drain_seconds": 0}), "[server] drain_seconds = 0.0 must be greater than 0"),
    (raw_with(server={"connection_limit": 0}), "[server] connection_limit = 0 must be greater"),
    (raw_with(server={"channel_timeout_seconds": -1}), "channel_timeout_seconds = -1.0 must be"),
    (raw_with(histroy={"max_messages": 5}), "unknown section [histroy]"),
    (raw_with(history={"max_mesages": 5}), "[history] max_mesages is not a known key"),
    (raw_with(server={"port": "8080"}), "[server] port = '8080' must be a whole number"),
    (raw_with(sms={"unknown_senders": "shout"}), "unknown_senders = 'shout' is not allowed"),
    (raw_with(sonarr={"url": "http://localhost:8989"}), "[sonarr] api_key is required"),
    (raw_with(radarr={"api_key": "k"}), "[radarr] url is required"),
])
def test_each_problem_is_one_line_naming_file_key_value_and_fix(raw, needle):
    problems = problems_of(raw)
    line = next((p for p in problems if needle in p), None)
    assert line is not None, problems
    assert line.startswith("cfg.toml:")


def test_every_problem_is_reported_at_once():
    raw = raw_with(history={"max_messages": 0, "fetch_limit": -1}, bogus={})
    assert len(problems_of(raw)) == 3


def test_secret_values_are_never_echoed():
    problems = problems_of(raw_with(llm={"api_key": 12345}))
    assert "12345" not in "\n".join(problems)
    problems = problems_of(MINIMAL, {"MEDIABOT_TWILIO_AUTH_TOKEN": "x",
                                     "MEDIABOT_LLM_API_KEY_": "s3cret"})
    assert "s3cret" not in "\n".join(problems)


def test_chat_needs_no_twilio():
    config = parse_config({"server": MINIMAL["server"]}, environ={})
    assert config.twilio.account_sid == ""


def test_users_are_normalised():
    config = parse_config(raw_with(users=[{"phone": "+15551234567", "name": " Alex "}]), environ={})
    assert config.users[0].name == "Alex" and config.users[0].role == "member"


def test_a_fetch_limit_below_max_messages_is_refused_with_the_fix(tmp_path):
    from click.testing import CliRunner

    from mediabot.cli import main

    path = write_config(tmp_path, server={"public_url": "https://sms.example.com"},
                        history={"max_messages": 30, "fetch_limit": 12})
    result = CliRunner().invoke(main, ["users", "list", "--config", str(path)])
    assert result.exit_code == 2
    assert result.output == (f"config error: {path}: [history] fetch_limit = 12 is smaller than "
                             "max_messages = 30; set fetch_limit to at least 30 (or lower "
                             "max_messages)\n")
    assert parse_config(raw_with(history={"max_messages": 30, "fetch_limit": 30}), environ={})
