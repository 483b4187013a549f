"""Issue 21, the operator's side: the README's install steps work as written, and every
install mistake is one line with the fix and exit 2, never a traceback.

Commands run through click's runner on real config files and SQLite databases; the ones
that need a process of their own (``serve`` under journald, the README walk) are in
tests/e2e/test_install.py.
"""

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from mediabot.cli import main
from mediabot.config import load_config
from mediabot.store import db
from tests.support.config_files import dead_servers, write_config
from tests.support.household import ADMIN, PUBLIC, SERVE_PUBLIC

ROOT = Path(__file__).resolve().parents[2]
BO = "+15552223333"
OTHER_UID = 1000        # the daemon's user in these tests (we run as root)


@pytest.fixture(autouse=True)
def _close_database():
    yield
    if not db.database.deferred:
        db.database.close()


def run(*args, input=None):
    result = CliRunner().invoke(main, [str(a) for a in args], input=input)
    assert "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def household(folder: Path, **sections) -> Path:
    tables = {"server": {"public_url": PUBLIC}, "database": {"path": folder / "mediabot.db"},
              **sections}
    return write_config(folder, **tables,
                        users=[{"phone": ADMIN, "name": "Alex", "role": "admin"}])


# -- 2. every command reads what the daemon reads ------------------------------------------------

def test_the_env_file_beside_the_config_gives_every_command_its_secrets(tmp_path):
    config = household(tmp_path, twilio={"account_sid": "AC1", "from_number": "+15550001111"})
    (tmp_path / "env").write_text("# secrets, as systemd reads them\n"
                                  "MEDIABOT_TWILIO_AUTH_TOKEN=token-from-env-file\n"
                                  "MEDIABOT_LLM_API_KEY='sk-from-env-file'\n")
    loaded = load_config(config, environ={})
    assert loaded.twilio.auth_token == "token-from-env-file"
    assert loaded.llm.api_key == "sk-from-env-file"
    real = load_config(config, environ={"MEDIABOT_LLM_API_KEY": "sk-real"})
    assert real.llm.api_key == "sk-real"            # the real environment wins


def test_a_broken_env_file_line_is_named_without_its_value(tmp_path):
    config = household(tmp_path)
    (tmp_path / "env").write_text("MEDIABOT_LLM_API_KEY=sk-fine\nsk-secret-pasted-alone\n")
    result = run("users", "list", "--config", config)
    assert result.exit_code == 2
    assert result.output == (f"config error: {tmp_path / 'env'} line 2 is not KEY=VALUE; "
                             "write it like MEDIABOT_LLM_API_KEY=sk-...\n")


def test_users_and_history_do_not_ask_for_sonarr_or_radarr_keys(tmp_path):
    config = household(tmp_path, sonarr={"url": "http://localhost:8989"},
                       radarr={"url": "http://localhost:7878"})
    listed = run("users", "list", "--config", config)
    assert listed.exit_code == 0, listed.output
    assert run("users", "add", BO, "--name", "Bo", "--config", config).exit_code == 0
    assert run("history", "show", BO, "--config", config).exit_code == 0


# -- 3. honest model errors ----------------------------------------------------------------------

@pytest.mark.parametrize("command", [["eval", "--repeat", "1"], ["chat"], ["demo"]])
def test_a_model_that_refuses_connections_stops_the_command_with_one_line(tmp_path, command):
    config = household(tmp_path, llm={"base_url": "http://127.0.0.1:9/v1", "model": "m",
                                      "api_key": "sk-secret-9", "timeout_seconds": 2})
    result = run(*command, "--config", config, input="hello\n")
    assert result.exit_code == 1
    assert result.output == (f"mediabot {command[0]}: not answering at http://127.0.0.1:9/v1"
                             " — is it running? check [llm] base_url\n")


