"""Reading the config (``config/load.py``): the file, environment overrides (converted to the
setting's type, beating the file), systemd credentials and secret files, and which path is
read."""

import dataclasses
from pathlib import Path

import pytest

from mediabot.config import ConfigError, load_config, parse_config, resolve_path, twilio_needs
from mediabot.config.schema import SECTIONS
from tests.support.config_files import MINIMAL, problems_of, raw_with, write_config

ROOT = Path(__file__).resolve().parents[2]
SECRETS = {
    "MEDIABOT_TWILIO_AUTH_TOKEN": "tok",
    "MEDIABOT_SONARR_API_KEY": "sk",
    "MEDIABOT_RADARR_API_KEY": "rk",
}


def test_example_file_loads_with_secrets_from_the_environment():
    config = load_config(ROOT / "config.example.toml", environ=SECRETS)
    assert config.sonarr.url == "http://localhost:8989"
    assert config.radarr.api_key == "rk"
    assert config.users[0].role == "admin"


@pytest.mark.parametrize("var,value,get,expected", [
    ("MEDIABOT_LLM_API_KEY", "sk-env", lambda c: c.llm.api_key, "sk-env"),
    ("MEDIABOT_HISTORY_MAX_MESSAGES", "12", lambda c: c.history.max_messages, 12),
    ("MEDIABOT_HISTORY_SUMMARIES", "true", lambda c: c.history.summaries, True),
    ("MEDIABOT_LLM_READ_AHEAD", "false", lambda c: c.llm.read_ahead, False),
    ("MEDIABOT_LLM_TIMEOUT_SECONDS", "7.5", lambda c: c.llm.timeout_seconds, 7.5),
    ("MEDIABOT_SONARR_URL", "http://nas:8989", lambda c: c.sonarr.url, "http://nas:8989"),
])
def test_environment_overrides_with_type_conversion(var, value, get, expected):
    environ = {"MEDIABOT_SONARR_URL": "http://localhost:8989", "MEDIABOT_SONARR_API_KEY": "k",
               var: value}
    assert get(parse_config(MINIMAL, environ=environ)) == expected


def test_read_ahead_must_be_true_or_false():
    with pytest.raises(ConfigError, match=r"\[llm\] read_ahead.*true or false"):
        parse_config(raw_with(llm={"read_ahead": "yes"}), environ={})


def test_environment_beats_the_file():
    raw = raw_with(llm={"model": "from-file"})
    assert parse_config(raw, environ={"MEDIABOT_LLM_MODEL": "from-env"}).llm.model == "from-env"


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


ENV_ONLY = {"MEDIABOT_SERVER_PUBLIC_URL": "https://sms.example.com",
            "MEDIABOT_TWILIO_ACCOUNT_SID": "AC123", "MEDIABOT_TWILIO_AUTH_TOKEN": "tok",
            "MEDIABOT_TWILIO_FROM_NUMBER": "+15550001111"}


def test_without_a_file_the_environment_alone_is_the_config(tmp_path):
    """A container with nothing mounted at /config: $MEDIABOT_CONFIG names a file that is
    not there, and the MEDIABOT_* variables hold every required setting."""
    missing = tmp_path / "config" / "config.toml"
    config = load_config(environ={**ENV_ONLY, "MEDIABOT_CONFIG": str(missing)})
    assert (config.server.public_url, config.twilio.from_number) == (
        "https://sms.example.com", "+15550001111")
    assert config.database.path == str(tmp_path / "config" / "mediabot.db")


def test_without_a_file_the_missing_settings_follow_the_missing_file(tmp_path):
    missing = tmp_path / "config.toml"
    partial = {k: v for k, v in ENV_ONLY.items() if "TWILIO" not in k}
    with pytest.raises(ConfigError) as info:
        load_config(environ={**partial, "MEDIABOT_CONFIG": str(missing)}, needs=(twilio_needs,))
    first, *rest = info.value.problems
    assert first.startswith(f"{missing}: no such file; copy config.example.toml")
    assert any("[twilio] account_sid is required" in line for line in rest), rest
    with pytest.raises(ConfigError) as info:
        load_config(environ={"MEDIABOT_CONFIG": str(missing)})
    assert len(info.value.problems) == 1, "no variables set: only the missing file"


