"""`mediabot chat`: the real engine in a terminal, driven through standard input."""

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from mediabot.cli import main
from mediabot.store import db
from tests.conftest import ADMIN
from tests.support import conversation, person_part, unstamped, write_config

pytestmark = pytest.mark.e2e   # starts processes: `pytest -m "not e2e"` skips it


def chat_config(tmp_path, llm_url):
    return write_config(tmp_path, server={"public_url": "https://sms.example.com"},
                        database={"path": tmp_path / "chat.db"},
                        llm={"base_url": f"{llm_url}/v1", "api_key": "sk-test",
                             "timeout_seconds": 5, "max_retries": 0},
                        users=[{"phone": ADMIN, "name": "Alex", "role": "admin"}])


def chat(config, stdin, *args):
    return subprocess.run([sys.executable, "-m", "mediabot.cli", "chat", "--config", str(config),
                           *args], input=stdin, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "MEDIABOT_CONFIG": ""})


def test_chat_answers_each_line_with_memory_and_no_log_lines(tmp_path, fake_llm):
    config = chat_config(tmp_path, fake_llm.url)
    fake_llm.enqueue_text("Noted, you love Alien.")
    fake_llm.enqueue_text("Your favourite is Alien.")
    result = chat(config, "I love Alien\n\nwhat do I love?\n", "--as", "(555) 123-0001")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["bot> Noted, you love Alien.",
                                          "bot> Your favourite is Alien."]
    assert result.stderr == "", "INFO lines (prompt built, turn ...) stay out of the dialogue"
    second = conversation(fake_llm.requests[1])
    assert any("I love Alien" == unstamped(m["content"]) for m in second if m["role"] == "user")
    assert "Alex" in person_part(fake_llm.requests[1]), "talking as the configured user"


def chat_in_process(config, stdin, *args):
    """The same command through click's runner: no interpreter start-up per test (the
    subprocess test above covers the real process and its stderr)."""
    result = CliRunner().invoke(main, ["chat", "--config", str(config), *args], input=stdin)
    db.database.close()
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result


def test_chat_needs_no_twilio_and_handles_keywords(tmp_path, fake_llm):
    config = chat_config(tmp_path, fake_llm.url)
    result = chat_in_process(config, "help\n")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("bot> ") and "RESET" in result.stdout
    assert fake_llm.requests == []


def test_chat_rejects_a_bad_phone(tmp_path, fake_llm):
    config = chat_config(tmp_path, fake_llm.url)
    result = chat_in_process(config, "", "--as", "not-a-phone")
    assert result.exit_code == 2
    assert "Invalid value for --as: 'not-a-phone' is not a phone number" in result.output
    assert "E.164" in result.output and "Traceback" not in result.output


def test_chat_as_a_number_that_is_nobodys_is_refused_and_adds_no_one(tmp_path, fake_llm):
    config = chat_config(tmp_path, fake_llm.url)
    result = chat_in_process(config, "hi\n", "--as", "555 999 8888")
    assert result.exit_code == 1
    assert ("+15559998888 is not a user, so there is nobody to chat as; add them first with "
            "`mediabot users add +15559998888 --name NAME`") in result.output
    assert fake_llm.requests == []
    listing = CliRunner().invoke(main, ["users", "list", "--config", str(config)]).output
    db.database.close()
    assert "+15559998888" not in listing and ADMIN in listing