def test_a_rejected_key_and_a_missing_model_are_named_with_the_url(tmp_path, fake_llm):
    url = f"{fake_llm.url}/v1"
    fake_llm.api_key = "sk-right"
    config = household(tmp_path, llm={"base_url": url, "api_key": "sk-wrong", "model": "m"})
    result = run("eval", "--config", config)
    assert result.exit_code == 1
    assert result.output.startswith(f"mediabot eval: {url}: the model server rejected "
                                    "[llm] api_key (HTTP 401)")
    assert "sk-wrong" not in result.output
    fake_llm.api_key = None
    config = household(tmp_path, llm={"base_url": url, "model": "no-such-model"})
    result = run("chat", "--config", config, input="hi\n")
    assert result.exit_code == 1
    assert result.output.startswith(f"mediabot chat: model 'no-such-model' is not on the "
                                    f"server at {url}; it has ")
    assert result.output.count("\n") == 1


def test_eval_without_a_model_names_eval_not_demo(tmp_path):
    config = household(tmp_path)
    result = run("eval", "--config", config)
    assert result.exit_code == 2
    assert result.output.startswith("mediabot eval needs a model; nothing else.")


# -- 4. config and file-system mistakes: one line, exit 2 ----------------------------------------

def test_a_config_path_that_is_a_folder_is_one_line(tmp_path):
    result = run("users", "list", "--config", tmp_path)
    assert (result.exit_code, result.output) == (
        2, f"config error: {tmp_path}: is a directory, not a file; pass --config "
           f"{tmp_path / 'config.toml'} (the file itself)\n")


def test_a_utf16_config_is_one_line(tmp_path):
    config = household(tmp_path)
    config.write_text(config.read_text(), encoding="utf-16")
    result = run("serve", "--config", config)
    assert (result.exit_code, result.output) == (
        2, f"config error: {config}: not UTF-8 text (saved as UTF-16 or another encoding?); "
           "save it as UTF-8\n")


def test_a_missing_database_folder_is_exit_2_with_the_fix(tmp_path):
    folder = tmp_path / "var" / "lib" / "mediabot"
    servers = dead_servers()
    servers["llm"]["api_key"] = "sk-test"
    config = household(tmp_path, database={"path": folder / "mediabot.db"}, **servers)
    for command in (["users", "list"], ["serve"]):
        result = run(*command, "--config", config)
        assert (result.exit_code, result.output) == (
            2, f"error: cannot open the database '{folder / 'mediabot.db'}': its folder "
               f"{folder} does not exist; create it (sudo install -d -o mediabot -g mediabot "
               f"{folder}) or fix [database] path\n")
    assert not folder.exists()


@pytest.mark.parametrize(("section", "line"), [
    ({"server": {"public_url": PUBLIC, "port": 99999}},
     "[server] port = 99999 is not a TCP port; use one from 1 to 65535, e.g. 8080"),
    ({"server": {"public_url": PUBLIC, "timezone": "EST"}},
     "[server] timezone = 'EST' is a fixed offset without daylight saving; use the place's "
     "IANA name, e.g. \"America/New_York\""),
])
def test_a_port_out_of_range_and_a_zone_without_daylight_saving_are_refused(
        tmp_path, section, line):
    config = write_config(tmp_path, **section, **dead_servers())
    result = run("check", "--config", config)
    assert (result.exit_code, result.output) == (2, f"config error: {config}: {line}\n")


def test_no_llm_section_is_refused_by_serve_and_check_not_silently_openai(tmp_path):
    config = write_config(tmp_path, server={"public_url": PUBLIC},
                          twilio=dead_servers()["twilio"])
    for command in ("serve", "check"):
        result = run(command, "--config", config)
        assert (result.exit_code, result.output) == (
            2, f"config error: {config}: [llm] api_key is required for OpenAI "
               "(https://api.openai.com/v1); set it (or MEDIABOT_LLM_API_KEY), or point [llm] "
               "base_url and model at your own model server, e.g. "
               "\"http://localhost:11434/v1\"\n")


def test_serve_refuses_the_examples_public_url_which_twilio_cannot_reach(tmp_path):
    config = write_config(tmp_path, server={"public_url": "https://sms.example.com"},
                          database={"path": tmp_path / "mediabot.db"}, **dead_servers(),
                          users=[{"phone": ADMIN, "name": "Alex", "role": "admin"}])
    result = run("serve", "--config", config)
    assert (result.exit_code, result.output) == (
        2, f"config error: {config}: [server] public_url is still the example's "
           "https://sms.example.com, which Twilio cannot reach; set it to the https address "
           "Twilio calls (docs/reaching-it.md)\n")


