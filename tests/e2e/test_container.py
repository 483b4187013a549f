"""The container image, built as a household builds it and run the way the Dockerfile says.

The image is built with `docker build --network host` from this checkout and no build
arguments: pip installs mediabot's dependencies from the package index, on the default base,
python:3.11-slim. Where no registry answers, a Debian base made from Debian's packages
(docker/debian-base.sh) is given that name. Each container starts from the `docker run` line
in the Dockerfile's header, with this test's folders for ./mediabot/config and ./mediabot/data,
the host's network instead of a published port, and the fake OpenAI and Twilio of this
process; it is texted with signed posts.

Opt-in (RUN_CONTAINER=1): it needs a Docker daemon, root and the package index, and a cold
build takes about a minute and a half (docs: the figures in the Docker guide).
"""

import os
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from mediabot.trial.sim.loopback import wait_for
from tests.fakes.openai import FakeOpenAI
from tests.support.clock import STAMP
from tests.support.household import ADMIN
from tests.support.serve import Serve

ROOT = Path(__file__).resolve().parents[2]
TAG = "mediabot:test"
BASE = "python:3.11-slim"       # the Dockerfile's default
TOKEN, LLM_KEY = "secret-token", "sk-container-test"
SECRETS = ("-e", "MEDIABOT_TWILIO_AUTH_TOKEN_FILE=/config/secrets/twilio_auth_token",
           "-e", "MEDIABOT_LLM_API_KEY_FILE=/config/secrets/llm_api_key")
STOP_TIMEOUT = 10               # `docker stop`'s default


def _docker_missing() -> str:
    if os.environ.get("RUN_CONTAINER") != "1":
        return ("builds the Docker image from the package index and runs it (about two "
                "minutes); set RUN_CONTAINER=1")
    if not shutil.which("docker"):
        return "no docker command (apt-get install docker.io)"
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        return ("no Docker daemon answers (as root: dockerd --storage-driver=overlay2 "
                "--iptables=false --bridge=none)")
    return ""


pytestmark = pytest.mark.skipif(bool(_docker_missing()), reason=_docker_missing() or "-")


