"""One job per module, held by its size: every module of ``mediabot/`` under 400 lines and
every class under 200 (CONTRIBUTING, "Modules and their size").

The simulators in ``mediabot/trial/sim/`` are the one exception: each is a whole fake server
(Sonarr/Radarr, Twilio) kept in one file so that it reads as the server it imitates.
"""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "mediabot"
MODULE_LINES = 400
CLASS_LINES = 200
EXCEPTIONS = ("trial/sim/",)   # the simulators: see the docstring


def _modules() -> list[Path]:
    return sorted(path for path in PACKAGE.rglob("*.py")
                  if not path.relative_to(PACKAGE).as_posix().startswith(EXCEPTIONS))


def test_every_module_is_under_400_lines() -> None:
    too_long = {path.relative_to(PACKAGE).as_posix(): lines for path in _modules()
                if (lines := len(path.read_text(encoding="utf-8").splitlines())) >= MODULE_LINES}
    assert too_long == {}, "split these by subject (one job per module)"


def test_every_class_is_under_200_lines() -> None:
    too_long = {}
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines >= CLASS_LINES:
                    too_long[f"{path.relative_to(PACKAGE).as_posix()}:{node.name}"] = lines
    assert too_long == {}, "move helpers out of these classes"


def test_the_check_sees_the_whole_package() -> None:
    """A guard against a wrong path making the two tests above pass on nothing."""
    names = {path.relative_to(PACKAGE).as_posix() for path in _modules()}
    assert {"cli.py", "config/load.py", "mailbox/delivery.py"} <= names
    assert not any(name.startswith("trial/sim/") for name in names)
