"""Configuration: defaults, environment overrides, and one clear error per problem."""

from pathlib import Path

import pytest

from mediabot.config import ConfigError, load_config, parse_config, resolve_path, twilio_needs
from tests.support import write_config

ROOT = Path(__file__).resolve().parent.parent
SECRETS = {
    "MEDIABOT_TWILIO_AUTH_TOKEN": "tok",
    "MEDIABOT_SONARR_API_KEY": "sk",
    "MEDIABOT_RADARR_API_KEY": "rk",
}
MINIMAL = {
    "server": {"public_url": "https://sms.example.com"},
    "twilio": {"account_sid": "AC123", "auth_token": "tok", "from_number": "+15550001111"},
}


def with_(**sections):
    raw = {k: dict(v) for k, v in MINIMAL.items()}
    for name, table in sections.items():
        if isinstance(table, list):
            raw[name] = table
        else:
            raw.setdefault(name, {}).update(table)
    return raw


def problems_of(raw, environ=None):
    """Every problem of ``raw`` read for the daemon, which talks to Twilio."""
    with pytest.raises(ConfigError) as info:
        parse_config(raw, source="cfg.toml", environ=environ or {}, needs=(twilio_needs,))
    return info.value.problems


def test_defaults_are_the_documented_ones():
    config = parse_config(MINIMAL, environ={})
    assert (config.server.host, config.server.port) == ("127.0.0.1", 8080)
    assert config.database.path == "mediabot.db"
    assert config.llm.model == "gpt-4o-mini"
    assert (config.llm.timeout_seconds, config.llm.max_retries,
            config.llm.max_tool_rounds) == (120, 1, 6)
    assert config.llm.max_reply_tokens == 400
    h = config.history
    assert (h.max_messages, h.max_context_tokens, h.fetch_limit, h.summaries, h.retention_days) == (
        20, 4000, 60, False, 90)
    assert (config.confirmation.ttl_seconds,
            config.confirmation.sweep_interval_seconds) == (300, 60)
    assert (config.sms.max_reply_chars, config.sms.allow_emoji, config.sms.unknown_senders) == (
        480, False, "ignore")
    assert config.sonarr is None and config.radarr is None, "a missing section turns its tools off"
    assert config.twilio.validate_signature is True


def test_example_file_loads_with_secrets_from_the_environment():
    config = load_config(ROOT / "config.example.toml", environ=SECRETS)
    assert config.sonarr.url == "http://localhost:8989"
    assert config.radarr.api_key == "rk"
    assert config.users[0].role == "admin"


def test_example_file_lists_every_key():
    text = (ROOT / "config.example.toml").read_text()
    import dataclasses

    from mediabot.config.schema import SECTIONS
    for section, cls in SECTIONS.items():
        assert f"[{section}]" in text
        # an optional section the example leaves commented out ("# [seerr]") lists its keys
        # commented out too, inside that section
        commented = f"\n# [{section}]\n" in text
        block = text.split(f"\n# [{section}]\n", 1)[1].split("\n\n", 1)[0] if commented else ""
        for f in dataclasses.fields(cls):
            assert f"\n{f.name} =" in text or f"# {f.name} =" in block, \
                f"[{section}] {f.name} missing from the example"


@pytest.mark.parametrize("var,value,get,expected", [
    ("MEDIABOT_LLM_API_KEY", "sk-env", lambda c: c.llm.api_key, "sk-env"),
    ("MEDIABOT_HISTORY_MAX_MESSAGES", "12", lambda c: c.history.max_messages, 12),
    ("MEDIABOT_HISTORY_SUMMARIES", "true", lambda c: c.history.summaries, True),
    ("MEDIABOT_LLM_TIMEOUT_SECONDS", "7.5", lambda c: c.llm.timeout_seconds, 7.5),
    ("MEDIABOT_SONARR_URL", "http://nas:8989", lambda c: c.sonarr.url, "http://nas:8989"),
])
def test_environment_overrides_with_type_conversion(var, value, get, expected):
    environ = {"MEDIABOT_SONARR_URL": "http://localhost:8989", "MEDIABOT_SONARR_API_KEY": "k",
               var: value}
    assert get(parse_config(MINIMAL, environ=environ)) == expected


def test_environment_beats_the_file():
    raw = with_(llm={"model": "from-file"})
    assert parse_config(raw, environ={"MEDIABOT_LLM_MODEL": "from-env"}).llm.model == "from-env"


def test_bad_environment_values_are_named():
    problems = problems_of(MINIMAL, {"MEDIABOT_SERVER_PORT": "eighty", "MEDIABOT_LLM_MODLE": "x"})
    assert any("MEDIABOT_SERVER_PORT" in p and "whole number" in p for p in problems)
    assert any("MEDIABOT_LLM_MODLE" in p and "not a known setting" in p for p in problems)


