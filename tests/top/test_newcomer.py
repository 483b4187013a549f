"""What a newcomer meets first (issue 27): demo, eval and chat run on a config that holds only
``[llm]``; ``check`` warns that nobody can text exactly when ``serve`` refuses to start.

Each runs the real command through click's runner on a real config file and database; the
model is the scripted fake OpenAI on loopback, Twilio a closed port (nothing here reaches it).
"""

import os
import socket

import pytest
from click.testing import CliRunner

from mediabot.cli import main
from mediabot.store import db
from tests.support.config_files import dead_servers, write_config
from tests.support.household import ADMIN, SERVE_PUBLIC

NOBODY = ("warn users: nobody can text this mediabot: the config has no [[users]] and none were "
          "added with `mediabot users add`, so `mediabot serve` will not start — fix: add "
          "yourself as an admin, e.g. [[users]] phone = \"+15551234567\" role = \"admin\" (or: "
          "mediabot users add +15551234567 --name NAME --role admin)")


@pytest.fixture(autouse=True)
def _clean(monkeypatch, tmp_path):
    """No MEDIABOT_* of the machine's, no config.toml but the test's, the database closed."""
    for name in [k for k in os.environ if k.startswith("MEDIABOT_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    yield
    if not db.database.deferred and not db.database.is_closed():
        db.database.close()


def run(*args, input=None):
    result = CliRunner().invoke(main, [str(a) for a in args], input=input)
    assert "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def only_llm(folder, llm_url):
    """The config a newcomer writes to try a model: [llm] and nothing else."""
    return write_config(folder, llm={"base_url": f"{llm_url}/v1", "api_key": "sk-test",
                                     "timeout_seconds": 5, "max_retries": 0})


# -- demo, eval and chat need only [llm] -----------------------------------------------------

def test_demo_needs_only_llm(tmp_path, fake_llm):
    fake_llm.enqueue_text("Dune: Part Two is downloading.")
    result = run("demo", "--config", only_llm(tmp_path, fake_llm.url),
                 input="what's downloading?\n")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("mediabot demo: simulated Sonarr http://127.0.0.1:")
    assert f"; model gpt-4o-mini at {fake_llm.url}/v1; database " in result.output
    assert "bot> Dune: Part Two is downloading." in result.output
    assert "public_url" not in result.output


def test_eval_needs_only_llm(tmp_path, fake_llm):
    fake_llm.set_responder(lambda body: "Yes, Severance is in the library.")
    result = run("eval", "--config", only_llm(tmp_path, fake_llm.url), "--tasks", "have_it",
                 "--repeat", "1")
    assert result.exit_code == 0, result.output
    assert "\nhave_it                  0/1 " in result.stdout, "scored: it did not look it up"
    assert "\nTOTAL " in result.stdout
    assert fake_llm.requests, "the model was asked"
    assert "public_url" not in result.output


def test_chat_needs_only_llm(tmp_path, fake_llm):
    fake_llm.enqueue_text("Hi! What can I get you?")
    result = run("chat", "--config", only_llm(tmp_path, fake_llm.url), input="hello\n")
    assert result.exit_code == 0, result.output
    assert result.stdout == "bot> Hi! What can I get you?\n"


def test_serve_and_check_still_name_what_twilio_needs(tmp_path, fake_llm):
    """The keys demo, eval and chat do without are still required where they are used."""
    config = only_llm(tmp_path, fake_llm.url)
    for command in ("serve", "check"):
        result = run(command, "--config", config)
        assert result.exit_code == 2, result.output
        assert result.output.splitlines() == [
            f"config error: {config}: [server] public_url is required; set it to the https "
            "URL Twilio calls, e.g. \"https://sms.example.com\"",
            f"config error: {config}: [twilio] account_sid is required; copy it from the "
            "Twilio console (it starts with AC)",
            f"config error: {config}: [twilio] auth_token is required; copy it from the "
            "Twilio console into it, MEDIABOT_TWILIO_AUTH_TOKEN (the env file beside the "
            "config) or a file named by auth_token_file",
            f"config error: {config}: [twilio] from_number or messaging_service_sid is "
            "required; set from_number to your Twilio number, e.g. \"+15550001111\""]


# -- check warns exactly when serve refuses ----------------------------------------------------

@pytest.fixture
def busy_port():
    """A port something else listens on: a serve that gets past its users stops there."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def household(folder, port, users=()):
    return write_config(folder, server={"public_url": SERVE_PUBLIC, "port": port},
                        database={"path": folder / "mediabot.db"}, **dead_servers(),
                        **({"users": list(users)} if users else {}))


ALEX = {"phone": ADMIN, "name": "Alex", "role": "admin"}


def no_one(folder, port):
    return household(folder, port)


def in_the_config(folder, port):
    return household(folder, port, [ALEX])


def added_by_command(folder, port):
    config = household(folder, port)
    assert run("users", "add", ADMIN, "--name", "Alex", "--config", config).exit_code == 0
    return config


def added_and_removed_again(folder, port):
    config = added_by_command(folder, port)
    assert run("users", "remove", ADMIN, "--yes", "--config", config).exit_code == 0
    return config


def kept_from_an_earlier_config(folder, port):
    """Alex was in [[users]] when the daemon last started; the entry is gone, the row kept."""
    assert run("serve", "--config", in_the_config(folder, port)).exit_code == 1   # the port
    return no_one(folder, port)


@pytest.mark.parametrize(("setup", "nobody"), [
    (no_one, True),
    (in_the_config, False),
    (added_by_command, False),
    (added_and_removed_again, True),
    (kept_from_an_earlier_config, False),
])
def test_check_warns_that_nobody_can_text_exactly_when_serve_refuses(tmp_path, busy_port,
                                                                     setup, nobody):
    config = setup(tmp_path, busy_port)
    check = run("check", "--config", config)
    warned = [line for line in check.output.splitlines() if line.startswith("warn users:")]
    serve = run("serve", "--config", config)
    refused = serve.exit_code == 2 and "nobody can text this mediabot" in serve.output
    assert (bool(warned), refused) == (nobody, nobody), (check.output, serve.output)
    if nobody:
        assert warned == [NOBODY]
    else:
        assert f"cannot listen on 127.0.0.1:{busy_port}" in serve.output
