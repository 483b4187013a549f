"""``mediabot check`` against loopback fakes of Sonarr, Radarr, the model server and Twilio.

Each test writes a real config file, runs the real command through click's CliRunner and
reads its lines; the real arrapi, openai and twilio clients do real HTTP to the fakes
(the household-rules line needs no server and is read off ``check_household``).
"""

import dataclasses
import os
import re
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from mediabot.cli import main
from mediabot.config import Config, ServerConfig
from mediabot.ops.checks import _safely
from mediabot.ops.local_checks import check_server
from mediabot.trial.sim.arr import API_KEY, FakeRadarr, FakeSonarr
from mediabot.trial.sim.loopback import LoopbackServer
from mediabot.trial.sim.twilio import FakeTwilio
from tests.fakes.openai import FakeOpenAI, error_reply, text_reply

LLM_KEY = "sk-test-llm-key-0001"
TWILIO_TOKEN = "twilio-auth-token-0001"
WEBHOOK_SECRET = "hook-secret-0001"
ACCOUNT_SID = "AC" + "1" * 32
ROOT = Path(__file__).resolve().parents[2]
SECRETS = (API_KEY, LLM_KEY, TWILIO_TOKEN, WEBHOOK_SECRET)
PUBLIC_URL = "https://sms.smith-family.net"    # not the example's: see the placeholder test
FROM_NUMBER = "+15557654321"
WHATSAPP_NUMBER = "+15557654000"
SERVICE = "MG" + "2" * 32


@pytest.fixture(scope="module")
def servers():
    """One set of fakes for the module; tests that change one restore it."""
    fakes = {"sonarr": FakeSonarr(), "radarr": FakeRadarr(),
             "twilio": FakeTwilio(account_sid=ACCOUNT_SID, auth_token=TWILIO_TOKEN,
                                  owned_numbers=(FROM_NUMBER, WHATSAPP_NUMBER),
                                  messaging_services={SERVICE: "Smith household"})}
    running = {name: LoopbackServer(app).start() for name, app in fakes.items()}
    llm = FakeOpenAI(api_key=LLM_KEY).start()
    llm.set_responder(calls_a_tool_when_offered)
    unlisted = LoopbackServer(_without_model_list(llm.wsgi_app)).start()
    urls = {name: server.url for name, server in running.items()}
    urls.update(llm=llm.url + "/v1", unlisted_llm=unlisted.url + "/v1")
    yield {"urls": urls, "llm": llm, **fakes}
    for server in [*running.values(), unlisted]:
        server.stop()
    llm.stop()


def calls_a_tool_when_offered(body):
    """What a tool-capable model does with check's probe."""
    return [("download_queue", {})] if body.get("tools") else "OK."


def _without_model_list(app):
    """The fake model server as a server that cannot list its models (like some proxies)."""
    def wsgi(environ, start_response):
        if environ["PATH_INFO"].rstrip("/") == "/v1/models":
            start_response("404 Not Found", [("Content-Type", "application/json")])
            return [b'{"error": {"message": "not found", "type": "invalid_request_error"}}']
        return app(environ, start_response)
    return wsgi