@pytest.mark.parametrize("raw,needle", [
    ({"twilio": MINIMAL["twilio"]}, "[server] public_url is required"),
    (with_(server={"public_url": "ftp://x"}), "public_url = 'ftp://x' is not an http(s) URL"),
    (with_(server={"public_url": "sms.example.com"}), "is not an http(s) URL"),
    ({"server": MINIMAL["server"]}, "[twilio] account_sid is required"),
    (with_(twilio={"from_number": "5550001111"}), "from_number = '5550001111' is not in E.164"),
    (with_(users=[{"phone": "555-1234", "name": "A"}]),
     "phone = '555-1234' is not a phone number (the area code is missing)"),
    (with_(users=[{"phone": "+15551234567", "role": "owner"}]), "role = 'owner' is not a role"),
    (with_(history={"max_messages": 0}), "[history] max_messages = 0 must be greater than 0"),
    (with_(confirmation={"ttl_seconds": -5}), "ttl_seconds = -5 must be greater than 0"),
    (with_(llm={"max_retries": -1}), "max_retries = -1 must be 0 or more"),
    (with_(llm={"max_reply_tokens": 0}), "[llm] max_reply_tokens = 0 must be greater than 0"),
    (with_(llm={"max_reply_tokens": 10}), "max_reply_tokens = 10 is too few for a tool call or "
                                          "an SMS reply; use at least 64"),
    (with_(server={"drain_seconds": 60}), "[server] drain_seconds = 60 must be below 45"),
    (with_(server={"drain_seconds": 0}), "[server] drain_seconds = 0.0 must be greater than 0"),
    (with_(server={"connection_limit": 0}), "[server] connection_limit = 0 must be greater"),
    (with_(server={"channel_timeout_seconds": -1}), "channel_timeout_seconds = -1.0 must be"),
    (with_(histroy={"max_messages": 5}), "unknown section [histroy]"),
    (with_(history={"max_mesages": 5}), "[history] max_mesages is not a known key"),
    (with_(server={"port": "8080"}), "[server] port = '8080' must be a whole number"),
    (with_(sms={"unknown_senders": "shout"}), "unknown_senders = 'shout' is not allowed"),
    (with_(sonarr={"url": "http://localhost:8989"}), "[sonarr] api_key is required"),
    (with_(radarr={"api_key": "k"}), "[radarr] url is required"),
])
def test_each_problem_is_one_line_naming_file_key_value_and_fix(raw, needle):
    problems = problems_of(raw)
    line = next((p for p in problems if needle in p), None)
    assert line is not None, problems
    assert line.startswith("cfg.toml:")


def test_every_problem_is_reported_at_once():
    raw = with_(history={"max_messages": 0, "fetch_limit": -1}, bogus={})
    assert len(problems_of(raw)) == 3


def test_secret_values_are_never_echoed():
    problems = problems_of(with_(llm={"api_key": 12345}))
    assert "12345" not in "\n".join(problems)
    problems = problems_of(MINIMAL, {"MEDIABOT_TWILIO_AUTH_TOKEN": "x",
                                     "MEDIABOT_LLM_API_KEY_": "s3cret"})
    assert "s3cret" not in "\n".join(problems)


def test_chat_needs_no_twilio():
    config = parse_config({"server": MINIMAL["server"]}, environ={})
    assert config.twilio.account_sid == ""


def test_path_resolution_order(tmp_path):
    assert str(resolve_path("given.toml", {"MEDIABOT_CONFIG": "env.toml"})) == "given.toml"
    assert str(resolve_path(None, {"MEDIABOT_CONFIG": "env.toml"})) == "env.toml"
    assert str(resolve_path(None, {})) == "config.toml"


def test_missing_file_and_bad_toml_are_clear(tmp_path):
    with pytest.raises(ConfigError, match=r"no such file; copy config\.example\.toml"):
        load_config(tmp_path / "nope.toml", environ={})
    bad = tmp_path / "bad.toml"
    bad.write_text("[server\npublic_url = 1")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad, environ={})


def test_users_are_normalised():
    config = parse_config(with_(users=[{"phone": "+15551234567", "name": " Alex "}]), environ={})
    assert config.users[0].name == "Alex" and config.users[0].role == "member"


def test_systemd_credentials_are_read_like_environment_overrides(tmp_path):
    creds = tmp_path / "creds"
    creds.mkdir()
    (creds / "MEDIABOT_LLM_API_KEY").write_text("sk-from-credential\n")
    (creds / "MEDIABOT_TWILIO_AUTH_TOKEN").write_text("tok-cred")
    config_file = write_config(tmp_path, server={"public_url": "https://sms.example.com"},
                               twilio={"account_sid": "AC1", "from_number": "+15550001111"})
    environ = {"CREDENTIALS_DIRECTORY": str(creds), "MEDIABOT_TWILIO_AUTH_TOKEN": "tok-env"}
    config = load_config(config_file, environ=environ)
    assert config.llm.api_key == "sk-from-credential"
    assert config.twilio.auth_token == "tok-env", "the environment wins over a credential"


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
    assert parse_config(with_(history={"max_messages": 30, "fetch_limit": 30}), environ={})


FILE_BASE = ('[server]\npublic_url = "https://sms.example.com"\n'
             '[twilio]\naccount_sid = "AC1"\nfrom_number = "+15550001111"\n')


