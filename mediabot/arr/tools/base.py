"""The shapes every tool shares: the tool record, the per-call context and the error types.

Kept apart from the registry so that the service modules (sonarr.py, radarr.py), the
choices and the client (arr.py) can raise ``ToolError`` without importing the catalogue of
tools. It imports none of them: ``ServiceClient`` names what a tool needs of a client, so
base, choices and arr import in one direction only.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Protocol
from collections.abc import Callable

from mediabot.config import ArrConfig
from mediabot.arr.tools.metadata import Metadata

SAFE = "safe"
DESTRUCTIVE = "destructive"
EVERYONE = frozenset({"admin", "member"})
ADMINS = frozenset({"admin"})


class ToolError(Exception):
    """A failure the model can explain to the user; ``str(exc)`` is one short sentence."""


class Unreachable(ToolError):
    """The server did not answer (refused, timed out, or is not Sonarr/Radarr at all)."""


class KeyRejected(ToolError):
    """The server answered 401: the configured API key is wrong."""


class ServiceClient(Protocol):
    """What tools and checks use of a Sonarr/Radarr client (``arr.ArrClient`` is the one)."""

    kind: str
    name: str
    shown_url: str
    config: ArrConfig
    metadata: Metadata

    def run(self, fn: Callable[..., Any], *args, not_found: str | None = None) -> Any: ...

    def scrub(self, text: str, *, request_words: bool = True) -> str: ...


class SearchGate(Protocol):
    """The per-title limit on searching again (``searchlimit.SearchLimit`` is the one)."""

    def claim(self, service: str, external_id: int) -> dt.datetime | None: ...

    def release(self, service: str, external_id: int) -> None: ...


class AlreadyInLibrary(ToolError):
    """Raised by the add tools; ``complete`` is False while files are still missing."""

    def __init__(self, title: str, complete: bool):
        super().__init__(f"{title} is already in the library")
        self.title = title
        self.complete = complete


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict
    tier: str
    roles: frozenset[str]
    services: tuple[str, ...]
    handler: Callable[[ToolContext, dict], dict]
    describe: Callable[[ToolContext, dict], str] | None = None


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass
class ToolContext:
    """What a tool call may touch: the configured clients and who is asking.

    ``record_request(service, external_id, title, seasons=0, added=False)`` remembers that
    this user wants a text when the title arrives; ``added=True`` (with the seasons added)
    when the call added it, which weekly quotas count (a "tell me" alone never does);
    ``clock`` returns an aware datetime in the household's zone, in which the tools show
    times (tests pin it). ``gate(service, external_id, title, tool, arguments, seasons)``,
    when set, is asked before an add runs: it raises ToolError (over quota), returns the
    result to give instead (held for an admin's approval), or returns None to add now.
    ``searches`` limits how often one title may be searched again (None: no limit).
    ``offered`` (title, year, poster URL of each search hit) and ``added`` (poster URLs of
    the titles added) collect what the turn showed, for posters by MMS, off the results.
    """

    sonarr: ServiceClient | None
    radarr: ServiceClient | None
    user_id: int | None = None
    role: str = "member"
    record_request: Callable[..., None] | None = None
    clock: Callable[[], dt.datetime] = utc_now
    gate: Callable[[str, int, str, str, dict, int], dict | None] | None = None
    searches: SearchGate | None = None
    offered: list[tuple[str, int | None, str | None]] = field(default_factory=list)
    added: list[str] = field(default_factory=list)

    def client(self, service: str) -> ServiceClient:
        """The client for "sonarr"/"radarr"; ToolError when that service is not configured."""
        client = self.sonarr if service == "sonarr" else self.radarr
        if client is None:
            raise ToolError(f"{service.title()} is not set up on this server")
        return client
