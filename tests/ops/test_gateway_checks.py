"""The phone's lines in ``mediabot check`` (``ops/gateway_checks.py``), against the fake
phone: its mode named, its health, battery and connection, the credentials, the settings
that break a conversation and RCS, each with the fix; in a private server's mode (HTTPS,
as the mode must be) the webhooks it lacks, and ``--register-webhooks`` registering them
once however often it runs."""

import pytest
from click.testing import CliRunner

from mediabot.cli import main
from tests.fakes.sms_gateway import FakePhone
from tests.fakes.tls import certificate
from tests.support.check import PUBLIC_URL, check_line, write_check_config

PRIVATE_PREFIX = "/api/3rdparty/v1"


@pytest.fixture
def phone():
    with FakePhone() as phone:
        yield phone


@pytest.fixture
def private_phone(tmp_path_factory, monkeypatch):
    cert, key = certificate(tmp_path_factory.mktemp("tls"))
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", cert)
    with FakePhone(prefix=PRIVATE_PREFIX, tls=(cert, key), password="a-long-server-password") \
            as phone:
        yield phone


def check(tmp_path, servers, phone, *args, password=None, **overrides):
    settings = {"sms_gateway.url": f'"{phone.url}"', "sms_gateway.username": f'"{phone.username}"',
                "sms_gateway.password": f'"{password or phone.password}"',
                "sms_gateway.timeout_seconds": "2", "twilio": None}
    if phone.prefix:
        settings["sms_gateway.signing_key"] = f'"{phone.signing_key}"'
    settings.update(overrides)
    settings = {k: v for k, v in settings.items() if v is not None or not k.startswith("sms_")}
    path = write_check_config(tmp_path, servers["urls"], **settings)
    result = CliRunner().invoke(main, ["check", "--config", str(path), *args])
    assert phone.password not in result.output and phone.signing_key not in result.output
    assert "Traceback" not in result.output
    phone.assert_clean()
    return result


def test_a_healthy_phone_on_the_lan_is_named_with_its_battery_and_the_fixes(tmp_path,
                                                                            servers, phone):
    result = check(tmp_path, servers, phone)
    said = check_line(result, "phone", "ok")
    assert f"Local server mode at {phone.url}" in said and "nothing calls in" in said
    assert "the phone answers: app 1.68.0, status pass, battery 87%, charging, online" in said
    warned = check_line(result, "phone", "warn")
    assert "Processing order to FIFO" in warned, "the app's default LIFO sends bursts backwards"
    assert "RCS chats off" in warned
    assert "twilio" not in result.output, "no Twilio line when the phone alone carries SMS"
    assert result.exit_code == 0, result.output


def test_fifo_set_leaves_only_the_rcs_reminder(tmp_path, servers, phone):
    phone.state.settings["messages"]["processing_order"] = "FIFO"
    warned = check_line(check(tmp_path, servers, phone), "phone", "warn")
    assert "FIFO" not in warned and "RCS" in warned


def test_a_low_battery_off_its_charger_is_a_warning_with_the_fix(tmp_path, servers, phone):
    phone.set_battery(18, charging=False)
    result = check(tmp_path, servers, phone)
    assert "battery 18%, not charging" in check_line(result, "phone", "ok")
    assert "battery is at 18%: keep it on a charger" in check_line(result, "phone", "warn")


def test_a_phone_that_is_off_fails_naming_what_to_look_at(tmp_path, servers, phone):
    phone.down()
    result = check(tmp_path, servers, phone)
    failed = check_line(result, "phone", "FAIL")
    assert "could not be reached" in failed and "Local server" in failed
    assert "[sms_gateway] url" in failed
    assert result.exit_code == 1


def test_a_wrong_password_fails_with_where_the_app_shows_it(tmp_path, servers, phone):
    result = check(tmp_path, servers, phone, password="not-the-password")
    failed = check_line(result, "phone", "FAIL")
    assert "username or password was refused" in failed and "[sms_gateway]" in failed
    assert "not-the-password" not in result.output
    assert result.exit_code == 1


def test_private_mode_without_webhooks_fails_and_register_webhooks_registers_them_once(
        tmp_path, servers, private_phone):
    hook = PUBLIC_URL + "/sms/gateway"
    result = check(tmp_path, servers, private_phone)
    assert "private mode, through a private server" in check_line(result, "phone", "ok")
    failed = check_line(result, "phone", "FAIL")
    assert "sms:received, sms:sent, sms:delivered, sms:failed" in failed and hook in failed
    assert "mediabot check --register-webhooks" in failed
    assert result.exit_code == 1
    registered = check(tmp_path, servers, private_phone, "--register-webhooks")
    assert "registered the webhooks for sms:received" in check_line(registered, "phone", "ok")
    again = check(tmp_path, servers, private_phone, "--register-webhooks")
    assert f"webhooks registered: sms:received, sms:sent, sms:delivered, sms:failed to {hook}" \
        in check_line(again, "phone", "ok")
    hooks = list(private_phone.state.webhooks.values())
    assert sorted(h["event"] for h in hooks) == ["sms:delivered", "sms:failed", "sms:received",
                                                "sms:sent"]
    assert {h["url"] for h in hooks} == {hook}
    assert "the server heard from the phone 0 minute(s) ago" in check_line(again, "phone", "ok")
    assert again.exit_code == 0, again.output


def test_a_missing_signing_key_in_private_mode_is_refused_naming_where_the_app_shows_it(
        tmp_path, servers, private_phone):
    result = check(tmp_path, servers, private_phone, **{"sms_gateway.signing_key": None})
    assert result.exit_code != 0
    assert "signing_key is needed in private mode" in result.output
    assert "Settings > Webhooks > Signing Key" in result.output
