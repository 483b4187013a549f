"""docker/compose.example.yaml, read by the compose client a household has: docker-compose
1.29 (Debian's) or `docker compose`. Nothing is pulled or started: the file is only checked
and its mediabot settings loaded as the container would load them."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from mediabot.config import load_config

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docker" / "compose.example.yaml"
PASTE = re.compile(r"^  # --- the mediabot service: paste from here ---\n(.*?)^  # --- to here ---",
                   re.MULTILINE | re.DOTALL)


def _compose() -> list[str]:
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    if shutil.which("docker") and subprocess.run(["docker", "compose", "version"],
                                                 capture_output=True).returncode == 0:
        return ["docker", "compose"]
    return []


pytestmark = pytest.mark.skipif(not _compose(), reason="no compose client (apt-get install "
                                "docker-compose); the example is only read, nothing is pulled")


def compose_config(path: Path) -> str:
    shown = subprocess.run([*_compose(), "-f", str(path), "config"], capture_output=True,
                           text=True)
    assert shown.returncode == 0, shown.stderr
    return shown.stdout


def mediabot_environment(shown: str) -> dict[str, str]:
    """The mediabot service's environment in `config`'s output (YAML, one key a line)."""
    service = shown[shown.index("\n  mediabot:\n"):]
    block = service[:service.index("\n    image:")]
    return {key: value.strip("'\"") for key, value in
            re.findall(r"^      (\w+): (.+)$", block, re.MULTILINE)}


def test_the_example_alone_is_the_config_with_its_secret_files(tmp_path):
    """No config file in ./mediabot/config: the service's variables and secret files make a
    config that reaches Sonarr and Radarr by service name and holds every secret."""
    env = mediabot_environment(compose_config(EXAMPLE))
    assert (env["PUID"], env["PGID"], env["TZ"]) == ("1000", "1000", "America/New_York")
    for var, path in env.items():
        if var.endswith("_FILE"):
            assert path.startswith("/config/secrets/"), (var, path)
            env[var] = str(tmp_path / Path(path).name)
            Path(env[var]).write_text(f"from-{Path(path).name}\n")
    env["MEDIABOT_CONFIG"] = str(tmp_path / "config.toml")   # as the image sets it; not there
    config = load_config(environ=env)
    assert (config.sonarr.url, config.radarr.url) == ("http://sonarr:8989", "http://radarr:7878")
    assert config.sonarr.api_key == "from-sonarr_api_key"
    assert config.notifications.webhook_secret == "from-webhook_secret"
    assert (config.twilio.auth_token, config.llm.api_key) == ("from-twilio_auth_token",
                                                              "from-llm_api_key")
    assert config.twilio.from_number == "+15550001111"


def test_the_mediabot_service_pastes_into_another_compose_file(tmp_path):
    """Copied alone into a household's own compose file, it needs nothing else from the
    example: no build context, no other service, no top-level secrets or volumes."""
    service = PASTE.search(EXAMPLE.read_text()).group(1)
    assert "build:" not in service and "depends_on" not in service
    theirs = tmp_path / "compose.yaml"
    theirs.write_text("services:\n  jellyfin:\n    image: jellyfin/jellyfin\n" + service)
    shown = compose_config(theirs)
    assert "image: mediabot\n" in shown
    assert f"{tmp_path}/mediabot/data:/data" in shown, "paths are beside their compose file"
