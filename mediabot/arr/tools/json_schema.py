"""A small JSON-schema checker for tool arguments: the subset our tool schemas use.

Models send arguments as a JSON string that may be invalid, may miss required keys, may
invent keys or use the wrong types. ``validate`` returns the arguments with defaults filled
in, or raises ``ToolError`` naming the first problem in words the model can act on.
Supported: type (one or a list), enum, properties, required, additionalProperties (false),
items, minItems, minimum, maximum, minLength, maxLength, pattern, default and oneOf/anyOf
(first branch that fits). Errors quote at most a few dozen characters of a bad value; a
parameter marked ``ERROR`` fails with its own sentence instead.
"""

import re
from typing import Any

from mediabot.arr.tools.base import ToolError

# A decoded JSON value (what a model sent): checked here at run time, so typed as Any.
Json = Any

_TYPES = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}
_WORDS = {"string": "a string", "integer": "a whole number", "number": "a number",
          "boolean": "true or false", "array": "a list", "object": "an object",
          "null": "null"}
ERROR = "x-error"
"""A parameter marked ``{ERROR: "sentence"}`` that does not fit (its type, its pattern) fails
with that sentence rather than the checker's words: for a value with a form of its own (a
title's id), what a model can act on is an example of the form."""


def validate(schema: dict, value: Json, where: str = "arguments") -> Json:
    """Check ``value`` against ``schema``; return it with object defaults filled in."""
    if ERROR in schema:
        try:
            return validate({key: sub for key, sub in schema.items() if key != ERROR},
                            value, where)
        except ToolError:
            raise ToolError(schema[ERROR]) from None
    branches = schema.get("oneOf") or schema.get("anyOf")
    if branches:
        return _validate_branches(branches, value, where)
    _check_type(schema, value, where)
    if "enum" in schema and value not in schema["enum"]:
        options = ", ".join(repr(option) for option in schema["enum"])
        raise ToolError(f"{where} must be one of {options}, not {_shown(value)}")
    _check_bounds(schema, value, where)
    if isinstance(value, dict):
        return _validate_object(schema, value, where)
    if isinstance(value, list) and "items" in schema:
        return [validate(schema["items"], item, f"{where}[{i}]") for i, item in enumerate(value)]
    return value


def _validate_branches(branches: list[dict], value: Json, where: str) -> Json:
    problems = []
    for branch in branches:
        try:
            return validate(branch, value, where)
        except ToolError as exc:
            problems.append(str(exc))
    raise ToolError(" or ".join(problems))


def _check_type(schema: dict, value: Json, where: str) -> None:
    kinds = schema.get("type")
    if kinds is None:
        return
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if not any(_TYPES[kind](value) for kind in kinds):
        wanted = " or ".join(_WORDS[kind] for kind in kinds)
        raise ToolError(f"{where} must be {wanted}, not {_describe(value)}")


def _check_bounds(schema: dict, value: Json, where: str) -> None:
    if _TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            raise ToolError(f"{where} must be at least {schema['minimum']}, not {value}")
        if "maximum" in schema and value > schema["maximum"]:
            raise ToolError(f"{where} must be at most {schema['maximum']}, not {value}")
    if isinstance(value, str) and len(value.strip()) < schema.get("minLength", 0):
        raise ToolError(f"{where} must not be empty")
    if isinstance(value, str) and not re.search(schema.get("pattern", ""), value):
        raise ToolError(f"{where} must match {schema['pattern']}, not {_shown(value)}")
    if isinstance(value, str) and len(value) > schema.get("maxLength", len(value)):
        raise ToolError(f"{where} must be at most {schema['maxLength']} characters, "
                        f"not {len(value)}")
    if isinstance(value, list) and len(value) < schema.get("minItems", 0):
        raise ToolError(f"{where} must not be an empty list")


def _validate_object(schema: dict, value: dict, where: str) -> dict:
    properties = schema.get("properties", {})
    prefix = "" if where == "arguments" else f"{where}."
    if schema.get("additionalProperties") is False:
        unknown = sorted(set(value) - set(properties))
        if unknown:
            known = ", ".join(properties) or "none"
            raise ToolError(f"unknown argument {prefix}{unknown[0]}; the arguments are: {known}")
    for name in schema.get("required", []):
        if name not in value:
            raise ToolError(f"missing required argument {prefix}{name}")
    result = {}
    for name, sub in properties.items():
        if name in value:
            result[name] = validate(sub, value[name], f"{prefix}{name}")
        elif "default" in sub:
            result[name] = sub["default"]
    return result


def _describe(value: Json) -> str:
    for kind in ("boolean", "integer", "number", "string", "array", "object", "null"):
        if _TYPES[kind](value):
            shown = _shown(value) if kind in ("string", "integer", "number") else ""
            return f"{_WORDS[kind]} {shown}".strip()
    return type(value).__name__


def _shown(value: Json, limit: int = 40) -> str:
    """repr for an error message, cut short: a model's runaway argument is not echoed back."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 4] + "...'"


HIDDEN = "x-hidden"
"""A parameter marked ``{HIDDEN: True}`` is checked and accepted but not shown to the model:
one it never needs (the defaults serve), kept for calls stored or held before it was hidden."""
MODEL_KEYWORDS = frozenset({"type", "enum", "properties", "required", "items", "anyOf",
                            "oneOf", "description"})


def for_model(schema: dict) -> dict:
    """What the model is shown of a schema: types, choices and descriptions only.

    Bounds, lengths, defaults, ``additionalProperties`` and ``HIDDEN`` parameters cost bytes
    on every call and change nothing a model does well; ``validate`` still enforces them
    and its errors say what to fix. An empty ``required`` list is left out.
    """
    shown = {}
    for key, value in schema.items():
        if key not in MODEL_KEYWORDS or (key == "required" and not value):
            continue
        if key == "properties":
            value = {name: for_model(sub) for name, sub in value.items()
                     if not sub.get(HIDDEN)}
        elif key in ("anyOf", "oneOf"):
            value = [for_model(branch) for branch in value]
        elif key == "items":
            value = for_model(value)
        shown[key] = value
    return shown
