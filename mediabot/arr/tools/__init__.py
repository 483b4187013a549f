"""Sonarr and Radarr tools for the model, reached through arrapi.

The engine needs only what is exported here; see registry.py for the entry points and
catalog.py for the tools themselves.
"""

from mediabot.arr.tools.arr import ArrClient
from mediabot.arr.tools.base import Tool, ToolContext, ToolError
from mediabot.arr.tools.registry import (available_tools, describe_action, get_tool,
                                            parse_arguments, run_tool, tool_schemas)

__all__ = [
    "ArrClient", "Tool", "ToolContext", "ToolError", "available_tools", "describe_action",
    "get_tool", "parse_arguments", "run_tool", "tool_schemas",
]
