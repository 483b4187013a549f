"""`mediabot chat` in process (click's runner): the real engine in a terminal, driven through
standard input."""

from click.testing import CliRunner

from mediabot.cli import main
from mediabot.store import db
from tests.support.config_files import chat_config
from tests.support.household import ADMIN


def chat_in_process(config, stdin, *args):
    """The same command through click's runner: no interpreter start-up per test (the
    one in tests/e2e/test_chat.py covers the real process and its stderr)."""
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
