"""Sonarr and Radarr tools for the model, reached through arrapi.

The engine needs only what is exported here; see registry.py for the entry points and
catalog.py for the tools themselves.
"""

from mediabot.arr.tools.base import AddRequest, Tool, ToolContext, ToolError, ToolResult
from mediabot.arr.tools.registry import (
                                            available_tools,
                                            current_arguments,
                                            current_name,
                                            describe_action,
                                            direct_answer,
                                            get_tool,
                                            parse_arguments,
                                            run_tool,
                                            tool_schemas,
)
from mediabot.arr.tools.server import ArrClient

__all__ = [
    "AddRequest", "ArrClient", "Tool", "ToolContext", "ToolError", "ToolResult",
    "available_tools", "current_arguments", "current_name", "describe_action", "direct_answer",
    "get_tool",
    "parse_arguments", "run_tool", "tool_schemas",
]
