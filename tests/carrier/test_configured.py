"""Which carriers a config sets up (``carrier/configured.py``): the phone alone needs neither
Twilio nor a public URL in Local mode, its secrets come from the environment or a file like
the others, and what is missing is one line naming the key and the fix."""

import pytest

from mediabot.carrier.configured import carrier_needs, gateway_settings, twilio_in_use
from mediabot.carrier.sms_gateway.settings import Mode
from mediabot.config import ConfigError, load_config, parse_config
from tests.support.config_files import MINIMAL, write_config

PHONE = {"url": "http://192.168.1.60:8080", "username": "sms", "password": "pw-s3cret"}


def daemon_config(raw, environ=None):
    return parse_config(raw, source="cfg.toml", environ=environ or {}, needs=(carrier_needs,))


def daemon_problems(raw, environ=None):
    with pytest.raises(ConfigError) as info:
        daemon_config(raw, environ)
    return info.value.problems


def test_the_phone_alone_needs_no_twilio_and_no_public_url():
    config = daemon_config({"sms_gateway": PHONE})
    settings = gateway_settings(config)
    assert settings is not None and settings.mode is Mode.LOCAL
    assert (settings.url, settings.username, settings.password) == (
        "http://192.168.1.60:8080", "sms", "pw-s3cret")
    assert settings.poll_seconds == 3.0
    assert not twilio_in_use(config)


def test_both_carriers_keep_twilio_for_whatsapp():
    config = daemon_config({**MINIMAL, "sms_gateway": PHONE})
    assert twilio_in_use(config) and gateway_settings(config) is not None


def test_without_the_phone_twilio_is_needed_as_before():
    problems = daemon_problems({})
    assert any("[server] public_url is required" in p for p in problems)
    assert any("[twilio] account_sid is required" in p for p in problems)
    assert gateway_settings(parse_config({})) is None


def test_the_password_and_signing_key_come_from_the_environment():
    environ = {"MEDIABOT_SMS_GATEWAY_URL": "https://api.sms-gate.app/3rdparty/v1",
               "MEDIABOT_SMS_GATEWAY_USERNAME": "ABCDEF",
               "MEDIABOT_SMS_GATEWAY_PASSWORD": "env-pw",
               "MEDIABOT_SMS_GATEWAY_SIGNING_KEY": "env-key",
               "MEDIABOT_SMS_GATEWAY_POLL_SECONDS": "0.5",
               "MEDIABOT_SERVER_PUBLIC_URL": "https://sms.example.com"}
    settings = gateway_settings(daemon_config({}, environ))
    assert settings is not None and settings.mode is Mode.CLOUD
    assert (settings.password, settings.signing_key, settings.poll_seconds) == (
        "env-pw", "env-key", 0.5)


def test_the_password_may_come_from_a_file(tmp_path):
    (tmp_path / "phone_password").write_text("\ufefffile-pw\n")
    table = {"url": PHONE["url"], "username": "sms", "password_file": "phone_password"}
    path = write_config(tmp_path, sms_gateway=table)
    config = load_config(path, environ={}, needs=(carrier_needs,))
    assert config.sms_gateway is not None and config.sms_gateway.password == "file-pw"


def test_a_missing_password_is_one_line_with_the_fix_and_no_secret_is_shown():
    problems = daemon_problems({"sms_gateway": {**PHONE, "password": ""}})
    assert problems == ["cfg.toml: [sms_gateway] username and password are both needed "
                        "(shown in the app's Home screen)"]
    bad_poll = daemon_problems({"sms_gateway": {**PHONE, "poll_seconds": 0}})
    assert bad_poll == ["cfg.toml: [sms_gateway] poll_seconds = 0.0 must be greater than 0"]
    assert not any("pw-s3cret" in p for p in bad_poll)


def test_a_missing_url_names_the_phone_address():
    problems = daemon_problems({"sms_gateway": {"username": "sms", "password": "pw"}})
    assert len(problems) == 1 and "[sms_gateway] url is required" in problems[0]
    assert "http://192.168.1.60:8080" in problems[0]


def test_cloud_mode_needs_a_signing_key_and_the_public_url_its_webhooks_call():
    cloud = {"url": "https://api.sms-gate.app/3rdparty/v1", "username": "u", "password": "p"}
    problems = daemon_problems({"sms_gateway": cloud})
    assert any("[sms_gateway] signing_key is needed in cloud mode" in p for p in problems)
    assert any("[server] public_url is required in the phone's cloud mode" in p
               and "/sms/gateway" in p for p in problems)


def test_a_half_written_twilio_beside_the_phone_says_it_may_be_removed():
    problems = daemon_problems({"sms_gateway": PHONE,
                                "twilio": {"account_sid": "ACxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}})
    assert any("[twilio] auth_token is required (or remove [twilio] to run on the phone "
               "alone)" in p for p in problems)


def test_an_unknown_key_of_the_phone_is_refused():
    problems = daemon_problems({"sms_gateway": {**PHONE, "pasword": "x"}})
    assert any("[sms_gateway] pasword is not a known key" in p for p in problems)
