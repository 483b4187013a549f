"""The operator commands: ``users``, ``history`` and config errors, through click's CliRunner.

Each test writes a real config file and a real SQLite database in a temp dir. A config
user is in the database only after the daemon has started (``open_storage``); the tests
that need one start that way.
"""

import datetime as dt
import re

import pytest
from click.testing import CliRunner

from mediabot.app import open_storage
from mediabot.cli import main
from mediabot.config import load_config
from mediabot.conversation import confirmations as confirm
from mediabot.conversation import history
from mediabot.store import db
from tests.support.config_files import write_config

ALEX = "+15551234567"      # admin in [[users]]
BO = "+15552223333"


@pytest.fixture
def config_path(tmp_path):
    """A config without [twilio]: the users/history commands must not need it."""
    path = write_config(tmp_path, server={"public_url": "https://sms.example.com"},
                        database={"path": tmp_path / "mediabot.db"},
                        users=[{"phone": ALEX, "name": "Alex", "role": "admin"}])
    yield path
    db.database.close()


@pytest.fixture
def started(config_path):
    """The database as the daemon leaves it after starting once: Alex is in it."""
    open_storage(load_config(config_path))
    return config_path


def run(config_path, *args, input=None, env=None):
    result = CliRunner(env=env).invoke(main, [*args, "--config", str(config_path)], input=input)
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def add_messages(phone: str) -> int:
    user = db.User.get(db.User.phone == phone)
    history.save_message(user.id, {"role": "user", "content": "can you get dune?"})
    history.save_message(user.id, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "search_media", "arguments": '{"query": "dune"}'}}]})
    history.save_message(user.id, {"role": "tool", "tool_call_id": "call_1",
                                   "name": "search_media", "content": '{"results": []}' * 50})
    history.save_message(user.id, {"role": "assistant", "content": "Which Dune: 1984 or 2021?"})
    return user.id


# ------------------------------------------------------------------ users

def test_users_list_marks_config_users_not_yet_applied(config_path):
    result = run(config_path, "users", "list")
    assert result.exit_code == 0
    assert result.output.splitlines()[0].split() == ["PHONE", "NAME", "ROLE", "CHANNEL",
                                                     "OPT-OUT", "SOURCE"]
    assert re.search(rf"{re.escape(ALEX)}\s+Alex\s+admin\s+sms\s+-\s+"
                     r"\(config; added on next start\)", result.output)


def test_users_add_normalises_the_phone_and_lists_it(started):
    result = run(started, "users", "add", "(555) 222-3333", "--name", "Bo")
    assert result.exit_code == 0
    assert f"added {BO} (Bo) as member" in result.output
    listing = run(started, "users", "list").output
    assert re.search(rf"{re.escape(ALEX)}\s+Alex\s+admin\s+sms\s+-\s+\(config\)$", listing,
                     re.M)
    assert re.search(rf"{re.escape(BO)}\s+Bo\s+member\s+sms\s+-$", listing, re.M)


def test_users_add_admin(started):
    assert run(started, "users", "add", BO, "--name", "Bo", "--role", "admin").exit_code == 0
    assert db.User.get(db.User.phone == BO).role == "admin"


def test_users_add_twice_is_an_error(started):
    run(started, "users", "add", BO, "--name", "Bo")
    result = run(started, "users", "add", BO, "--name", "Bo again")
    assert result.exit_code == 1
    assert f"{BO} is already a user" in result.output


@pytest.mark.parametrize("args, message", [
    (["users", "add", "12345", "--name", "X"],
     "Invalid value for PHONE: '12345' is not a phone number (too short); write it as + "
     "country code and number (E.164, e.g. +15551234567), or as dialled in US "
     "([sms] default_region)"),
    (["users", "add", "call me", "--name", "X"], "'call me' is not a phone number (the "
                                                 "string supplied did not seem to be a phone "
                                                 "number)"),
    (["users", "add", BO, "--name", "X", "--role", "owner"], "'owner' is not one of"),
    (["users", "add", BO], "Missing option '--name'"),
    (["users", "role", BO, "boss"], "'boss' is not one of"),
    (["users", "remove", "+1"], "not a phone number"),
    (["history", "show", "abc"], "not a phone number"),
    (["history", "show", BO, "--limit", "0"], "--limit"),
])
def test_invalid_input_is_a_usage_error(started, args, message):
    result = run(started, *args)
    assert result.exit_code == 2
    assert message in result.output


