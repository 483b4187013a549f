"""The container image, built from the Dockerfile and run for real with Docker.

The image is built from a folder of wheels (docker/wheels.sh, no network in the build) on
python:3.11-slim when that image is here, else on a Debian base made from Debian's packages
(docker/debian-base.sh). The container runs `mediabot serve` as the image's CMD, on the
host's network, against the fake OpenAI and Twilio of this process, with its config file
and secret files mounted as a household mounts them, and is texted with signed posts.

Opt-in (RUN_CONTAINER=1): it needs a Docker daemon and root, and a cold build takes about
a minute (README, "Running it in Docker", has the timings).
"""

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from mediabot.config import load_config
from mediabot.trial.sim.loopback import wait_for
from tests.fakes.openai import FakeOpenAI
from tests.support import ADMIN, Serve

ROOT = Path(__file__).resolve().parents[2]
TAG = "mediabot:test"
SLIM = "python:3.11-slim"
DEBIAN_BASE = "mediabot-base:bookworm"
TOKEN, LLM_KEY = "secret-token", "sk-container-test"


def _docker_missing() -> str:
    if os.environ.get("RUN_CONTAINER") != "1":
        return "builds and runs the Docker image (about a minute); set RUN_CONTAINER=1"
    if not shutil.which("docker"):
        return "no docker command (apt-get install docker.io)"
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        return ("no Docker daemon answers (as root: dockerd --storage-driver=overlay2 "
                "--iptables=false --bridge=none)")
    return ""


needs_docker = pytest.mark.skipif(bool(_docker_missing()), reason=_docker_missing() or "-")


