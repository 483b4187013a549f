"""The conformance matrix: every prompt shape through every vendored chat template.

A cell is one (template, shape, mode): the shape's stored history goes through mediabot's
real prompt builder, the result through the template as a server would render it
(``tests.fakes.chat_templates``), and the rendered text is searched for every message's text
and every tool call's name and arguments. A cell is

- ``ok``: rendered, nothing missing;
- ``raised``: the template raised: the server would answer HTTP 400 (or 500);
- ``dropped``: rendered, but some text or call is not in it: the model never sees it;
- ``n/a``: the template is not the one a server would use, or it cannot take this shape
  whatever a client sends: a model's ``tool_use`` template for a request without tools
  (servers then use its default template); a template with no tool rendering at all
  (Gemma 3, Phi-3.5) given a shape with tool calls: servers run those models' tool turns
  through a tool format of their own (vLLM's gemma3_pythonic template, which is in the
  matrix, or llama-cpp-python's chatml-function-calling); or a template that needs arguments
  as an object (Qwen3.5, vLLM's gemma3_pythonic) on a server that passes them on as the JSON
  string the OpenAI API defines.

``known`` lists what a template loses by its own design, never counted as a drop: Mistral's
v3 templates write the system prompt only into a final user message, so on the second call
of a tool round (the prompt ends in a tool result) it is not rendered at all; Granite 3.3
and DeepSeek-R1-Distill-Llama never write earlier tool calls (``drops_calls``).

``python -m tests.conformance`` prints the matrix.
"""

import copy
import json
from dataclasses import dataclass, field

import jinja2

from tests.fakes.chat_templates import MODES, TEMPLATES, object_arguments, render
from tests.prompt_shapes import SHAPES, Shape, newest_user_text, offered_tools, prompt


@dataclass
class Cell:
    template: str
    shape: str
    mode: str
    status: str                         # ok / raised / dropped / n/a
    detail: str = ""
    known: list[str] = field(default_factory=list)


def check_cell(template: str, shape: Shape, mode: str, messages: list[dict] | None = None,
               tools: list[dict] | None = None) -> Cell:
    """Render one shape's prompt through one template; see the module doc for the verdicts."""
    messages = prompt(shape) if messages is None else messages
    tools = offered_tools(shape) if tools is None else tools
    spec = TEMPLATES[template]
    has_calls = any(m.get("tool_calls") for m in messages)
    if has_calls and not spec.tools:
        return Cell(template, shape.name, mode, "n/a", "the template has no tool rendering")
    if not tools and spec.tool_use:
        return Cell(template, shape.name, mode, "n/a",
                    "a request without tools gets the model's default template, not tool_use")
    if has_calls and mode == "passthrough" and spec.object_arguments:
        return Cell(template, shape.name, mode, "n/a",
                    "the template needs arguments as an object, not the API's JSON string")
    try:
        text = render(template, messages, tools, mode=mode)
    except (jinja2.TemplateError, TypeError, ValueError) as exc:
        return Cell(template, shape.name, mode, "raised", f"{type(exc).__name__}: {exc}")
    missing, known = missing_parts(messages, text, template, tools, mode)
    if shape.history and not appears(newest_user_text(shape), text):
        missing.append("the newest user message")
    if missing:
        return Cell(template, shape.name, mode, "dropped", "; ".join(missing), known)
    return Cell(template, shape.name, mode, "ok", known=known)