@pytest.mark.parametrize("args", [
    ["users", "remove", BO], ["users", "role", BO, "admin"], ["history", "show", BO],
    ["history", "clear", BO, "--yes"],
])
def test_unknown_user_is_an_error_naming_the_phone(started, args):
    result = run(started, *args)
    assert result.exit_code == 1
    assert f"no user with phone {BO}; see `mediabot users list`" in result.output


def test_config_user_not_in_database_yet_points_at_the_file(config_path):
    result = run(config_path, "users", "role", ALEX, "member")
    assert result.exit_code == 1
    assert "is in [[users]]" in result.output and "not in the database yet" in result.output


def test_users_role_changes_the_role(started):
    run(started, "users", "add", BO, "--name", "Bo")
    result = run(started, "users", "role", "555.222.3333", "admin")
    assert result.exit_code == 0
    assert f"{BO} (Bo) is now admin (was member)" in result.stdout
    assert result.stderr == ""
    assert db.User.get(db.User.phone == BO).role == "admin"


def test_re_roling_a_config_user_warns_that_the_file_wins(started):
    result = run(started, "users", "role", ALEX, "member")
    assert result.exit_code == 0
    assert "is now member (was admin)" in result.stdout
    assert "in [[users]] of" in result.stderr and "sets the role back to admin" in result.stderr
    listing = run(started, "users", "list").output
    assert "(config; role back to admin on next start)" in listing


def test_users_remove_deletes_the_user_and_their_messages(started):
    run(started, "users", "add", BO, "--name", "Bo")
    user_id = add_messages(BO)
    result = run(started, "users", "remove", BO, input="y\n")
    assert result.exit_code == 0
    assert f"removed {BO} (Bo) and 4 stored messages" in result.output
    assert db.User.get_or_none(db.User.phone == BO) is None
    assert db.Message.select().where(db.Message.user == user_id).count() == 0
    assert BO not in run(started, "users", "list").output


def test_removing_a_config_user_warns_it_comes_back(started):
    result = run(started, "users", "remove", ALEX, "--yes")
    assert result.exit_code == 0
    assert "which adds it back when mediabot next starts" in result.stderr
    assert "(config; added on next start)" in run(started, "users", "list").output


def test_users_list_shows_opted_out(started):
    db.User.update(opted_out=True).where(db.User.phone == ALEX).execute()
    assert re.search(r"admin\s+sms\s+opted out\s+\(config\)",
                     run(started, "users", "list").output)


def test_users_list_with_no_users_says_how_to_add_one(tmp_path):
    path = write_config(tmp_path, server={"public_url": "https://x.example"},
                        database={"path": tmp_path / "m.db"})
    result = run(path, "users", "list")
    assert result.exit_code == 0 and "mediabot users add PHONE --name NAME" in result.output


@pytest.mark.parametrize("args", [["users", "--config", "{path}", "list"],
                                  ["history", "--config", "{path}", "show", ALEX]])
def test_config_is_accepted_before_the_subcommand_too(started, args):
    args = [arg.format(path=started) for arg in args]
    result = CliRunner(env={"MEDIABOT_CONFIG": ""}).invoke(main, args)
    assert result.exit_code == 0, result.output
    assert ALEX in result.output


def test_config_comes_from_mediabot_config_without_option(started):
    result = CliRunner(env={"MEDIABOT_CONFIG": str(started)}).invoke(main, ["users", "list"])
    assert result.exit_code == 0 and ALEX in result.output


# ------------------------------------------------------------------ history