def test_an_empty_variable_is_not_set(tmp_path):
    """A container template passes every variable it names, set or empty (Unraid does):
    an empty MEDIABOT_SEERR_URL is no [seerr] to refuse, an empty override leaves the
    file's value standing, and empty variables alone are no config."""
    missing = tmp_path / "nothing" / "config.toml"
    empty = {"MEDIABOT_SEERR_URL": "", "MEDIABOT_SEERR_API_KEY": " ",
             "MEDIABOT_SMS_LANGUAGE": ""}
    config = load_config(environ={**ENV_ONLY, **empty, "MEDIABOT_CONFIG": str(missing)})
    assert config.seerr is None and config.sms.language == "en"
    file = write_config(tmp_path, **raw_with(sms={"language": "de"}))
    assert load_config(file, environ={"MEDIABOT_SMS_LANGUAGE": ""}).sms.language == "de"
    with pytest.raises(ConfigError) as info:
        load_config(environ={**empty, "MEDIABOT_CONFIG": str(missing)})
    assert len(info.value.problems) == 1, "only empty variables: only the missing file"


def test_a_file_named_by_config_must_be_there(tmp_path):
    with pytest.raises(ConfigError, match=r"no such file"):
        load_config(tmp_path / "nope.toml", environ=ENV_ONLY)


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
    problems = problems_of(raw_with(llm=table), environ)
    assert problems == [expected.format(**fill)]
    assert "s3cret" not in "\n".join(problems)


def test_file_keys_exist_only_for_secrets():
    problems = problems_of(raw_with(llm={"model_file": "/x"}), {"MEDIABOT_LLM_BASE_URL_FILE": "/x"})
    assert any("[llm] model_file is not a known key" in p for p in problems)
    assert any("MEDIABOT_LLM_BASE_URL_FILE is not a known setting" in p for p in problems)


NUMERIC = [  # (section, key, default): every float key of the config
    ("server", "channel_timeout_seconds", 30.0), ("server", "drain_seconds", 20.0),
    ("twilio", "timeout_seconds", 10.0), ("llm", "timeout_seconds", 120.0),
    ("llm", "temperature", 0.3), ("sonarr", "timeout_seconds", 10.0),
    ("radarr", "timeout_seconds", 10.0), ("seerr", "timeout_seconds", 10.0),
    ("sms_gateway", "poll_seconds", 3.0), ("sms_gateway", "timeout_seconds", 10.0),
]


def test_every_float_key_of_the_schema_is_in_the_table():
    floats = {(name, f.name) for name, cls in SECTIONS.items()
              for f in dataclasses.fields(cls) if f.type in (float, "float")}
    assert floats == {(section, key) for section, key, _ in NUMERIC}


@pytest.mark.parametrize("section,key,default", NUMERIC)
@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_a_non_finite_number_in_the_file_is_refused_with_the_fix(section, key, default, value):
    problems = problems_of(raw_with(**{section: {key: value}}))
    assert f"cfg.toml: [{section}] {key} = {value!r} must be a finite number, not inf or nan; " \
           f"write a plain number such as {default}" in problems


@pytest.mark.parametrize("section,key,default", NUMERIC)
@pytest.mark.parametrize("text", ["inf", "-Infinity", "nan", "1e999"])
def test_a_non_finite_number_in_the_environment_is_refused_with_the_fix(section, key, default,
                                                                       text):
    var = f"MEDIABOT_{section.upper()}_{key.upper()}"
    problems = problems_of(raw_with(), {var: text})
    assert f"environment: {var} = {text!r}: expected a finite number, not {text}; write a " \
           f"plain number such as {default}" in problems