def write_config(tmp_path, urls, **overrides):
    """A healthy config on the fakes; ``overrides`` maps "section.key" to a TOML value or
    None (drop the key; a section name alone drops the section)."""
    sections = {
        "server": {"public_url": f'"{PUBLIC_URL}"'},
        "database": {"path": f'"{tmp_path / "mediabot.db"}"'},
        "twilio": {"account_sid": f'"{ACCOUNT_SID}"', "auth_token": f'"{TWILIO_TOKEN}"',
                   "from_number": f'"{FROM_NUMBER}"', "api_base_url": f'"{urls["twilio"]}"'},
        "llm": {"base_url": f'"{urls["llm"]}"', "api_key": f'"{LLM_KEY}"',
                "model": '"gpt-4o-mini"', "timeout_seconds": "5", "max_retries": "0"},
        "sonarr": {"url": f'"{urls["sonarr"]}"', "api_key": f'"{API_KEY}"',
                   "root_folder": '"/tv"', "quality_profile": '"HD-1080p"',
                   "timeout_seconds": "5"},
        "radarr": {"url": f'"{urls["radarr"]}"', "api_key": f'"{API_KEY}"',
                   "timeout_seconds": "5"},
        "notifications": {"webhook_secret": f'"{WEBHOOK_SECRET}"'},
    }
    for where, value in overrides.items():
        section, _, key = where.partition(".")
        if not key:
            sections.pop(section)
        elif value is None:
            sections[section].pop(key)
        else:
            sections.setdefault(section, {})[key] = value
    text = "".join(f"[{name}]\n" + "".join(f"{k} = {v}\n" for k, v in keys.items()) + "\n"
                   for name, keys in sections.items())
    path = tmp_path / "config.toml"
    path.write_text(text + '[[users]]\nphone = "+15552468000"\nname = "Alex"\nrole = "admin"\n')
    return path


def run_check(tmp_path, servers, caplog=None, **overrides):
    path = write_config(tmp_path, servers["urls"], **overrides)
    result = CliRunner().invoke(main, ["check", "--config", str(path)])
    everything = result.output + (caplog.text if caplog is not None else "")
    for secret in SECRETS:
        assert secret not in everything
    assert "apikey=" not in everything.lower()
    assert "Traceback" not in everything
    return result


def line(result, subject: str, status: str) -> str:
    """The lines of ``subject`` with ``status``, joined; fails the test when there is none."""
    found = [text for text in result.output.splitlines()
             if re.match(rf"{re.escape(status)}\s+{subject}: ", text)]
    assert found, f"no {status} {subject} line in:\n{result.output}"
    return "\n".join(found)


def test_healthy_setup_passes_with_one_line_per_check(tmp_path, servers, caplog):
    result = run_check(tmp_path, servers, caplog)
    assert result.exit_code == 0, result.output
    assert "Sonarr 4.0.14.2939 answers at " + servers["urls"]["sonarr"] in line(
        result, "sonarr", "ok")
    assert "root folder /tv (configured" in result.output
    assert "quality profile HD-1080p (configured)" in result.output
    assert "none configured, using the first" in line(result, "radarr", "ok")
    assert "gpt-4o-mini" in line(result, "llm", "ok")
    assert "the model called a tool when asked" in line(result, "tools", "ok")
    probe = [body for body in servers["llm"].requests if body.get("tools")][-1]
    assert (probe["tool_choice"], probe["max_tokens"]) == ("auto", 64)
    assert f"Twilio should post to {PUBLIC_URL}/sms" in line(result, "server", "ok")
    assert "credentials accepted" in line(result, "twilio", "ok")
    assert "is writable" in line(result, "database", "ok") or "will be created" in \
        line(result, "database", "ok")
    lines = result.output.splitlines()
    assert all(text.startswith("ok   ") for text in lines[:-1])
    assert lines[-1] == "all checks passed (0 warnings)"


def test_wrong_sonarr_key_fails_naming_the_setting(tmp_path, servers, caplog):
    result = run_check(tmp_path, servers, caplog,
                       **{"sonarr.api_key": '"ffffffffffffffffffffffffffffffff"'})
    assert result.exit_code == 1
    assert "check [sonarr] api_key" in line(result, "sonarr", "FAIL")
    assert "ffffffffffffffffffffffffffffffff" not in result.output
    assert "FAIL radarr" not in result.output


def test_radarr_down_says_so_and_names_the_url(tmp_path, servers, caplog):
    stopped = LoopbackServer(FakeRadarr()).start()
    stopped.stop()
    result = run_check(tmp_path, servers, caplog, **{"radarr.url": f'"{stopped.url}"'})
    assert result.exit_code == 1
    text = line(result, "radarr", "FAIL")
    assert f"not answering at {stopped.url}" in text and "[radarr] url" in text
    assert result.output.splitlines()[-1].startswith("1 check failed")


