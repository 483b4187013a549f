"""The checks that ask Sonarr, Radarr and Twilio (``ops/service_checks.py``), through
``mediabot check`` against their loopback fakes: a wrong key or a server down named with
the setting, the root folders and profiles that exist, Twilio's credentials and numbers,
the WhatsApp sender and how notices go outside its 24-hour window."""

import re

import pytest

from mediabot.trial.sim.arr import FakeRadarr
from mediabot.trial.sim.loopback import LoopbackServer
from tests.support.check import FROM_NUMBER, SERVICE, WHATSAPP_NUMBER, check_line, run_check


def test_wrong_sonarr_key_fails_naming_the_setting(tmp_path, servers, caplog):
    result = run_check(tmp_path, servers, caplog,
                       **{"sonarr.api_key": '"ffffffffffffffffffffffffffffffff"'})
    assert result.exit_code == 1
    assert "check [sonarr] api_key" in check_line(result, "sonarr", "FAIL")
    assert "ffffffffffffffffffffffffffffffff" not in result.output
    assert "FAIL radarr" not in result.output


def test_radarr_down_says_so_and_names_the_url(tmp_path, servers, caplog):
    stopped = LoopbackServer(FakeRadarr()).start()
    stopped.stop()
    result = run_check(tmp_path, servers, caplog, **{"radarr.url": f'"{stopped.url}"'})
    assert result.exit_code == 1
    text = check_line(result, "radarr", "FAIL")
    assert f"not answering at {stopped.url}" in text and "[radarr] url" in text
    assert result.output.splitlines()[-1].startswith("1 check failed")


def test_missing_root_folder_lists_the_real_ones(tmp_path, servers, caplog):
    result = run_check(tmp_path, servers, caplog, **{"sonarr.root_folder": '"/media/tv"'})
    assert result.exit_code == 1
    text = check_line(result, "sonarr", "FAIL")
    assert "no root folder '/media/tv'" in text and "/tv" in text
    assert "[sonarr] root_folder" in text


@pytest.mark.parametrize("kind", ["sonarr", "radarr"])
def test_unknown_quality_profile_lists_the_real_ones_and_the_key_to_fix(tmp_path, servers, kind):
    result = run_check(tmp_path, servers, **{f"{kind}.quality_profile": '"4K HDR"'})
    assert result.exit_code == 1
    text = check_line(result, kind, "FAIL")
    assert f"{kind.title()} has no quality profile '4K HDR'; it has: Any" in text
    assert text.endswith(f"(fix [{kind}] quality_profile)")


def test_bad_twilio_credentials(tmp_path, servers, caplog):
    result = run_check(tmp_path, servers, caplog,
                       **{"twilio.auth_token": '"not-the-token-1234"'})
    assert result.exit_code == 1
    text = check_line(result, "twilio", "FAIL")
    assert "20003" in text and "auth_token" in text
    assert "not-the-token-1234" not in result.output


def test_twilio_number_not_owned(tmp_path, servers):
    result = run_check(tmp_path, servers, **{"twilio.from_number": '"+15559990000"'})
    assert result.exit_code == 1
    assert "+15559990000 is not a number of this account" in check_line(result, "twilio", "FAIL")


TEMPLATE = "HX" + "c" * 32


@pytest.mark.parametrize(("sender", "said"), [
    (f"whatsapp:{WHATSAPP_NUMBER}", f"sender whatsapp:{WHATSAPP_NUMBER} is a number of this "
                                    "account"),
    (SERVICE, f"sender is the messaging service {SERVICE} (Smith household); replies go from "
              "its WhatsApp sender"),
    ("whatsapp:+14155238886", "sender whatsapp:+14155238886 is Twilio's shared sandbox: only "
                              "phones that sent it your sandbox's join word get messages; fine "
                              "for trying, not for a household"),
])
def test_the_whatsapp_sender_is_looked_up_at_twilio(tmp_path, servers, caplog, sender, said):
    result = run_check(tmp_path, servers, caplog, **{"twilio.whatsapp_from": f'"{sender}"'})
    assert result.exit_code == 0, result.output
    assert f"ok   whatsapp: {said}" in result.output.splitlines()
    assert ("ok   whatsapp: outside the 24-hour window, notices and approval requests wait for "
            "the person's next WhatsApp message (whatsapp_outside_window = \"wait\"; dropped "
            "after 7 days)") in result.output.splitlines()


@pytest.mark.parametrize(("sender", "said"), [
    ("whatsapp:+15559990000", "whatsapp:+15559990000 is not a number of this account; set "
                              "[twilio] whatsapp_from to your WhatsApp sender (Messaging > "
                              "Senders > WhatsApp senders) or its messaging service (MG...)"),
    ("MG" + "9" * 32, f"{'MG' + '9' * 32} is not a messaging service of this account; set "
                      "[twilio] whatsapp_from to the MG... SID of the one with your WhatsApp "
                      "sender"),
])
def test_a_whatsapp_sender_that_is_not_ours_fails(tmp_path, servers, sender, said):
    result = run_check(tmp_path, servers, **{"twilio.whatsapp_from": f'"{sender}"'})
    assert result.exit_code == 1
    assert check_line(result, "whatsapp", "FAIL") == f"FAIL whatsapp: {said}"


def test_no_whatsapp_lines_without_a_whatsapp_sender(tmp_path, servers):
    output = run_check(tmp_path, servers).output
    assert not re.search(r"^\S+\s+whatsapp: ", output, re.MULTILINE), output


def test_templates_outside_the_window_name_how_each_notice_goes(tmp_path, servers):
    result = run_check(tmp_path, servers, **{
        "twilio.whatsapp_from": f'"{SERVICE}"', "twilio.whatsapp_outside_window": '"template"',
        "twilio.whatsapp_ready_template": f'"{TEMPLATE}"'})
    assert result.exit_code == 0, result.output
    assert (f"ok   whatsapp: outside the 24-hour window, download notices go as template "
            f"{TEMPLATE}; approval requests go by SMS from {FROM_NUMBER}") in result.output


def test_templates_missing_with_no_sms_to_fall_back_on_is_a_warning(tmp_path, servers):
    result = run_check(tmp_path, servers, **{
        "twilio.from_number": None, "twilio.whatsapp_from": f'"{SERVICE}"',
        "twilio.whatsapp_outside_window": '"template"',
        "twilio.whatsapp_approval_template": f'"{TEMPLATE}"'})
    assert result.exit_code == 0, result.output
    assert check_line(result, "whatsapp", "warn") == (
        "warn whatsapp: outside the 24-hour window, download notices wait for the next "
        f"WhatsApp message; approval requests go as template {TEMPLATE} — set [twilio] "
        "whatsapp_ready_template (an approved HX... Content SID) or an SMS from_number to "
        "send them")
