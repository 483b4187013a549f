"""The checks that need no other server (``ops/local_checks.py``): the public URL and the
webhook secret, the database, the household's language and accents, the example's
placeholders, and the household's rules."""

import os
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from mediabot.cli import main
from mediabot.config import Config, ServerConfig
from mediabot.ops.local_checks import check_server
from tests.support.check import check_line, run_check, write_check_config

ROOT = Path(__file__).resolve().parents[2]


def test_http_public_url_and_no_webhook_secret_are_warnings_not_failures(tmp_path, servers):
    result = run_check(tmp_path, servers, **{"server.public_url": '"http://sms.example.com"',
                                             "notifications": None})
    assert result.exit_code == 0, result.output
    assert "public_url is http; Twilio needs https" in check_line(result, "server", "warn")
    assert "[notifications] webhook_secret" in check_line(result, "notifications", "warn")
    assert "warnings)" in result.output.splitlines()[-1]


def test_a_webhook_secret_sonarr_cannot_send_is_a_warning_that_does_not_show_it(tmp_path,
                                                                                  servers):
    result = run_check(tmp_path, servers,
                       **{"notifications.webhook_secret": '"hook-secret-\u0142\u00f3d\u017a"'})
    assert result.exit_code == 0, result.output
    warning = check_line(result, "notifications", "warn")
    assert "cannot send (they encode the password as ISO-8859-1)" in warning
    assert "hook-secret" not in result.output and "\u0142" not in result.output


@pytest.mark.parametrize("public_url", ["https://sms.example.com/",
                                        "https://sms.example.com/sms"])
def test_server_line_names_the_url_the_daemon_checks_signatures_against(public_url):
    config = Config(server=ServerConfig(public_url=public_url))
    [server] = check_server(config)
    assert server.text == "Twilio should post to https://sms.example.com/sms"


def test_missing_database_directory_fails(tmp_path, servers):
    result = run_check(tmp_path, servers,
                       **{"database.path": f'"{tmp_path / "nowhere" / "mediabot.db"}"'})
    assert result.exit_code == 1
    assert "does not exist" in check_line(result, "database", "FAIL")


def test_existing_database_is_written_and_rolled_back(tmp_path, servers):
    (tmp_path / "mediabot.db").write_bytes(b"")
    result = run_check(tmp_path, servers)
    assert "is writable" in check_line(result, "database", "ok")
    import sqlite3
    tables = sqlite3.connect(tmp_path / "mediabot.db").execute(
        "SELECT name FROM sqlite_master").fetchall()
    assert tables == []


def test_a_file_that_is_not_a_database_fails(tmp_path, servers):
    (tmp_path / "mediabot.db").write_text("not sqlite at all, " * 100)
    result = run_check(tmp_path, servers)
    assert result.exit_code == 1
    assert "not a database" in check_line(result, "database", "FAIL")


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write a read-only file")
def test_read_only_database_fails(tmp_path, servers):
    (tmp_path / "mediabot.db").write_bytes(b"")
    (tmp_path / "mediabot.db").chmod(0o444)
    result = run_check(tmp_path, servers)
    assert "fix its owner/permissions" in check_line(result, "database", "FAIL")


def test_the_households_language_and_accents_are_one_line(tmp_path, servers):
    result = run_check(tmp_path, servers, **{"sms.language": '"es"'})
    assert result.exit_code == 0, result.output
    assert check_line(result, "language", "ok") == (
        "ok   language: texts in Spanish (es); accents folded on SMS (á -> a, 160 characters "
        "a segment; the language's default; see [sms] accents)")


def test_a_member_speaking_another_language_is_named_with_their_accents(tmp_path, servers):
    path = write_check_config(tmp_path, servers["urls"], **{"sms.language": '"de"'})
    path.write_text(path.read_text() + '\n[[users]]\nphone = "+15552468001"\nname = "Ana"\n'
                    'language = "pt-BR"\n')
    result = CliRunner().invoke(main, ["check", "--config", str(path)])
    assert check_line(result, "language", "ok") == (
        "ok   language: texts in German (de); Ana in Portuguese (Brazil, pt-BR), accents kept; "
        "accents folded on SMS (á -> a, 160 characters a segment; the language's default; "
        "see [sms] accents)")


def test_a_chosen_accents_setting_is_named(tmp_path, servers):
    result = run_check(tmp_path, servers, **{"sms.accents": '"keep"'})
    assert check_line(result, "language", "ok") == (
        "ok   language: texts in English (en); accents kept on SMS (UCS-2, 70 characters a "
        "segment; [sms] accents)")


def test_the_examples_placeholders_are_flagged_with_the_fix(tmp_path, servers):
    """config.example.toml copied and only the secrets filled in: check must not say ok."""
    example = tomllib.loads((ROOT / "config.example.toml").read_text())
    result = run_check(tmp_path, servers, **{
        "server.public_url": f'"{example["server"]["public_url"]}"',
        "twilio.account_sid": f'"{example["twilio"]["account_sid"]}"',
        "twilio.from_number": f'"{example["twilio"]["from_number"]}"'})
    assert result.exit_code == 1
    fails = check_line(result, "config", "FAIL").splitlines()
    assert fails == [
        "FAIL config: [server] public_url is still the example's https://sms.example.com, which "
        "Twilio cannot reach you at — set it to your own https address",
        "FAIL config: [twilio] account_sid is still the example's ACxxx... — copy your Account "
        "SID from the Twilio console (Account info)",
        "FAIL config: [twilio] from_number is still the example's +15550001111 — set it to "
        "your Twilio number"]


def test_the_examples_user_is_a_warning(tmp_path, servers):
    example = tomllib.loads((ROOT / "config.example.toml").read_text())["users"][0]
    path = write_check_config(tmp_path, servers["urls"])
    path.write_text(path.read_text().replace("+15552468000", example["phone"]))
    result = CliRunner().invoke(main, ["check", "--config", str(path)])
    assert result.exit_code == 0, result.output
    assert check_line(result, "config", "warn") == (
        f"warn config: [[users]] still holds the example's {example['name']} "
        f"({example['phone']}) as admin — replace it with a real person's phone and name")


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