def docker(*args, check=True, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run(["docker", *args], capture_output=True, text=True, check=check,
                          timeout=timeout)


def _base() -> str:
    """python:3.11-slim when present (a household's), else the Debian-made one, made once."""
    for tag in (os.environ.get("MEDIABOT_TEST_BASE", ""), SLIM, DEBIAN_BASE):
        if tag and docker("image", "inspect", tag, check=False).returncode == 0:
            return tag
    subprocess.run([ROOT / "docker" / "debian-base.sh", DEBIAN_BASE], check=True, timeout=600)
    return DEBIAN_BASE


@pytest.fixture(scope="module")
def openai_server():
    """The fake model, answering only the key the container reads from its secret file."""
    with FakeOpenAI(api_key=LLM_KEY) as server:
        yield server


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    """The image built from this checkout; prints how long the build took."""
    context = tmp_path_factory.mktemp("context")
    subprocess.run([ROOT / "docker" / "wheels.sh", context / "wheels"], check=True,
                   timeout=600)
    started = time.monotonic()
    docker("build", "--quiet", "--build-arg", f"BASE={_base()}", "--tag", TAG,
           "--file", str(ROOT / "Dockerfile"), str(context), timeout=900)
    size = int(docker("image", "inspect", "--format", "{{.Size}}", TAG).stdout)
    print(f"\nimage built in {time.monotonic() - started:.1f} s, {size / 1e6:.0f} MB")
    return TAG


class Container(Serve):
    """`mediabot serve` as the image runs it: the image's CMD, its /data volume (this test's
    folder, so the test reads the database as Serve does) and secrets only from files."""

    def __init__(self, tmp: Path, llm_url: str, twilio_url: str, image: str):
        super().__init__(tmp, llm_url, twilio_url)
        self.name = f"mediabot-test-{self.port}"
        secrets = tmp / "secrets"
        secrets.mkdir()
        (secrets / "twilio_auth_token").write_text(TOKEN + "\n")
        (secrets / "llm_api_key").write_text(LLM_KEY + "\n")
        os.chown(tmp, 1000, 1000)   # the image's user owns its data, as a household chowns it
        self.launcher = lambda _command: [
            "docker", "run", "--rm", "--name", self.name, "--network", "host",
            "--health-interval", "1s",
            "-e", f"MEDIABOT_SERVER_PORT={self.port}",
            "-e", "MEDIABOT_TWILIO_AUTH_TOKEN_FILE=/run/secrets/twilio_auth_token",
            "-e", "MEDIABOT_LLM_API_KEY_FILE=/run/secrets/llm_api_key",
            "-v", f"{secrets}:/run/secrets:ro", "-v", f"{self.config}:/config/config.toml:ro",
            "-v", f"{tmp}:/data", image]

    def run(self, *command: str) -> subprocess.CompletedProcess:
        return docker("exec", self.name, *command, check=False)

    def health(self) -> str:
        return docker("inspect", "--format", "{{.State.Health.Status}}", self.name,
                      check=False).stdout.strip()

    def remove(self) -> None:
        docker("rm", "--force", self.name, check=False)


@pytest.fixture
def container(image, tmp_path, fake_llm, fake_twilio):
    made = Container(tmp_path, fake_llm.url, fake_twilio.url, image)
    started = time.monotonic()
    made.start()
    print(f"\ncontainer answered /healthz 200 {time.monotonic() - started:.1f} s after "
          "docker run")
    yield made
    made.remove()


@needs_docker
def test_the_container_answers_a_signed_text_with_its_secrets_read_from_files(
        container, fake_llm, fake_twilio):
    fake_llm.enqueue_text("**Dune** is downloading.")
    response = container.text("what's downloading?")
    assert response.status_code == 200 and response.text.endswith("<Response/>")
    assert wait_for(lambda: fake_twilio.sent, timeout=15), container.log.read_text()
    assert fake_twilio.sent[0]["to"] == ADMIN
    assert fake_twilio.bodies() == ["Dune is downloading."], "both secrets were read"
    assert container.text("hello", signature="").status_code == 403
    assert wait_for(lambda: container.health() == "healthy", timeout=15), container.health()
    assert container.run("id", "-u").stdout.strip() == "1000", "not root"
    log = container.log.read_text()
    assert TOKEN not in log and LLM_KEY not in log


@needs_docker
def test_operator_commands_in_the_container_read_what_the_daemon_reads(container):
    listed = container.run("mediabot", "users", "list")
    assert listed.returncode == 0, listed.stderr
    assert ADMIN in listed.stdout and "Alex" in listed.stdout
    broken = docker("exec", "-e", "MEDIABOT_LLM_API_KEY_FILE=/run/secrets/nope", container.name,
                    "mediabot", "users", "list", check=False)
    assert broken.returncode == 2
    assert broken.stderr == ("config error: environment: MEDIABOT_LLM_API_KEY_FILE = "
                             "'/run/secrets/nope': cannot read it (No such file or directory); "
                             "check the path, and that the user mediabot runs as may read the "
                             "file\n")


@needs_docker
def test_docker_stop_lets_the_turn_in_flight_finish_and_exits_0(container, fake_llm,
                                                                 fake_twilio):
    fake_llm.enqueue_delay(2.0)
    fake_llm.enqueue_text("Finished before stopping.")
    container.text("slow question")
    assert wait_for(lambda: len(fake_llm.requests) == 1, timeout=15)
    docker("stop", "--time", "45", container.name)
    assert container.proc.wait(timeout=60) == 0
    assert fake_twilio.bodies() == ["Finished before stopping."]
    assert "mediabot stopped" in container.log.read_text()
    assert (container.config.parent / "mediabot.db").stat().st_uid == 1000


@pytest.mark.skipif(not shutil.which("docker-compose"), reason="no docker-compose (apt-get "
                    "install docker-compose); linuxserver's images are not pulled, only read")
def test_the_compose_example_is_valid_and_its_settings_load(tmp_path):
    """docker-compose reads the example; the mediabot service's MEDIABOT_* settings, over
    config.example.toml and with its secret files, make a config that reaches Sonarr and
    Radarr by service name and holds every secret."""
    shown = subprocess.run(["docker-compose", "-f", ROOT / "docker" / "compose.example.yaml",
                            "config"], capture_output=True, text=True, check=True).stdout
    assert "stop_grace_period: 45s" in shown
    env = dict(re.findall(r"^ +(MEDIABOT_\w+): (\S+)$", shown, re.MULTILINE))
    for var, path in env.items():
        if var.endswith("_FILE"):
            env[var] = str(tmp_path / Path(path).name)
            Path(env[var]).write_text(f"from-{Path(path).name}\n")
    config = load_config(ROOT / "config.example.toml", environ=env)
    assert (config.sonarr.url, config.radarr.url) == ("http://sonarr:8989", "http://radarr:7878")
    assert config.sonarr.api_key == "from-sonarr_api_key"
    assert config.notifications.webhook_secret == "from-webhook_secret"
    assert (config.twilio.auth_token, config.llm.api_key) == ("from-twilio_auth_token",
                                                              "from-llm_api_key")