@pytest.mark.parametrize("var", ["MEDIABOT_LLM_MAX_TOOL_ROUNDS", "MEDIABOT_SERVER_PORT"])
def test_a_whole_number_key_refuses_inf_too(var):
    assert f"environment: {var} = 'inf': expected a whole number" in problems_of(raw_with(),
                                                                             {var: "inf"})


@pytest.mark.parametrize("written", ["\ufeffs3cret-key\n", "\ufeffs3cret-key\r\n",
                                     "  s3cret-key  \n\n", "\n\ufeff s3cret-key\t\n"])
def test_a_secret_file_loses_its_byte_order_mark_and_surrounding_whitespace(tmp_path, written):
    (tmp_path / "key").write_text(written, encoding="utf-8", newline="")
    raw = raw_with(llm={"api_key_file": str(tmp_path / "key")})
    config = parse_config(raw, source="cfg.toml", environ={})
    assert config.llm.api_key == "s3cret-key"
    credentials = tmp_path / "credentials"
    credentials.mkdir()
    (credentials / "MEDIABOT_LLM_API_KEY").write_text(written, encoding="utf-8", newline="")
    config = load_config(write_config(tmp_path, **MINIMAL),
                         environ={"CREDENTIALS_DIRECTORY": str(credentials)})
    assert config.llm.api_key == "s3cret-key", "a systemd credential is a secret file too"


def test_the_env_file_beside_the_config_may_start_with_a_byte_order_mark(tmp_path):
    (tmp_path / "env").write_text("\ufeffMEDIABOT_LLM_API_KEY=sk-beside\n", encoding="utf-8")
    config = load_config(write_config(tmp_path, **MINIMAL), environ={})
    assert config.llm.api_key == "sk-beside"


@pytest.mark.parametrize("secret,named", [
    ("s3cret\u00a0key", "U+00A0 NO-BREAK SPACE"), ("s3cret\u200bkey", "U+200B ZERO WIDTH SPACE"),
    ("s3cret\ufeffkey", "U+FEFF ZERO WIDTH NO-BREAK SPACE"),
    ("s3cret\x00key", "U+0000 a control character"), ("s3cret\nkey", "U+000A a control character"),
    ("s3crét-key", "U+00E9 LATIN SMALL LETTER E WITH ACUTE"),
])
def test_a_secret_headers_cannot_carry_is_refused_naming_the_variable_never_the_secret(
        tmp_path, secret, named):
    (tmp_path / "key").write_text(secret, encoding="utf-8", newline="")
    path = str(tmp_path / "key")
    problems = problems_of(raw_with(), {"MEDIABOT_SEERR_API_KEY_FILE": path})
    assert f"environment: MEDIABOT_SEERR_API_KEY_FILE = {path!r}: the api_key in it holds a " \
           f"character HTTP headers cannot carry ({named}); save the file again with the " \
           "api_key alone, as plain UTF-8 text" in problems
    problems += problems_of(raw_with(twilio={"auth_token": secret}), {})
    assert "cfg.toml: [twilio] auth_token: the auth_token holds a character HTTP headers " \
           f"cannot carry ({named}); set it again, copied as plain text" in problems
    problems += problems_of(raw_with(), {"MEDIABOT_LLM_API_KEY": secret})
    assert "environment: MEDIABOT_LLM_API_KEY: the api_key holds a character HTTP headers " \
           f"cannot carry ({named}); set it again, copied as plain text" in problems
    assert not any("s3cr" in problem for problem in problems)


def test_the_webhook_secret_only_comes_back_so_any_text_serves():
    """Sonarr sends it base64-encoded in Basic auth: "Café" travels (test_hooks)."""
    config = parse_config(raw_with(notifications={"webhook_secret": "Café-Lumon-Straße"}),
                          source="cfg.toml", environ={})
    assert config.notifications.webhook_secret == "Café-Lumon-Straße"