def docker(*args, check=True, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run(["docker", *args], capture_output=True, text=True, check=check,
                          timeout=timeout)


def documented_run_line() -> str:
    """The `docker run` line the Dockerfile's header gives households."""
    lines = (ROOT / "Dockerfile").read_text().splitlines()
    return next(line for line in lines if line.startswith("#   docker run ")).removeprefix("#   ")


def _ensure_base() -> None:
    """python:3.11-slim: here already, else pulled, else made from Debian's packages."""
    if docker("image", "inspect", BASE, check=False).returncode == 0:
        return
    try:
        if docker("pull", BASE, check=False, timeout=120).returncode == 0:
            return
    except subprocess.TimeoutExpired:
        pass
    subprocess.run([ROOT / "docker" / "debian-base.sh", BASE], check=True, timeout=900)


@pytest.fixture(scope="module")
def openai_server():
    """The fake model, answering only the key the container reads from its secret file."""
    with FakeOpenAI(api_key=LLM_KEY) as server:
        yield server


@pytest.fixture(scope="module")
def image():
    """The image `docker build .` makes from this checkout; prints the build's time."""
    _ensure_base()
    started = time.monotonic()
    docker("build", "--network", "host", "--tag", TAG, str(ROOT), timeout=1800)
    size = int(docker("image", "inspect", "--format", "{{.Size}}", TAG).stdout)
    print(f"\nimage built in {time.monotonic() - started:.1f} s, {size / 1e6:.0f} MB")
    return TAG


class Container(Serve):
    """The documented `docker run` line on this test's folders: tmp/config (the config file,
    if any, and the secret files) at /config, and tmp/data, owned by uid 1000, at /data."""

    def __init__(self, tmp: Path, llm_url: str, twilio_url: str, image: str):
        (tmp / "config" / "secrets").mkdir(parents=True)
        super().__init__(tmp / "config", llm_url, twilio_url)
        self.image = image
        self.data = tmp / "data"
        self.data.mkdir()
        os.chown(self.data, 1000, 1000)   # as a household does: chown 1000:1000 ./data
        self.name = f"mediabot-test-{self.port}"
        self.options = ["-e", f"MEDIABOT_SERVER_PORT={self.port}", "--health-interval", "1s",
                        *SECRETS]
        (tmp / "config" / "secrets" / "twilio_auth_token").write_text(TOKEN + "\n")
        (tmp / "config" / "secrets" / "llm_api_key").write_text(LLM_KEY + "\n")

    def command(self) -> list[str]:
        """The documented line with this test's folders, name, port and network."""
        line = documented_run_line()
        for old, new in (('"$PWD/mediabot/config', f'"{self.config.parent}'),
                         ('"$PWD/mediabot/data', f'"{self.data}'),
                         ("--name mediabot ", f"--name {self.name} "),
                         ("-p 127.0.0.1:8080:8080 ", "--network host ")):
            assert old in line, f"the documented line has no {old!r}: {line}"
            line = line.replace(old, new, 1)
        *words, image = shlex.split(line)
        assert image == "mediabot", line
        return [*words, *self.options, self.image]

    def start(self):
        docker(*self.command()[1:])
        if not wait_for(self._healthy, 30):
            raise AssertionError(self.logs())
        return self

    def once(self, *command: str) -> subprocess.CompletedProcess:
        """A one-off command in a container of its own, as `docker run --rm` runs one."""
        words = [w for w in self.command()[2:-1] if w != "-d"]
        for option in ("--restart", "--name"):
            at = words.index(option)
            del words[at:at + 2]
        return docker("run", "--rm", *words, self.image, *command, check=False)

    def run(self, *command: str) -> subprocess.CompletedProcess:
        return docker("exec", self.name, *command, check=False)

    def logs(self) -> str:
        shown = docker("logs", self.name, check=False)
        return shown.stdout + shown.stderr

    def inspect(self, field: str) -> str:
        """``docker inspect``'s field, e.g. "State.ExitCode", "RestartCount"."""
        return docker("inspect", "--format", f"{{{{.{field}}}}}", self.name,
                      check=False).stdout.strip()

    def stop(self, *_args) -> int:
        docker("stop", self.name, timeout=60)
        return int(self.inspect("State.ExitCode"))

    def remove(self) -> None:
        docker("rm", "--force", self.name, check=False)


@pytest.fixture
def household(image, tmp_path, fake_llm, fake_twilio):
    """A household's folders and the documented line, not started yet."""
    made = Container(tmp_path, fake_llm.url, fake_twilio.url, image)
    yield made
    made.remove()


@pytest.fixture
def container(household):
    started = time.monotonic()
    household.start()
    print(f"\ncontainer answered /healthz 200 {time.monotonic() - started:.1f} s after "
          "docker run")
    return household


def test_the_container_answers_a_signed_text_in_the_households_zone(container, fake_llm,
                                                                   fake_twilio):
    fake_llm.enqueue_text("**Dune** is downloading.")
    response = container.text("what's downloading?")
    assert response.status_code == 200 and response.text.endswith("<Response/>")
    assert wait_for(lambda: fake_twilio.sent, timeout=15), container.logs()
    assert fake_twilio.sent[0]["to"] == ADMIN
    assert fake_twilio.bodies() == ["Dune is downloading."], "both secrets were read"
    stamp = STAMP.match(fake_llm.requests[0]["messages"][-1]["content"]).group()
    assert stamp.rstrip("] ").endswith(("EST", "EDT")), f"TZ=America/New_York: {stamp}"
    assert container.text("hello", signature="").status_code == 403
    assert wait_for(lambda: container.inspect("State.Health.Status") == "healthy", timeout=15)
    assert container.run("stat", "-c", "%u:%g", "/proc/1").stdout.strip() == "1000:1000"
    log = container.logs()
    assert TOKEN not in log and LLM_KEY not in log


def test_operator_commands_in_the_container_run_as_the_daemons_user(container):
    listed = container.run("mediabot", "users", "list")
    assert listed.returncode == 0, listed.stderr
    assert ADMIN in listed.stdout and "Alex" in listed.stdout
    added = container.run("mediabot", "users", "add", "+15551230009", "--name", "Robin")
    assert added.returncode == 0, added.stderr
    owners = {p.stat().st_uid for p in container.data.iterdir()}
    assert owners == {1000}, "docker exec runs as root; the database stays the daemon's"
    broken = docker("exec", "-e", "MEDIABOT_LLM_API_KEY_FILE=/run/secrets/nope", container.name,
                    "mediabot", "users", "list", check=False)
    assert broken.returncode == 2
    assert broken.stderr == ("config error: environment: MEDIABOT_LLM_API_KEY_FILE = "
                             "'/run/secrets/nope': cannot read it (No such file or directory); "
                             "check the path, and that the user mediabot runs as may read the "
                             "file\n")


def test_a_plain_docker_stop_lets_the_turn_in_flight_finish_and_exits_0(container, fake_llm,
                                                                        fake_twilio):
    fake_llm.enqueue_delay(2.0)
    fake_llm.enqueue_text("Finished before stopping.")
    container.text("slow question")
    assert wait_for(lambda: len(fake_llm.requests) == 1, timeout=15)
    started = time.monotonic()
    assert container.stop() == 0
    took = time.monotonic() - started
    print(f"\ndocker stop took {took:.1f} s")
    assert took < STOP_TIMEOUT
    assert fake_twilio.bodies() == ["Finished before stopping."]
    assert "mediabot stopped" in container.logs()
    assert (container.data / "mediabot.db").stat().st_uid == 1000


def test_a_turn_longer_than_docker_stop_allows_is_answered_after_the_restart(
        container, fake_llm, fake_twilio):
    fake_llm.enqueue_delay(12.0)
    fake_llm.enqueue_text("Too late: this answer is never sent.")
    container.text("very slow question")
    assert wait_for(lambda: len(fake_llm.requests) == 1, timeout=15)
    started = time.monotonic()
    assert container.stop() == 0, "exit 137 would mean Docker killed it mid-drain"
    took = time.monotonic() - started
    print(f"\ndocker stop with a turn longer than the drain took {took:.1f} s")
    assert took < STOP_TIMEOUT
    assert fake_twilio.bodies() == []
    fake_llm.enqueue_text("Answered after the restart.")
    docker("start", container.name)
    assert wait_for(fake_twilio.bodies, timeout=30), container.logs()
    assert fake_twilio.bodies() == ["Answered after the restart."]


def test_a_root_owned_data_folder_is_one_line_naming_the_fix(household):
    """A ./data that Docker made (missing on the host) or `sudo mkdir` made is root's: the
    container says how to fix it, once per start, and nothing else; it exits 2. With the
    documented `--restart unless-stopped` Docker keeps starting it, each time with that line."""
    os.chown(household.data, 0, 0)
    docker(*household.command()[1:])
    fix = ("mediabot: cannot write /data (owned by 0:0; mediabot runs as 1000:1000). Fix on "
           "the host: sudo chown -R 1000:1000 ./data (the folder mounted at /data)")
    assert wait_for(lambda: int(household.inspect("RestartCount") or 0) >= 2, timeout=30)
    lines = household.logs().splitlines()
    assert len(lines) >= 2 and set(lines) == {fix}, lines
    assert household.inspect("State.ExitCode") == "2"
    once = household.once("mediabot", "serve")
    assert (once.returncode, once.stderr, once.stdout) == (2, fix + "\n", "")


def test_without_a_config_file_the_environment_alone_configures_it(household, fake_llm,
                                                                  fake_twilio):
    """Nothing but the secrets in /config: every setting is a MEDIABOT_* variable, the first
    admin is added with a one-off `mediabot users add`, and PUID/PGID choose the user."""
    household.config.unlink()
    os.chown(household.data, 1234, 1234)
    household.options += [
        "-e", "PUID=1234", "-e", "PGID=1234",
        "-e", "MEDIABOT_SERVER_PUBLIC_URL=https://sms.household.test",
        "-e", "MEDIABOT_TWILIO_ACCOUNT_SID=AC" + "0" * 32,
        "-e", "MEDIABOT_TWILIO_FROM_NUMBER=+15550001111",
        "-e", f"MEDIABOT_TWILIO_API_BASE_URL={fake_twilio.url}",
        "-e", f"MEDIABOT_LLM_BASE_URL={fake_llm.url}/v1", "-e", "MEDIABOT_LLM_MODEL=gpt-4o-mini"]
    added = household.once("mediabot", "users", "add", ADMIN, "--name", "Alex", "--role",
                           "admin")
    assert added.returncode == 0, added.stderr
    household.start()
    fake_llm.enqueue_text("Hello from the environment.")
    assert household.text("hi").status_code == 200
    assert wait_for(lambda: fake_twilio.sent, timeout=15), household.logs()
    assert fake_twilio.bodies() == ["Hello from the environment."]
    assert "no config file at /config/config.toml" in household.logs()
    assert (household.data / "mediabot.db").stat().st_uid == 1234
