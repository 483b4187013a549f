"""Issue 21, the operator's side, as processes: the README's install steps work as written,
`mediabot serve` under journald logs one timestamp, and the scripts stop before pip on a
Python that is too old."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.config_files import dead_servers
from tests.support.serve import Serve

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_install_steps_then_check_and_users_work(tmp_path):
    """The README's systemd steps, in a folder instead of /etc: the example config, secrets
    only in the env file beside it, then `check` and `users list` as the README runs them."""
    etc, var = tmp_path / "etc" / "mediabot", tmp_path / "var" / "lib" / "mediabot"
    etc.mkdir(parents=True)
    var.mkdir(parents=True)
    text = (ROOT / "config.example.toml").read_text().replace(
        'path = "mediabot.db"', f'path = "{var / "mediabot.db"}"')
    assert str(var) in text, "config.example.toml's [database] path changed: fix this test"
    (etc / "config.toml").write_text(text)
    servers = dead_servers()
    (etc / "env").write_text(f"MEDIABOT_TWILIO_AUTH_TOKEN=token-123456\n"
                             f"MEDIABOT_LLM_API_KEY=sk-test\n"
                             f"MEDIABOT_LLM_BASE_URL={servers['llm']['base_url']}\n"
                             f"MEDIABOT_TWILIO_API_BASE_URL=http://127.0.0.1:9\n"
                             "MEDIABOT_SONARR_API_KEY=sonarr-key\n"
                             "MEDIABOT_RADARR_API_KEY=radarr-key\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEDIABOT_")}
    mediabot = [sys.executable, "-m", "mediabot.cli"]
    check = subprocess.run([*mediabot, "check", "--config", str(etc / "config.toml")],
                           capture_output=True, text=True, timeout=60, env=env)
    assert "config error" not in check.stderr and "Traceback" not in check.stderr
    assert "OK   database" in check.stdout or "database" in check.stdout, check.stdout
    assert "auth_token is required" not in check.stdout + check.stderr
    users = subprocess.run([*mediabot, "users", "list", "--config", str(etc / "config.toml")],
                           capture_output=True, text=True, timeout=60, env=env)
    assert users.returncode == 0, users.stderr
    assert (var / "mediabot.db").exists()


def test_under_systemd_log_lines_carry_the_level_and_no_second_timestamp(
        tmp_path, fake_llm, fake_twilio):
    daemon = Serve(tmp_path, fake_llm.url, fake_twilio.url)
    daemon.env["JOURNAL_STREAM"] = "8:12345"
    daemon.start()
    assert daemon.stop() == 0
    lines = daemon.log.read_text().splitlines()
    assert any(line.startswith("<6>INFO mediabot.daemon: mediabot listening on ")
               for line in lines), lines
    assert all(line[:1] == "<" for line in lines), lines


def test_scripts_stop_before_pip_on_a_python_older_than_3_11(tmp_path):
    home = tmp_path / "checkout"
    shutil.copytree(ROOT / "scripts", home / "scripts")
    shutil.copy(ROOT / "pyproject.toml", home / "pyproject.toml")
    old = tmp_path / "python3.10"
    old.write_text("#!/bin/sh\necho 3.10\n")      # answers the version question as 3.10 does
    old.chmod(0o755)
    result = subprocess.run(["bash", "scripts/test.sh"], cwd=home, capture_output=True,
                            text=True, timeout=60, env={**os.environ, "PYTHON": str(old)})
    assert result.returncode == 2
    assert result.stderr == (f"error: mediabot needs Python 3.11 or newer; {old} is 3.10. "
                             "Install one (apt-get install python3.11 python3.11-venv) and "
                             "name it: PYTHON=python3.11 scripts/test.sh\n")
    assert not (home / ".venv").exists()