def test_missing_root_folder_lists_the_real_ones(tmp_path, servers, caplog):
    result = run_check(tmp_path, servers, caplog, **{"sonarr.root_folder": '"/media/tv"'})
    assert result.exit_code == 1
    text = line(result, "sonarr", "FAIL")
    assert "no root folder '/media/tv'" in text and "/tv" in text
    assert "[sonarr] root_folder" in text


@pytest.mark.parametrize("kind", ["sonarr", "radarr"])
def test_unknown_quality_profile_lists_the_real_ones_and_the_key_to_fix(tmp_path, servers, kind):
    result = run_check(tmp_path, servers, **{f"{kind}.quality_profile": '"4K HDR"'})
    assert result.exit_code == 1
    text = line(result, kind, "FAIL")
    assert f"{kind.title()} has no quality profile '4K HDR'; it has: Any" in text
    assert text.endswith(f"(fix [{kind}] quality_profile)")


def test_unknown_model_is_named_with_some_available(tmp_path, servers, caplog):
    result = run_check(tmp_path, servers, caplog, **{"llm.model": '"gpt-9-imaginary"'})
    assert result.exit_code == 1
    text = line(result, "llm", "FAIL")
    assert "'gpt-9-imaginary' is not on the server" in text
    assert "gpt-4o, gpt-4o-mini" in text and "[llm] model" in text


def test_a_server_that_answers_to_any_model_name_passes(tmp_path, servers):
    llm, listed = servers["llm"], servers["llm"].models
    llm.models, llm.serves_any_model = ["/models/gemma-3-270m-q4_k_m.gguf"], True
    try:
        result = run_check(tmp_path, servers)
    finally:
        llm.models, llm.serves_any_model = listed, False
    text = line(result, "llm", "ok")
    assert "model gpt-4o-mini answered at" in text
    assert "lists '/models/gemma-3-270m-q4_k_m.gguf' and answers to any name" in text
    assert result.exit_code == 0


def test_rejected_model_key(tmp_path, servers, caplog):
    result = run_check(tmp_path, servers, caplog, **{"llm.api_key": '"sk-wrong-key-9999"'})
    assert result.exit_code == 1
    assert "the model server rejected [llm] api_key" in line(result, "llm", "FAIL")
    assert "sk-wrong-key-9999" not in result.output


def test_model_server_down(tmp_path, servers):
    stopped = LoopbackServer(FakeRadarr()).start()
    stopped.stop()
    result = run_check(tmp_path, servers, **{"llm.base_url": f'"{stopped.url}/v1"'})
    assert result.exit_code == 1
    assert "not answering at" in line(result, "llm", "FAIL")


@pytest.mark.parametrize("model, status, expected", [
    ('"gpt-4o"', "ok", "answered at"),
    ('"llama-none"', "FAIL", "model 'llama-none' was not found"),
])
def test_server_without_model_list_gets_a_one_token_completion(tmp_path, servers, model,
                                                               status, expected):
    result = run_check(tmp_path, servers, **{"llm.base_url": f'"{servers["urls"]["unlisted_llm"]}"',
                                             "llm.model": model})
    assert expected in line(result, "llm", status)


@pytest.mark.parametrize("answer, expected", [
    ("Nothing is downloading.", "asked to call a tool, the model answered without one"),
    (error_reply(400, "tools are not supported by this template"),
     "refused a request with tools (rejected: HTTP 400: tools are not supported"),
])
def test_a_model_that_returns_no_tool_calls_is_a_warning_with_the_fix(tmp_path, servers,
                                                                      answer, expected):
    servers["llm"].set_responder(lambda body: answer if body.get("tools") else "OK.")
    try:
        result = run_check(tmp_path, servers)
    finally:
        servers["llm"].set_responder(calls_a_tool_when_offered)
    text = line(result, "tools", "warn")
    assert expected in text and "start llama-server with --jinja" in text
    assert "ok   llm: model gpt-4o-mini" in result.output
    assert result.exit_code == 0 and result.output.splitlines()[-1].endswith("(1 warning)")


