"""The tools package imports in one direction: no module reaches back to one that imports
it, not even inside a function or under TYPE_CHECKING (either hides a circle that breaks
the day someone moves the import to the top)."""

import ast
from pathlib import Path

import mediabot.arr.tools

PACKAGE = Path(mediabot.arr.tools.__file__).parent


def imported_tool_modules(path: Path) -> set[str]:
    """Every ``mediabot.arr.tools.X`` that module imports, anywhere in its source."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "mediabot.arr.tools":
                found |= {alias.name for alias in node.names}
            elif node.module.startswith("mediabot.arr.tools."):
                found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            found |= {alias.name.split(".")[2] for alias in node.names
                      if alias.name.startswith("mediabot.arr.tools.")}
    return found & {p.stem for p in PACKAGE.glob("*.py")} - {path.stem}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    def visit(node, trail):
        if node in trail:
            return trail[trail.index(node):] + [node]
        for nxt in sorted(graph.get(node, ())):
            cycle = visit(nxt, trail + [node])
            if cycle:
                return cycle
        return None
    for start in sorted(graph):
        cycle = visit(start, [])
        if cycle:
            return cycle
    return None


def test_no_import_circle_in_the_tools_package():
    graph = {path.stem: imported_tool_modules(path) for path in PACKAGE.glob("*.py")
             if path.stem != "__init__"}
    assert find_cycle(graph) is None


def test_base_and_choices_import_no_client():
    graph = {path.stem: imported_tool_modules(path) for path in PACKAGE.glob("*.py")}
    assert "server" not in graph["base"] | graph["choices"]


def test_the_cycle_finder_finds_a_hidden_circle():
    assert find_cycle({"arr": {"choices"}, "choices": {"base", "arr"}, "base": set()}) == [
        "arr", "choices", "arr"]
