"""The floor plan holds: each package imports only from packages below it, and no two
packages import each other, directly or round a loop (docs/architecture.md, "Packages").

Every ``import`` in mediabot/ is read with ast, including those inside functions and under
``if TYPE_CHECKING:`` (a deferred import is still a dependency; it only hides it). A failure
names the file, the line and the rule it breaks.
"""

import ast
import itertools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "mediabot"

# From the ground up; a package may import from its own rank and those before it.
LAYERS = [
    ["text"],
    ["store"],
    ["config"],
    ["carrier"],
    ["mailbox", "model", "seerr.api"],
    ["arr"],
    ["approvals"],
    ["seerr"],
    ["conversation"],
    ["answering"],
    ["ops"],
    ["webhooks"],
    ["app", "trial", "scheduler", "daemon", "cli"],
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, module) for every import in the file, relative ones resolved."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return [(line, target) for line, target in found if target.split(".")[0] == root.name]


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    base = ".".join(parts[:len(parts) - node.level + 1])
    return f"{base}.{node.module}" if node.module else base


def unit(module: str, known: set[str]) -> str:
    """The package a module counts for: mediabot.conversation.prompt.shape -> conversation.
    ``from mediabot.x import name`` also yields mediabot.x.name; a name that is no module
    falls back to its package. A feature that spans layers names its lower part in LAYERS
    (``seerr.api``): the longest name there that holds the module wins."""
    while module not in known and "." in module:
        module = module.rpartition(".")[0]
    parts = module.split(".")[1:]
    for cut in range(len(parts), 1, -1):
        if ".".join(parts[:cut]) in RANK:
            return ".".join(parts[:cut])
    return parts[0] if parts else ""


def edges(root: Path) -> list[tuple[str, int, str, str]]:
    """(file, line, from package, to package) for each import across packages."""
    files = sorted(root.rglob("*.py"))
    known = {module_name(path, root) for path in files}
    found = []
    for path in files:
        source = unit(module_name(path, root), known)
        for line, target in imports_of(path, root):
            dest = unit(target, known)
            edge = (str(path.relative_to(root.parent)), line, source, dest)
            if dest and dest != source and edge not in found:
                found.append(edge)
    return found


def upward(found) -> list[str]:
    """Each import of a package from a higher layer (or of one that is in no layer)."""
    problems = []
    for file, line, source, dest in found:
        if source not in RANK or dest not in RANK:
            missing = source if source not in RANK else dest
            problems.append(f"{file}:{line}: package {missing!r} is in no layer; add it to "
                            "LAYERS here and to docs/architecture.md")
        elif RANK[dest] > RANK[source]:
            problems.append(f"{file}:{line}: {source} (layer {RANK[source]}) imports {dest} "
                            f"(layer {RANK[dest]}), which is above it; move what it needs down")
    return sorted(set(problems))


def cycle(found) -> list[str]:
    """One loop in the package graph as [a, b, ..., a], or [] when there is none."""
    graph: dict[str, set[str]] = {}
    for _, _, source, dest in found:
        graph.setdefault(source, set()).add(dest)
    state: dict[str, str] = {}

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (loop := visit(nxt, path + [nxt])):
                return loop
        state[node] = "done"
        return []

    for start in sorted(graph):
        if start not in state and (loop := visit(start, [start])):
            return loop
    return []


def test_no_package_imports_from_a_layer_above_it():
    assert upward(edges(ROOT)) == []


def test_the_package_graph_has_no_cycle():
    found = edges(ROOT)
    loop = cycle(found)
    where = [f"{f}:{line}: {s} -> {d}" for f, line, s, d in found
             if (s, d) in itertools.pairwise(loop)]
    assert loop == [], f"{' -> '.join(loop)}\n" + "\n".join(where)


def test_the_prompt_builder_is_pure():
    """conversation/prompt/ takes data and returns data: it reaches neither the database nor
    the model, only text rules and its own modules."""
    prompt = ROOT / "conversation" / "prompt"
    allowed = ("mediabot.text", "mediabot.conversation.prompt")
    reached = [f"{path.relative_to(ROOT.parent)}:{line}: {target}"
               for path in sorted(prompt.rglob("*.py"))
               for line, target in imports_of(path, ROOT)
               if not target.startswith(allowed)]
    assert reached == []


def test_the_conversation_never_names_seerr():
    """Seerr is a feature the daemon wires in (``app.build_services``: the approvals' front
    and each asker's link): the conversation imports nothing of it, so swapping or dropping
    the request manager never touches the engine."""
    conversation = ROOT / "conversation"
    reached = [f"{path.relative_to(ROOT.parent)}:{line}: {target}"
               for path in sorted(conversation.rglob("*.py"))
               for line, target in imports_of(path, ROOT)
               if target.startswith(("mediabot.seerr", "mediabot.approvals.seerr"))]
    assert reached == []


# -- the checker itself, on a made-up package ----------------------------------------------------

def write(root: Path, files: dict[str, str]) -> Path:
    for name, body in files.items():
        path = root / "mediabot" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
    return root / "mediabot"


def test_an_import_inside_a_function_that_reaches_up_is_named_with_its_line(tmp_path):
    root = write(tmp_path, {"__init__.py": "", "scheduler.py": "def webhook_url(u): ...\n",
                            "ops/__init__.py": "", "ops/checks.py":
                            "import os\n\n\ndef check():\n"
                            "    from mediabot.scheduler import webhook_url\n"})
    assert upward(edges(root)) == [
        "mediabot/ops/checks.py:5: ops (layer 10) imports scheduler (layer 12), which is above it; "
        "move what it needs down"]


def test_relative_imports_and_downward_ones_pass(tmp_path):
    root = write(tmp_path, {"__init__.py": "", "text/__init__.py": "", "text/sms.py": "",
                            "arr/__init__.py": "", "arr/notices.py":
                            "from ..text import sms\nfrom mediabot.store import db\n",
                            "store/__init__.py": "", "store/db.py": "from . import users\n",
                            "store/users.py": ""})
    assert edges(root) == [("mediabot/arr/notices.py", 1, "arr", "text"),
                           ("mediabot/arr/notices.py", 2, "arr", "store")]
    assert upward(edges(root)) == []


def test_a_package_in_no_layer_is_refused_with_the_fix(tmp_path):
    root = write(tmp_path, {"__init__.py": "", "config.py": "",
                            "extras/__init__.py": "from mediabot import config\n"})
    assert upward(edges(root)) == [
        "mediabot/extras/__init__.py:1: package 'extras' is in no layer; add it to LAYERS "
        "here and to docs/architecture.md"]


@pytest.mark.parametrize("files, loop", [
    ({"scheduler.py": "import mediabot.daemon\n", "daemon.py": "from mediabot import scheduler\n"},
     ["daemon", "scheduler", "daemon"]),
    ({"app.py": "import mediabot.cli\n", "cli.py": "def f():\n    import mediabot.scheduler\n",
      "scheduler.py": "from mediabot.app import x\n"}, ["app", "cli", "scheduler", "app"]),
    ({"app.py": "import mediabot.cli\n", "cli.py": "import mediabot.scheduler\n",
      "scheduler.py": ""}, []),
])
def test_top_modules_may_import_each_other_but_not_round_a_loop(tmp_path, files, loop):
    root = write(tmp_path, {"__init__.py": "", **files})
    assert upward(edges(root)) == []
    assert cycle(edges(root)) == loop