def test_history_show_prints_role_time_content_and_tool_calls(started):
    add_messages(ALEX)
    result = run(started, "history", "show", ALEX)
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert len(lines) == 4
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d"
    assert re.match(rf"{stamp}  user\s+can you get dune\?$", lines[0])
    assert re.match(rf'{stamp}  assistant\s+\[called search_media {{"query": "dune"}}\]$',
                    lines[1])
    assert re.match(rf'{stamp}  tool\s+\(search_media\) {{"results": \[\]}}', lines[2])
    assert lines[2].endswith("...") and len(lines[2]) < 260
    assert lines[3].endswith("Which Dune: 1984 or 2021?")


def test_history_show_limit_keeps_the_newest(started):
    add_messages(ALEX)
    lines = run(started, "history", "show", ALEX, "--limit", "2").output.splitlines()
    assert len(lines) == 2 and lines[-1].endswith("1984 or 2021?")


def test_history_show_uses_local_time(started):
    user_id = add_messages(ALEX)
    stored = dt.datetime(2024, 3, 1, 12, 30)
    db.Message.update(created_at=stored).where(db.Message.user == user_id).execute()
    local = stored.replace(tzinfo=dt.UTC).astimezone()
    assert f"{local:%Y-%m-%d %H:%M}" in run(started, "history", "show", ALEX).output


def test_history_show_escapes_control_characters_so_each_message_is_one_line(started):
    """A joined burst carries newlines, a hostile text terminal escapes (clear the screen,
    recolour, rewrite the title) or a right-to-left override: shown, never obeyed."""
    user = db.User.get(db.User.phone == ALEX)
    bodies = ["get dune\nthe 2021 one", "\x1b[2J\x1b[31mred\x1b]0;owned\x07\rover",
              "tab\there \u202etxt.exe"]
    for body in bodies:
        history.save_message(user.id, {"role": "user", "content": body})
    history.save_message(user.id, {"role": "tool", "tool_call_id": "call_1",
                                   "name": "search_media", "content": '{"error": "a\x1bb"}'})
    lines = run(started, "history", "show", ALEX).output.splitlines()
    assert len(lines) == 4
    assert all(re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d  (user|tool) ", line) for line in lines)
    assert lines[0].endswith(r"get dune\nthe 2021 one")
    assert lines[1].endswith(r"\x1b[2J\x1b[31mred\x1b]0;owned\x07\rover")
    assert lines[2].endswith(r"tab\there \u202etxt.exe")
    assert lines[3].endswith(r'(search_media) {"error": "a\x1bb"}')
    assert not any(ch in "\n".join(lines) for ch in "\x1b\x07\r\t\u202e")


def test_history_show_when_empty(started):
    result = run(started, "history", "show", ALEX)
    assert result.exit_code == 0 and f"no messages stored for {ALEX} (Alex)" in result.output


def test_history_clear_asks_first_and_keeps_everything_on_no(started):
    add_messages(ALEX)
    result = run(started, "history", "clear", ALEX, input="n\n")
    assert result.exit_code == 0
    assert result.output == f"Delete all 4 stored messages of {ALEX}? [y/N]: n\nNothing cleared.\n"
    assert db.Message.select().count() == 4


def test_history_clear_on_yes_forgets_like_reset(started):
    user_id = add_messages(ALEX)
    db.User.update(summary="Alex likes Dune", summary_through=3).where(
        db.User.id == user_id).execute()
    confirm.create_pending(user_id, "remove_media", {"kind": "movie", "id": 1}, "Remove Dune?",
                           now=db.utcnow(), ttl_seconds=300)
    result = run(started, "history", "clear", ALEX, input="y\n")
    assert result.exit_code == 0 and "cleared 4 messages" in result.output
    assert db.Message.select().count() == 0
    assert db.PendingAction.select().count() == 0
    assert db.User.get_by_id(user_id).summary is None


def test_history_clear_yes_flag_does_not_ask(started):
    add_messages(ALEX)
    result = run(started, "history", "clear", ALEX, "--yes")
    assert result.exit_code == 0 and "Delete all" not in result.output
    assert db.Message.select().count() == 0


# ------------------------------------------------------------------ config errors

COMMANDS = [["check"], ["serve"], ["chat"], ["users", "list"],
            ["users", "add", BO, "--name", "Bo"], ["users", "remove", BO],
            ["users", "role", BO, "admin"], ["history", "show", BO],
            ["history", "clear", BO, "--yes"]]


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_config_errors_exit_2_with_one_line_each(tmp_path, args):
    path = write_config(tmp_path, server={"public_url": "sms.example.com"},
                        history={"max_messages": 0}, llm={"modle": "x"})
    result = run(path, *args)
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("config error:")]
    assert len(errors) >= 3
    assert any(f"{path}: [history] max_messages = 0 must be greater than 0" in e for e in errors)
    assert any("[llm] modle is not a known key" in e for e in errors)
    assert any("public_url = 'sms.example.com' is not an http(s) URL" in e for e in errors)


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_a_language_with_no_catalog_exits_2_naming_those_there_are(tmp_path, args):
    path = write_config(tmp_path, server={"public_url": "https://sms.example.com"},
                        database={"path": tmp_path / "mediabot.db"},
                        twilio={"account_sid": "AC1", "auth_token": "token-123456",
                                "from_number": "+15550001111"},
                        llm={"base_url": "http://127.0.0.1:9/v1"},
                        sms={"language": "it"})
    result = run(path, *args)
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        f"config error: {path}: [sms] language = 'it' has no catalog; mediabot speaks en, es, "
        "de, fr, pt, nl (a region may follow, as in \"es-MX\" or \"pt-BR\")"]


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_missing_config_file_exits_2_with_the_fix(tmp_path, args):
    result = run(tmp_path / "nope.toml", *args)
    assert result.exit_code == 2
    assert f"{tmp_path / 'nope.toml'}: no such file; copy config.example.toml" in result.output