def test_a_model_that_drops_tools_names_the_chat_template_and_each_servers_fix(tmp_path,
                                                                               servers):
    servers["llm"].set_responder(lambda body: "Nothing is downloading.")
    try:
        text = line(run_check(tmp_path, servers), "tools", "warn")
    finally:
        servers["llm"].set_responder(calls_a_tool_when_offered)
    assert "the usual cause is the server's chat template, which drops the tool schemas" in text
    assert "start llama-server with --jinja and --chat-template-file <a template that renders " \
           "tools" in text
    assert "Ollama: a model whose Modelfile TEMPLATE handles .Tools" in text


def test_a_fast_model_is_timed_and_passes(tmp_path, servers):
    result = run_check(tmp_path, servers)
    text = line(result, "speed", "ok")
    assert "a typical text (2,000 prompt tokens + 100 reply tokens) takes ~" in text
    assert "within [llm] timeout_seconds = 5" in text
    probe = [body for body in servers["llm"].requests if "Check " in str(body["messages"])][-1]
    assert probe["max_tokens"] == 16 and "tools" not in probe


def test_a_model_too_slow_for_the_timeout_is_a_warning_naming_the_key(tmp_path, servers):
    """llama-server's timings: 50 prompt tokens/s and 4 reply tokens/s make a typical text
    2000/50 + 100/4 = 65 s, over a 5 s timeout."""
    servers["llm"].timings = {"prompt_n": 400, "prompt_per_second": 50.0,
                              "predicted_n": 16, "predicted_per_second": 4.0}
    try:
        result = run_check(tmp_path, servers)
    finally:
        servers["llm"].timings = None
    assert line(result, "speed", "warn") == (
        "warn speed: reads ~50 prompt tokens/s, writes ~4.0 reply tokens/s; a typical text "
        "(2,000 prompt tokens + 100 reply tokens) would take ~65 s, over [llm] timeout_seconds "
        "= 5 — raise [llm] timeout_seconds to at least 98, or use a smaller or faster model "
        "(a GPU), and keep the server's prompt cache on so most texts read only what is new")
    assert result.exit_code == 0, "a warning, not a failure"


def test_without_timings_the_prompt_speed_comes_from_usage_and_time(tmp_path, servers):
    slow = dataclasses.replace(text_reply("OK"), delay=1.0)
    servers["llm"].set_responder(
        lambda body: slow if "Check " in str(body["messages"]) else calls_a_tool_when_offered(body))
    try:
        result = run_check(tmp_path, servers, **{"llm.timeout_seconds": "3"})
    finally:
        servers["llm"].set_responder(calls_a_tool_when_offered)
    text = line(result, "speed", "warn")
    assert "reply speed not reported (llama.cpp's timings give it)" in text
    assert "over [llm] timeout_seconds = 3 — raise [llm] timeout_seconds" in text


def test_no_tool_probe_when_the_model_check_failed(tmp_path, servers):
    result = run_check(tmp_path, servers, **{"llm.model": '"gpt-9-imaginary"'})
    assert "tools:" not in result.output and "speed:" not in result.output


def test_bad_twilio_credentials(tmp_path, servers, caplog):
    result = run_check(tmp_path, servers, caplog,
                       **{"twilio.auth_token": '"not-the-token-1234"'})
    assert result.exit_code == 1
    text = line(result, "twilio", "FAIL")
    assert "20003" in text and "auth_token" in text
    assert "not-the-token-1234" not in result.output


def test_twilio_number_not_owned(tmp_path, servers):
    result = run_check(tmp_path, servers, **{"twilio.from_number": '"+15559990000"'})
    assert result.exit_code == 1
    assert "+15559990000 is not a number of this account" in line(result, "twilio", "FAIL")


