"""The mode a URL names, and settings refused once with their fix."""

import pytest

from mediabot.carrier.sms_gateway.settings import GatewaySettings, Mode, settings_problem


@pytest.mark.parametrize("url, mode", [
    ("http://192.168.1.60:8080", Mode.LOCAL),
    ("http://phone.lan:8080/", Mode.LOCAL),
    ("https://api.sms-gate.app/3rdparty/v1", Mode.CLOUD),
    ("https://sms.example.com/api/3rdparty/v1/", Mode.PRIVATE),
])
def test_the_url_names_the_mode(url, mode):
    assert GatewaySettings(url, "sms", "password1", "key").mode is mode


@pytest.mark.parametrize("settings, words", [
    (GatewaySettings("192.168.1.60:8080", "sms", "pw123456"), "not an http(s) URL"),
    (GatewaySettings("http://api.sms-gate.app/3rdparty/v1", "u", "p", "k"), "https only"),
    (GatewaySettings("https://sms.example.com/3rdparty/v1", "u", "p", "k"), "/api prefix"),
    (GatewaySettings("http://192.168.1.60:8080", "sms", ""), "username and password"),
    (GatewaySettings("https://api.sms-gate.app/3rdparty/v1", "u", "p"), "signing_key"),
    (GatewaySettings("http://192.168.1.60:8080", "sms", "pw", timeout=0), "more than 0"),
])
def test_unusable_settings_are_named_with_the_fix(settings, words):
    problem = settings_problem(settings)
    assert problem is not None and words in problem


def test_local_mode_needs_no_signing_key_and_secrets_stay_out_of_repr():
    settings = GatewaySettings("http://192.168.1.60:8080", "sms", "s3cret-pw", "k3y-s3cret")
    assert settings_problem(settings) is None
    assert "s3cret" not in repr(settings)