def missing_parts(messages: list[dict], text: str, template: str, tools=None,
                  mode: str = "vllm") -> tuple[list, list]:
    """What of ``messages`` is not in ``text``: (real drops, losses the template is known for).

    A call's name is in the tool list anyway, so whether the call itself was written is
    tested by renaming it to a sentinel and rendering again.
    """
    spec = TEMPLATES[template]
    missing, known = [], []
    final_user = messages[-1]["role"] == "user"
    for index, message in enumerate(messages):
        content = message.get("content")
        if isinstance(content, str) and content.strip() and not appears(content, text):
            where = f"message {index} ({message['role']}) text {content[:40]!r}"
            if (message["role"] == "system" and index == 0 and not final_user
                    and spec.system_needs_final_user):
                known.append(where + ": the template writes it only before a final user "
                                     "message")
            else:
                missing.append(where)
        for number, call in enumerate(message.get("tool_calls") or ()):
            gaps = [f"message {index} call {gap}" for gap in _call_gaps(call, text)]
            if not _call_written(messages, index, number, template, tools, mode):
                gaps.append(f"message {index} call {number} is not written at all")
            if gaps and spec.drops_calls:
                known += [f"{gap}: {spec.drops_calls}" for gap in gaps]
            else:
                missing += gaps
    return missing, known


def _call_written(messages, index, number, template, tools, mode) -> bool:
    sentinel = f"zz_sentinel_{index}_{number}"
    renamed = copy.deepcopy(messages)
    renamed[index]["tool_calls"][number]["function"]["name"] = sentinel
    try:
        return sentinel in render(template, renamed, tools, mode=mode)
    except (jinja2.TemplateError, TypeError, ValueError):
        return False


def _call_gaps(call: dict, text: str) -> list[str]:
    function = call.get("function") or {}
    name = function.get("name") or ""
    gaps = []
    for key, value in object_arguments(function.get("arguments")).items():
        if key not in text:
            gaps.append(f"{name} argument name {key!r}")
        gaps += [f"{name} argument {key}={leaf!r}" for leaf in _leaves(value)
                 if not any(form in text for form in _value_forms(leaf))]
    return gaps


def _leaves(value):
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def _value_forms(value) -> set[str]:
    """How a template may write one argument value: JSON or Python, as is or escaped inside
    a JSON string (twice, when the arguments string itself goes through ``tojson``)."""
    if isinstance(value, str):
        return _escaped({value})
    return _escaped({json.dumps(value), str(value), repr(value)})


def _escaped(forms: set[str]) -> set[str]:
    for _ in range(2):
        forms = forms | {json.dumps(f, ensure_ascii=ascii)[1:-1] for f in forms
                         for ascii in (True, False)}
    return forms


def appears(content: str, text: str) -> bool:
    """Is ``content`` in ``text`` as written, trimmed, or escaped inside a JSON string?"""
    return any(form in text for form in _escaped({content, content.strip()}))


def run_matrix(templates=None, shapes=SHAPES, modes=MODES) -> list[Cell]:
    requests = {shape.name: (prompt(shape), offered_tools(shape)) for shape in shapes}
    return [check_cell(template, shape, mode, *requests[shape.name])
            for template in (templates or TEMPLATES) for shape in shapes for mode in modes]


def counts(cells: list[Cell]) -> dict[str, int]:
    out = {"cells": len(cells)}
    for status in ("ok", "raised", "dropped", "n/a"):
        out[status] = sum(c.status == status for c in cells)
    out["known template losses"] = sum(bool(c.known) for c in cells)
    return out


def table(cells: list[Cell]) -> str:
    """One line per template: ok / raised / dropped / n/a over its shapes and modes."""
    lines = [f"{'template':28s} {'ok':>4s} {'raised':>6s} {'dropped':>7s} {'n/a':>4s}"]
    for template in dict.fromkeys(c.template for c in cells):
        row = counts([c for c in cells if c.template == template])
        lines.append(f"{template:28s} {row['ok']:4d} {row['raised']:6d} {row['dropped']:7d} "
                     f"{row['n/a']:4d}")
    total = counts(cells)
    lines.append(f"{len(TEMPLATES)} templates x {len(SHAPES)} shapes x {len(MODES)} modes: "
                 + ", ".join(f"{k} {v}" for k, v in total.items()))
    return "\n".join(lines)


def failures(cells: list[Cell]) -> str:
    return "\n".join(f"{c.template} | {c.shape} | {c.mode}: {c.status}: {c.detail}"
                     for c in cells if c.status in ("raised", "dropped"))


if __name__ == "__main__":
    result = run_matrix()
    print(table(result))
    print(failures(result))
