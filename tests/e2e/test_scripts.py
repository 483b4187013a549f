"""scripts/serve.sh and scripts/test.sh: install only when something changed, start quietly.

They run for real (bash) on a copy of the scripts, with a stand-in ``.venv`` whose python
records each call, so a test sees exactly when pip would run without installing anything.
"""

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FAKE_PYTHON = """#!/usr/bin/env bash
echo "python $*" >> "$(dirname "$0")/../calls"
if [ "$1" = "-V" ]; then echo "Python 3.12.3"; fi
"""
FAKE_MEDIABOT = """#!/usr/bin/env bash
echo "mediabot $*"
"""


def checkout(tmp_path) -> Path:
    home = tmp_path / "checkout"
    shutil.copytree(ROOT / "scripts", home / "scripts")
    for name in ("pyproject.toml", "config.example.toml"):
        shutil.copy(ROOT / name, home / name)
    (home / "config.toml").write_text("# filled in\n")
    bin_dir = home / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name, text in (("python", FAKE_PYTHON), ("mediabot", FAKE_MEDIABOT)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return home


def run(home: Path, script: str, *args: str) -> subprocess.CompletedProcess:
    result = subprocess.run(["bash", f"scripts/{script}", *args], cwd=home,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result


def installs(home: Path) -> list[str]:
    calls = (home / ".venv" / "calls").read_text().splitlines()
    (home / ".venv" / "calls").unlink()
    return [call for call in calls if " pip install" in call]


def test_serve_installs_once_then_starts_quietly_until_pyproject_changes(tmp_path):
    home = checkout(tmp_path)
    first = run(home, "serve.sh")
    assert installs(home) == ["python -m pip install --quiet -e ."]
    assert first.stdout == "mediabot serve --config config.toml\n" and first.stderr == ""
    again = run(home, "serve.sh")
    assert installs(home) == [], "nothing changed: no pip at all"
    assert again.stdout == "mediabot serve --config config.toml\n" and again.stderr == ""
    with (home / "pyproject.toml").open("a") as handle:
        handle.write("\n# a new dependency\n")
    run(home, "serve.sh")
    assert installs(home) == ["python -m pip install --quiet -e ."]


def test_a_test_install_also_serves_and_each_runs_pytest(tmp_path):
    home = checkout(tmp_path)
    run(home, "test.sh", "-k", "history")
    calls = (home / ".venv" / "calls").read_text().splitlines()
    assert "python -m pip install --quiet -e .[test]" in calls
    assert calls[-1] == "python -m pytest -k history"
    installs(home)
    run(home, "serve.sh")
    run(home, "test.sh")
    assert installs(home) == []


def test_test_sh_lints_and_type_checks_first_and_a_finding_stops_it(tmp_path):
    home = checkout(tmp_path)
    run(home, "test.sh", "-x")
    calls = (home / ".venv" / "calls").read_text().splitlines()
    assert calls[-3:] == ["python -m ruff check --quiet .", "python -m mypy",
                          "python -m pytest -x"]
    (home / ".venv" / "calls").unlink()
    finding = FAKE_PYTHON + 'if [ "$2" = "mypy" ]; then echo "x.py:1: error: bad"; exit 1; fi\n'
    (home / ".venv" / "bin" / "python").write_text(finding)
    result = subprocess.run(["bash", "scripts/test.sh"], cwd=home, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 1 and "x.py:1: error: bad" in result.stdout
    assert (home / ".venv" / "calls").read_text().splitlines()[-1] == "python -m mypy", \
        "pytest does not start after a finding"
