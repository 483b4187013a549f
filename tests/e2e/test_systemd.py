"""The systemd unit: the directives the operator relies on, and ``systemd-analyze verify``."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

UNIT = Path(__file__).resolve().parents[2] / "systemd" / "mediabot.service"
EXEC = "/opt/mediabot/venv/bin/mediabot"

REQUIRED = [
    ("Service", "User", "mediabot"),
    ("Service", "Group", "mediabot"),
    ("Service", "ExecStart", f"{EXEC} serve --config /etc/mediabot/config.toml"),
    ("Service", "EnvironmentFile", "-/etc/mediabot/env"),
    ("Service", "Environment", "MEDIABOT_DATABASE_PATH=/var/lib/mediabot/mediabot.db"),
    ("Service", "StateDirectory", "mediabot"),
    ("Service", "Restart", "on-failure"),
    ("Service", "RestartPreventExitStatus", "2"),
    ("Service", "KillSignal", "SIGTERM"),
    ("Service", "TimeoutStopSec", "45"),
    ("Service", "NoNewPrivileges", "yes"),
    ("Service", "ProtectSystem", "strict"),
    ("Service", "ProtectHome", "yes"),
    ("Service", "PrivateTmp", "yes"),
    ("Service", "PrivateDevices", "yes"),
    ("Service", "RestrictAddressFamilies", "AF_INET AF_INET6 AF_UNIX"),
    ("Service", "SystemCallFilter", "@system-service"),
    ("Service", "CapabilityBoundingSet", ""),
    ("Service", "ProtectKernelTunables", "yes"),
    ("Service", "ProtectControlGroups", "yes"),
    ("Service", "RestrictNamespaces", "yes"),
    ("Service", "LockPersonality", "yes"),
    ("Unit", "After", "network-online.target"),
    ("Install", "WantedBy", "multi-user.target"),
]


def directives(text: str) -> set[tuple[str, str, str]]:
    """Every (section, key, value) of a unit file; comments and blank lines skipped."""
    found, section = set(), None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        header = re.fullmatch(r"\[(\w+)\]", line)
        if header:
            section = header.group(1)
            continue
        key, _, value = line.partition("=")
        found.add((section, key.strip(), value.strip()))
    return found


@pytest.mark.parametrize("section, key, value", REQUIRED, ids=str)
def test_required_directive_present(section, key, value):
    assert (section, key, value) in directives(UNIT.read_text())


def test_no_dynamic_user_and_no_memory_deny_write_execute():
    """A static user can be granted the /etc config by group; W^X would break libffi."""
    keys = {key for _, key, _ in directives(UNIT.read_text())}
    assert "DynamicUser" not in keys and "MemoryDenyWriteExecute" not in keys


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze")
def test_systemd_analyze_verify_is_clean(tmp_path):
    """verify needs ExecStart to exist, so a copy points it at this venv's mediabot."""
    here = Path(sys.executable).parent / "mediabot"
    if not here.exists():
        pytest.skip("no mediabot console script beside this Python")
    unit = tmp_path / "mediabot.service"
    unit.write_text(UNIT.read_text().replace(EXEC, str(here)))
    result = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True,
                            text=True, timeout=60)
    complaints = [line for line in (result.stdout + result.stderr).splitlines()
                  if "mediabot.service" in line]
    assert result.returncode == 0 and not complaints, result.stdout + result.stderr


def test_the_default_drain_ends_before_systemd_kills_the_service():
    """SIGTERM drains for [server] drain_seconds; systemd sends SIGKILL after TimeoutStopSec."""
    from mediabot.config import ServerConfig
    from mediabot.config.validate import SYSTEMD_STOP_SECONDS

    assert ("Service", "TimeoutStopSec", str(SYSTEMD_STOP_SECONDS)) in directives(UNIT.read_text())
    assert ServerConfig().drain_seconds <= SYSTEMD_STOP_SECONDS - 15


ROOT = UNIT.parent.parent


def readme_systemd_steps() -> str:
    """The shell block of the README's "Running it as a service" section."""
    section = (ROOT / "README.md").read_text().split("## Running it as a service", 1)[1]
    return section.split("```sh\n", 1)[1].split("```", 1)[0]


def test_readme_installs_a_wheel_into_the_units_venv_with_private_config():
    steps = readme_systemd_steps()
    venv = EXEC.rsplit("/bin/", 1)[0]
    assert "cp -r" not in steps, "copying the checkout takes .venv, *.db and config.toml along"
    assert "pip wheel --no-deps --wheel-dir dist ." in steps
    assert f"sudo python3 -m venv {venv}\n" in steps
    assert f"sudo {venv}/bin/pip install dist/mediabot-*.whl\n" in steps
    for private in ("/etc/mediabot/config.toml", "/etc/mediabot/env"):
        assert re.search(rf"^sudo install -m 0640 -o root -g mediabot \S+ {private}", steps, re.M)
    assert f"sudo -u mediabot {EXEC} check --config /etc/mediabot/config.toml" in steps


def _no_isolation() -> list[str]:
    """Build with the setuptools the test extra installs (seconds faster than pip fetching
    one into an isolated environment); an older one cannot read this pyproject.toml."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        major = int(version("setuptools").split(".")[0])
    except (PackageNotFoundError, ValueError):
        return []
    return ["--no-build-isolation"] if major >= 77 else []


def test_the_wheel_holds_the_package_and_none_of_the_checkouts_private_files(tmp_path):
    """What the README's `pip wheel` step builds from a checkout that has been used."""
    import zipfile

    source = tmp_path / "checkout"
    shutil.copytree(ROOT / "mediabot", source / "mediabot",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    (source / "config.toml").write_text('[llm]\napi_key = "sk-private"\n')
    (source / "mediabot.db").write_bytes(b"SQLite format 3\x00")
    (source / ".venv" / "bin").mkdir(parents=True)
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet",
                             *_no_isolation(), "--wheel-dir", str(tmp_path / "dist"),
                             str(source)], capture_output=True, text=True, timeout=300)
    if result.returncode != 0 and "No matching distribution" in result.stderr:
        pytest.skip("no package index to fetch setuptools from")
    assert result.returncode == 0, result.stderr
    [wheel] = (tmp_path / "dist").glob("mediabot-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "mediabot/cli.py" in names
    assert {f"mediabot/locales/{code}/LC_MESSAGES/mediabot.po"
            for code in ("es", "de", "fr", "pt", "nl")} <= set(names), "the catalogs ship"
    outside = [n for n in names if not n.startswith(("mediabot/", "mediabot-"))]
    assert outside == [], "only the package and its metadata are in the wheel"
