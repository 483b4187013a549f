"""The engine's entry points: which tools a user may see, their OpenAI schemas, argument
checking, running a tool to a ``ToolResult`` and describing a destructive action.

``run_tool`` never raises for a tool or Sonarr/Radarr failure: the result's data is
``{"error": "..."}``, which the model explains; an unexpected bug is logged and reported
the same way, so a turn never ends with a stack trace or an empty SMS.
"""

import json
import logging
import traceback
from dataclasses import replace
from functools import partial

from mediabot.arr.tools.base import Service, Tool, ToolContext, ToolError, ToolResult
from mediabot.arr.tools.catalog import FORMER_NAMES, TOOLS
from mediabot.arr.tools.json_schema import for_model, validate
from mediabot.text.masking import scrub

log = logging.getLogger(__name__)
_BY_NAME = {tool.name: tool for tool in TOOLS}


def available_tools(role: str, *, sonarr: bool, radarr: bool) -> list[Tool]:
    """Tools this role may use, given which services are configured."""
    configured = {name for name, on in ((Service.SONARR, sonarr), (Service.RADARR, radarr)) if on}
    return [tool for tool in TOOLS
            if role in tool.roles and configured.intersection(tool.services)]


def get_tool(name: str) -> Tool | None:
    """The tool called ``name``, or by a former name (``catalog.FORMER_NAMES``)."""
    return _BY_NAME.get(current_name(name))


def current_name(name: str) -> str:
    """``name``, or the tool it was merged into."""
    return FORMER_NAMES.get(name, name)


def tool_schemas(tools: list[Tool]) -> list[dict]:
    """The OpenAI ``tools=`` list: names, descriptions and the model's view of the
    parameters (``json_schema.for_model``); sent on every call, so every byte counts."""
    return [{"type": "function",
             "function": {"name": tool.name, "description": tool.description,
                          "parameters": for_model(tool.parameters)}}
            for tool in tools]


def parse_arguments(tool: Tool, raw: object) -> dict:
    """The arguments as the model sent them (a JSON string, an object, anything), decoded
    and validated; defaults filled. ToolError names the problem."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        raw = {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ToolError(f"the arguments are not valid JSON ({exc.msg} at character "
                            f"{exc.pos}); send a JSON object") from None
    if raw is None:   # "null": what some local servers send for a call without arguments
        raw = {}
    if not isinstance(raw, dict):
        raise ToolError("the arguments must be a JSON object")
    return validate(tool.parameters, tool.former(raw) if tool.former else raw)


def current_arguments(name: str, arguments: dict) -> dict:
    """A stored call's arguments as its tool takes them today (``Tool.former``), unchecked:
    what the eval compares, whichever shape the model sent."""
    tool = get_tool(name)
    return tool.former(arguments) if tool is not None and tool.former else arguments


def run_tool(tool: Tool, ctx: ToolContext, raw_arguments: object) -> ToolResult:
    """Run a tool: its result, with ``{"error": "..."}`` as the data on any failure.

    What the servers said goes to the model, the history and texts: a download client's
    URL in a queue warning may carry its password or apikey=, so the result is given the
    scrubber for these servers, which it applies when it becomes text.
    """
    try:
        _check_allowed(tool, ctx)
        result = tool.handler(ctx, parse_arguments(tool, raw_arguments))
    except ToolError as exc:
        log.info("tool %s answered with an error", tool.name)
        log.debug("tool %s error: %s", tool.name, exc)  # may quote what the user asked for
        result = {"error": str(exc)}
    except Exception:  # noqa: BLE001 - a bug must not end the user's turn
        log.error("tool %s crashed:\n%s", tool.name, _scrubbed_traceback(ctx))
        result = {"error": f"{tool.name} failed unexpectedly; the operator can see why in the log"}
    if not isinstance(result, ToolResult):
        result = ToolResult(result)
    return replace(result, scrub=partial(_scrubbed, ctx=ctx))


def direct_answer(tool: Tool, ctx: ToolContext, raw_arguments: object, result: ToolResult,
                  budget: int, asked: str) -> str | None:
    """The person's answer to ``asked`` (their text) in the tool's own words
    (``Tool.direct``), in the asker's language and within ``budget`` characters; None when
    the model must word the result
    (no rule for this tool, an error, or a result the rule leaves to the model). What the
    servers said in it passes the result's scrubber, as the model's copy does."""
    if tool.direct is None or result.error is not None:
        return None
    try:
        arguments = parse_arguments(tool, raw_arguments)
    except ToolError:
        return None
    text = tool.direct(result.data, arguments, ctx.language, budget, asked)
    return result.scrub(text) if text else None


def describe_action(tool: Tool, ctx: ToolContext, raw_arguments: object) -> str:
    """The confirmation question for a destructive call; ToolError when it cannot be done."""
    _check_allowed(tool, ctx)
    if tool.describe is None:
        raise ToolError(f"{tool.name} needs no confirmation")
    return tool.describe(ctx, parse_arguments(tool, raw_arguments))


def _check_allowed(tool: Tool, ctx: ToolContext) -> None:
    if ctx.role not in tool.roles:
        raise ToolError(f"{tool.name} is only for admins")


def _scrubbed_traceback(ctx: ToolContext) -> str:
    text = traceback.format_exc()
    for client in (ctx.sonarr, ctx.radarr):
        if client is not None:
            text = client.scrub(text)
    return text


def _scrubbed(result: str, ctx: ToolContext) -> str:
    """URL userinfo, query strings, key values and the servers' keys out of a result
    (titles, hosts and paths stay: see ``masking``)."""
    result = scrub(result)
    for client in (ctx.sonarr, ctx.radarr):
        if client is not None:
            result = client.scrub(result, request_words=False)
    return result
