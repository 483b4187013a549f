"""A config made of MEDIABOT_* variables alone (a container with no config.toml in /config):
what `mediabot check` says about it, and a fresh checkout with neither still told to copy
the example."""

import os

from click.testing import CliRunner

from mediabot.cli import main

ENV_ONLY = {"MEDIABOT_SERVER_PUBLIC_URL": "https://sms.home.test",
            "MEDIABOT_SERVER_TIMEZONE": "America/New_York",
            "MEDIABOT_TWILIO_ACCOUNT_SID": "AC1", "MEDIABOT_TWILIO_AUTH_TOKEN": "token-123456",
            "MEDIABOT_TWILIO_FROM_NUMBER": "+15557654321",
            "MEDIABOT_TWILIO_API_BASE_URL": "http://127.0.0.1:9",
            "MEDIABOT_LLM_BASE_URL": "http://127.0.0.1:9/v1", "MEDIABOT_LLM_TIMEOUT_SECONDS": "1",
            "MEDIABOT_LLM_MAX_RETRIES": "0"}


def test_check_says_there_is_no_file_and_the_variables_are_the_config(tmp_path):
    missing = tmp_path / "config" / "config.toml"
    env = {**ENV_ONLY, "MEDIABOT_CONFIG": str(missing),
           "MEDIABOT_DATABASE_PATH": str(tmp_path / "mediabot.db")}
    result = CliRunner().invoke(main, ["check"], env=env)
    assert (f"ok   config: no file at {missing}; the MEDIABOT_* variables are the config and "
            "are valid (0 users in [[users]]; times shown in America/New_York)\n"
            ) in result.output
    assert f"{missing} is valid" not in result.output


def test_with_no_file_and_no_variables_a_command_says_to_copy_the_example(tmp_path,
                                                                          monkeypatch):
    """A fresh checkout: nothing in the environment, no config.toml. The env-only path must
    not turn that into a config of defaults."""
    for name in [n for n in os.environ if n.startswith("MEDIABOT_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["users", "list"])
    assert result.exit_code == 2, result.output
    assert ("config.toml: no such file; copy config.example.toml to config.toml and fill in "
            "the required keys (or pass --config PATH)") in result.output