def test_http_public_url_and_no_webhook_secret_are_warnings_not_failures(tmp_path, servers):
    result = run_check(tmp_path, servers, **{"server.public_url": '"http://sms.example.com"',
                                             "notifications": None})
    assert result.exit_code == 0, result.output
    assert "public_url is http; Twilio needs https" in line(result, "server", "warn")
    assert "[notifications] webhook_secret" in line(result, "notifications", "warn")
    assert "warnings)" in result.output.splitlines()[-1]


def test_a_webhook_secret_sonarr_cannot_send_is_a_warning_that_does_not_show_it(tmp_path,
                                                                                  servers):
    result = run_check(tmp_path, servers,
                       **{"notifications.webhook_secret": '"hook-secret-\u0142\u00f3d\u017a"'})
    assert result.exit_code == 0, result.output
    warning = line(result, "notifications", "warn")
    assert "cannot send (they encode the password as ISO-8859-1)" in warning
    assert "hook-secret" not in result.output and "\u0142" not in result.output


@pytest.mark.parametrize("public_url", ["https://sms.example.com/",
                                        "https://sms.example.com/sms"])
def test_server_line_names_the_url_the_daemon_checks_signatures_against(public_url):
    config = Config(server=ServerConfig(public_url=public_url))
    [server] = check_server(config)
    assert server.text == "Twilio should post to https://sms.example.com/sms"


def test_missing_arr_section_turns_tools_off_without_failing(tmp_path, servers):
    result = run_check(tmp_path, servers, sonarr=None)
    assert result.exit_code == 0, result.output
    assert "series tools are off" in line(result, "sonarr", "warn")


def test_missing_database_directory_fails(tmp_path, servers):
    result = run_check(tmp_path, servers,
                       **{"database.path": f'"{tmp_path / "nowhere" / "mediabot.db"}"'})
    assert result.exit_code == 1
    assert "does not exist" in line(result, "database", "FAIL")


def test_existing_database_is_written_and_rolled_back(tmp_path, servers):
    (tmp_path / "mediabot.db").write_bytes(b"")
    result = run_check(tmp_path, servers)
    assert "is writable" in line(result, "database", "ok")
    import sqlite3
    tables = sqlite3.connect(tmp_path / "mediabot.db").execute(
        "SELECT name FROM sqlite_master").fetchall()
    assert tables == []


def test_a_file_that_is_not_a_database_fails(tmp_path, servers):
    (tmp_path / "mediabot.db").write_text("not sqlite at all, " * 100)
    result = run_check(tmp_path, servers)
    assert result.exit_code == 1
    assert "not a database" in line(result, "database", "FAIL")


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write a read-only file")
def test_read_only_database_fails(tmp_path, servers):
    (tmp_path / "mediabot.db").write_bytes(b"")
    (tmp_path / "mediabot.db").chmod(0o444)
    result = run_check(tmp_path, servers)
    assert "fix its owner/permissions" in line(result, "database", "FAIL")


def test_config_errors_exit_2_before_any_check(tmp_path, servers):
    result = run_check(tmp_path, servers, **{"twilio.auth_token": None,
                                             "llm.temperature": "-1"})
    assert result.exit_code == 2
    assert "[twilio] auth_token is required" in result.output
    assert "[llm] temperature = -1.0 must be 0 or more" in result.output
    assert "ok " not in result.output


def test_the_households_language_and_accents_are_one_line(tmp_path, servers):
    result = run_check(tmp_path, servers, **{"sms.language": '"es"'})
    assert result.exit_code == 0, result.output
    assert line(result, "language", "ok") == (
        "ok   language: texts in Spanish (es); accents folded on SMS (á -> a, 160 characters "
        "a segment; the language's default; see [sms] accents)")


def test_a_member_speaking_another_language_is_named_with_their_accents(tmp_path, servers):
    path = write_config(tmp_path, servers["urls"], **{"sms.language": '"de"'})
    path.write_text(path.read_text() + '\n[[users]]\nphone = "+15552468001"\nname = "Ana"\n'
                    'language = "pt-BR"\n')
    result = CliRunner().invoke(main, ["check", "--config", str(path)])
    assert line(result, "language", "ok") == (
        "ok   language: texts in German (de); Ana in Portuguese (Brazil, pt-BR), accents kept; "
        "accents folded on SMS (á -> a, 160 characters a segment; the language's default; "
        "see [sms] accents)")