def test_secrets_are_read_from_the_files_the_config_or_environment_names(tmp_path):
    (tmp_path / "secrets").mkdir()
    for name, secret in [("twilio", "tok-file"), ("llm", "sk-file"), ("sonarr", "sonarr-file"),
                         ("radarr", "radarr-file")]:
        (tmp_path / "secrets" / name).write_text(secret + "\n")
    config_file = tmp_path / "config.toml"
    config_file.write_text(FILE_BASE.replace('account_sid = "AC1"\n', 'account_sid = "AC1"\n'
                                             'auth_token_file = "secrets/twilio"\n')
                           + '[llm]\napi_key_file = "secrets/llm"\n'
                           + '[sonarr]\nurl = "http://sonarr:8989"\n'
                           + '[radarr]\nurl = "http://radarr:7878"\n'
                           + f'api_key_file = "{tmp_path / "nowhere"}"\n')
    environ = {"MEDIABOT_SONARR_API_KEY_FILE": str(tmp_path / "secrets" / "sonarr"),
               "MEDIABOT_RADARR_API_KEY_FILE": str(tmp_path / "secrets" / "radarr")}
    config = load_config(config_file, environ=environ)
    assert config.twilio.auth_token == "tok-file", "a relative path is beside the config file"
    assert config.llm.api_key == "sk-file"
    assert config.sonarr.api_key == "sonarr-file"
    assert config.radarr.api_key == "radarr-file", "the environment's file beats the config's"
    config = load_config(config_file, environ={**environ, "MEDIABOT_TWILIO_AUTH_TOKEN": "env"})
    assert config.twilio.auth_token == "env", "a secret in the environment beats a file"


def test_operator_commands_read_the_secret_files_the_daemon_reads(tmp_path):
    from click.testing import CliRunner

    from mediabot.cli import main

    (tmp_path / "token").write_text("tok")
    path = tmp_path / "config.toml"
    path.write_text(FILE_BASE + 'auth_token_file = "token"\n'
                    '[[users]]\nphone = "+15551234567"\nname = "Alex"\nrole = "admin"\n')
    result = CliRunner().invoke(main, ["users", "list", "--config", str(path)], env={})
    assert result.exit_code == 0, result.output
    assert "Alex" in result.output
    (tmp_path / "token").write_text("")
    result = CliRunner().invoke(main, ["users", "list", "--config", str(path)])
    assert result.exit_code == 2
    assert result.output == (f"config error: {path}: [twilio] auth_token_file = "
                             f"'{tmp_path / 'token'}': the file is empty; put the auth_token "
                             "in it\n")


@pytest.mark.parametrize("table,environ,expected", [
    ({"api_key_file": "{missing}"}, {},
     "cfg.toml: [llm] api_key_file = '{missing}': cannot read it (No such file or directory); "
     "check the path, and that the user mediabot runs as may read the file"),
    ({"api_key_file": "{folder}"}, {},
     "cfg.toml: [llm] api_key_file = '{folder}': cannot read it (Is a directory); check the "
     "path, and that the user mediabot runs as may read the file"),
    ({"api_key_file": "{empty}"}, {},
     "cfg.toml: [llm] api_key_file = '{empty}': the file is empty; put the api_key in it"),
    ({}, {"MEDIABOT_LLM_API_KEY_FILE": "{empty}"},
     "environment: MEDIABOT_LLM_API_KEY_FILE = '{empty}': the file is empty; put the api_key "
     "in it"),
    ({"api_key_file": "{secret}", "api_key": "s3cret"}, {},
     "cfg.toml: [llm] api_key_file and [llm] api_key are both set; keep one (the file for a "
     "container secret, the key otherwise)"),
    ({}, {"MEDIABOT_LLM_API_KEY_FILE": "{secret}", "MEDIABOT_LLM_API_KEY": "s3cret"},
     "environment: MEDIABOT_LLM_API_KEY_FILE and MEDIABOT_LLM_API_KEY are both set; keep one "
     "(the file for a container secret, the key otherwise)"),
    ({"api_key_file": ""}, {},
     "cfg.toml: [llm] api_key_file = '' must be the path of a file holding api_key"),
])
def test_a_secret_file_that_cannot_serve_is_one_problem_naming_key_and_fix(
        tmp_path, table, environ, expected):
    places = {"missing": tmp_path / "missing", "folder": tmp_path, "empty": tmp_path / "empty",
              "secret": tmp_path / "secret"}
    places["empty"].write_text("\n")
    places["secret"].write_text("s3cret")
    fill = {k: str(v) for k, v in places.items()}
    table = {k: v.format(**fill) for k, v in table.items()}
    environ = {k: v.format(**fill) for k, v in environ.items()}
    problems = problems_of(with_(llm=table), environ)
    assert problems == [expected.format(**fill)]
    assert "s3cret" not in "\n".join(problems)


def test_file_keys_exist_only_for_secrets():
    problems = problems_of(with_(llm={"model_file": "/x"}), {"MEDIABOT_LLM_BASE_URL_FILE": "/x"})
    assert any("[llm] model_file is not a known key" in p for p in problems)
    assert any("MEDIABOT_LLM_BASE_URL_FILE is not a known setting" in p for p in problems)