def test_serve_with_nobody_to_answer_is_one_line_and_exit_2(tmp_path):
    """No [[users]] and nobody added by command: every text would be refused."""
    config = write_config(tmp_path, server={"public_url": SERVE_PUBLIC, "port": 9},
                          database={"path": tmp_path / "mediabot.db"}, **dead_servers())
    result = run("serve", "--config", config)
    assert (result.exit_code, result.output) == (
        2, "Error: nobody can text this mediabot: the config has no [[users]] and none were "
           "added with `mediabot users add`; add yourself as an admin, e.g. [[users]] phone = "
           "\"+15551234567\" role = \"admin\" (or: mediabot users add +15551234567 --name NAME "
           "--role admin)\n")


# -- 5. a database made by root in the daemon's folder ---------------------------------------------

@pytest.mark.skipif(os.geteuid() != 0, reason="needs root, as the mistake does")
def test_users_add_as_root_refuses_to_create_a_database_the_daemon_cannot_write(tmp_path):
    folder = tmp_path / "state"
    folder.mkdir()
    os.chown(folder, OTHER_UID, OTHER_UID)
    config = household(tmp_path, database={"path": folder / "mediabot.db"})
    result = run("users", "add", BO, "--name", "Bo", "--config", config)
    owner = _name(OTHER_UID)
    assert (result.exit_code, result.output) == (
        2, f"error: {folder / 'mediabot.db'} does not exist yet, and running as root would "
           f"create it owned by root, which the daemon ({owner}, who owns {folder}) cannot "
           f"write; run the command as that user: sudo -u {owner} mediabot ...\n")
    assert not (folder / "mediabot.db").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to own the file")
def test_check_fails_a_database_owned_by_someone_else_than_its_folder(tmp_path):
    folder = tmp_path / "state"
    folder.mkdir()
    (folder / "mediabot.db").touch()
    os.chown(folder, OTHER_UID, OTHER_UID)
    config = household(tmp_path, database={"path": folder / "mediabot.db"}, **dead_servers())
    result = run("check", "--config", config)
    assert result.exit_code == 1
    assert (f"FAIL database: {folder / 'mediabot.db'} is owned by root but its folder by "
            f"{_name(OTHER_UID)}, so the daemon may not write it — fix: sudo chown "
            f"{_name(OTHER_UID)}: {folder / 'mediabot.db'}*") in result.output


def _name(uid: int) -> str:
    from mediabot.ops.storage import user_name
    return user_name(uid)


# -- conventions -----------------------------------------------------------------------------------

def test_verbose_is_taken_after_the_subcommand_too(tmp_path):
    config = household(tmp_path)
    assert run("users", "list", "-v", "--config", config).exit_code == 0
    assert run("users", "list", "--verbose", "--config", config).exit_code == 0


def test_users_remove_asks_first_and_no_keeps_them(tmp_path):
    config = household(tmp_path)
    run("users", "add", BO, "--name", "Bo", "--config", config)
    kept = run("users", "remove", BO, "--config", config, input="n\n")
    assert kept.exit_code == 0
    assert kept.output == (f"Remove Bo ({BO}) and their 0 stored messages and requests? "
                           "[y/N]: n\nNothing removed.\n")
    assert BO in run("users", "list", "--config", config).output


def test_every_command_has_an_example_and_an_uncut_summary():
    listing = run("--help").output.split("Commands:")[1]
    assert "..." not in listing, listing
    for command in (["serve"], ["chat"], ["demo"], ["eval"], ["check"], ["users", "list"],
                    ["users", "add"], ["users", "remove"], ["users", "role"],
                    ["history", "show"], ["history", "clear"]):
        assert "Example: mediabot " + " ".join(command) in run(*command, "--help").output


def test_license_and_changelog_ship_with_the_source():
    assert "MIT License" in (ROOT / "LICENSE").read_text()
    assert "## " in (ROOT / "CHANGELOG.md").read_text()