def test_a_chosen_accents_setting_is_named(tmp_path, servers):
    result = run_check(tmp_path, servers, **{"sms.accents": '"keep"'})
    assert line(result, "language", "ok") == (
        "ok   language: texts in English (en); accents kept on SMS (UCS-2, 70 characters a "
        "segment; [sms] accents)")


def test_a_crashing_check_becomes_a_fail_line_and_the_rest_still_run(caplog):
    def broken():
        raise RuntimeError(f"boom with {LLM_KEY}")
    with caplog.at_level("DEBUG", logger="mediabot.ops.checks"):
        lines = _safely("llm", [LLM_KEY], broken)
    assert [line.render() for line in lines] == [
        "FAIL llm: the check itself failed (RuntimeError); run `mediabot -v check` for details"]
    assert "boom with ***" in caplog.text and LLM_KEY not in caplog.text


def test_the_examples_placeholders_are_flagged_with_the_fix(tmp_path, servers):
    """config.example.toml copied and only the secrets filled in: check must not say ok."""
    example = tomllib.loads((ROOT / "config.example.toml").read_text())
    result = run_check(tmp_path, servers, **{
        "server.public_url": f'"{example["server"]["public_url"]}"',
        "twilio.account_sid": f'"{example["twilio"]["account_sid"]}"',
        "twilio.from_number": f'"{example["twilio"]["from_number"]}"'})
    assert result.exit_code == 1
    fails = line(result, "config", "FAIL").splitlines()
    assert fails == [
        "FAIL config: [server] public_url is still the example's https://sms.example.com, which "
        "Twilio cannot reach you at — set it to your own https address",
        "FAIL config: [twilio] account_sid is still the example's ACxxx... — copy your Account "
        "SID from the Twilio console (Account info)",
        "FAIL config: [twilio] from_number is still the example's +15550001111 — set it to "
        "your Twilio number"]


def test_the_examples_user_is_a_warning(tmp_path, servers):
    example = tomllib.loads((ROOT / "config.example.toml").read_text())["users"][0]
    path = write_config(tmp_path, servers["urls"])
    path.write_text(path.read_text().replace("+15552468000", example["phone"]))
    result = CliRunner().invoke(main, ["check", "--config", str(path)])
    assert result.exit_code == 0, result.output
    assert line(result, "config", "warn") == (
        f"warn config: [[users]] still holds the example's {example['name']} "
        f"({example['phone']}) as admin — replace it with a real person's phone and name")


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
    assert line(result, "whatsapp", "FAIL") == f"FAIL whatsapp: {said}"


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
    assert line(result, "whatsapp", "warn") == (
        "warn whatsapp: outside the 24-hour window, download notices wait for the next "
        f"WhatsApp message; approval requests go as template {TEMPLATE} — set [twilio] "
        "whatsapp_ready_template (an approved HX... Content SID) or an SMS from_number to "
        "send them")


def test_check_reports_the_household_rules():
    from mediabot.config import parse_config
    from mediabot.ops.local_checks import check_household

    base = {"server": {"public_url": "https://sms.example.com"}}
    plain = check_household(parse_config(base, environ={}))
    assert plain.render() == ("ok   requests: adds run at once (no approval); no weekly quotas; "
                              "search again at most every 6 h per title; no posters")
    strict = check_household(parse_config(
        {**base, "requests": {"approval": "members", "movies_per_week": 2,
                              "seasons_per_week": 1}, "sms": {"posters": True}},
        environ={}))
    assert strict.status == "warn" and strict.text.startswith(
        "members' adds wait for an admin's APPROVE (expire after 48 h); at most 2 movies and "
        "1 season a week per member")
    assert "fix: add one with role = \"admin\"" in strict.text