def test_invalid_toml_exits_2(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("[server\npublic_url = ")
    result = run(path, "users", "list")
    assert result.exit_code == 2 and "not valid TOML" in result.output


def test_bad_environment_override_exits_2(config_path):
    result = run(config_path, "users", "list", env={"MEDIABOT_HISTORY_MAX_MESSAGES": "lots"})
    assert result.exit_code == 2
    assert "MEDIABOT_HISTORY_MAX_MESSAGES = 'lots': expected a whole number" in result.output


@pytest.mark.parametrize("args", [["users", "list"], ["history", "show", "+15551234567"],
                                  ["chat"]])
def test_an_unopenable_database_is_one_line_not_a_traceback(tmp_path, args):
    config = write_config(tmp_path, server={"public_url": "https://sms.example.com"},
                          database={"path": tmp_path / "missing" / "dir" / "m.db"})
    result = CliRunner().invoke(main, [*args, "--config", str(config)], input="")
    assert result.exit_code == 2, result.output
    assert "cannot open the database" in result.output and "[database] path" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_relative_database_path_is_beside_the_config_not_the_current_directory(
        tmp_path, monkeypatch):
    elsewhere = tmp_path / "etc"
    elsewhere.mkdir()
    config = write_config(elsewhere, server={"public_url": "https://sms.example.com"},
                          database={"path": "mediabot.db"})
    for cwd in ("first", "second"):
        (tmp_path / cwd).mkdir()
    monkeypatch.chdir(tmp_path / "first")
    added = run(config, "users", "add", BO, "--name", "Bo")
    assert added.exit_code == 0 and f"added {BO} (Bo)" in added.output
    monkeypatch.chdir(tmp_path / "second")
    assert re.search(rf"^{re.escape(BO)}\s+Bo\s+member", run(config, "users", "list").output,
                     re.M)
    open_storage(load_config(config))    # as the daemon starts
    assert db.User.get_or_none(db.User.phone == BO) is not None
    db.database.close()
    assert (elsewhere / "mediabot.db").exists()
    assert not list((tmp_path / "first").iterdir()) and not list((tmp_path / "second").iterdir())
