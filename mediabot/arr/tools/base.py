"""The shapes every tool shares: the tool record, the per-call context and the error types.

Kept apart from the registry so that the service modules (sonarr.py, radarr.py), the
choices and the client (server.py) can raise ``ToolError`` without importing the catalogue of
tools. It imports none of them: ``ServiceClient`` names what a tool needs of a client, so
base, choices and server import in one direction only.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, TypeAlias

from arrapi import RadarrAPI, SonarrAPI

from mediabot.arr.tools.metadata import Metadata
from mediabot.config import ArrConfig
from mediabot.store.db import Role
from mediabot.text.language import Language, load
from mediabot.text.localtime import Clock


class Tier(StrEnum):
    """Whether a tool runs on the model's word (SAFE) or only after the person's Y
    (DESTRUCTIVE: it needs a ``describe`` for the question)."""

    SAFE = "safe"
    DESTRUCTIVE = "destructive"


class Service(StrEnum):
    """A server a tool needs: the config section, the hook's path and ``requests.service``."""

    SONARR = "sonarr"
    RADARR = "radarr"


# What ``ServiceClient.run`` hands a tool's function. arrapi ships no type information, so
# this names the role more than it checks it.
ArrApi: TypeAlias = SonarrAPI | RadarrAPI
EVERYONE = frozenset(Role)
ADMINS = frozenset({Role.ADMIN})


class ToolError(Exception):
    """A failure the model can explain to the user; ``str(exc)`` is one short sentence."""


class Unreachable(ToolError):
    """The server did not answer (refused, timed out, or is not Sonarr/Radarr at all)."""


class KeyRejected(ToolError):
    """The server answered 401: the configured API key is wrong."""


class ServiceClient(Protocol):
    """What tools and checks use of a Sonarr/Radarr client (``server.ArrClient`` is the one)."""

    kind: Service
    name: str
    shown_url: str
    config: ArrConfig
    metadata: Metadata

    def run(self, fn: Callable[..., Any], *args: Any, not_found: str | None = None) -> Any: ...

    def scrub(self, text: str, *, request_words: bool = True) -> str: ...


class RequestRecorder(Protocol):
    """``ToolContext.record_request``: who wants a text when a title lands (``requests``)."""

    def __call__(self, service: Service, external_id: int, title: str, /, *,
                 seasons: int = ..., added: bool = ...) -> None: ...


class SearchGate(Protocol):
    """The per-title limit on searching again (``arr.searches.SearchLimit`` is the one)."""

    def claim(self, service: Service, external_id: int) -> dt.datetime | None: ...

    def release(self, service: Service, external_id: int) -> None: ...


class SeerrRequests(Protocol):
    """``ToolContext.seerr``: the household's request manager (``seerr.add.SeerrLink`` is
    the one). With it set, adds are requests filed as the asker, and a search shows what it
    knows beside each hit."""

    def request_movie(self, ctx: ToolContext, tmdb_id: int) -> dict: ...

    def request_series(self, ctx: ToolContext, tvdb_id: int,
                       seasons: str | list[int]) -> dict: ...

    def annotate(self, query: str, hits: list[dict]) -> list[str]: ...

class AlreadyInLibrary(ToolError):
    """Raised by the add tools; ``complete`` is False while files are still missing,
    ``more_coming`` True for a series that is still airing (new episodes will arrive)."""

    def __init__(self, title: str, complete: bool, more_coming: bool = False):
        super().__init__(f"{title} is already in the library")
        self.title = title
        self.complete = complete
        self.more_coming = more_coming


def _unchanged(text: str) -> str:
    return text


@dataclass(frozen=True)
class ToolResult:
    """What one tool call gave: ``data`` for the model, and beside it, never in it (the
    model needs no URLs), the search hits it was ``offered`` (title, year, poster URL or
    None) and the posters of the titles ``added``, for posters by MMS.

    ``for_model`` is the one place it becomes the model's text: compact JSON, passed
    through ``scrub``, because what the servers said may quote a download client's URL
    with its password. ``error`` and ``message`` go into texts, so they pass it too.
    A handler returns a plain dict or, to hand posters beside it, a ToolResult.
    """

    data: dict
    offered: tuple[tuple[str, int | None, str | None], ...] = ()
    added: tuple[str, ...] = ()
    scrub: Callable[[str], str] = field(default=_unchanged, repr=False, compare=False)

    @property
    def error(self) -> str | None:
        """Why the call failed (one sentence for the model or a text), None when it ran."""
        return self._sentence("error")

    @property
    def message(self) -> str | None:
        """The tool's own sentence about what it did, when it wrote one."""
        return self._sentence("message")

    def for_model(self) -> str:
        return self.scrub(json.dumps(self.data, separators=(",", ":"), ensure_ascii=False))

    def _sentence(self, key: str) -> str | None:
        value = self.data.get(key)
        return None if value is None else self.scrub(str(value))


@dataclass(frozen=True)
class AddRequest:
    """An add the household rules are asked about before it runs (``ToolContext.gate``):
    the title as Sonarr/Radarr names it, the tool and its checked ``arguments`` (what an
    approved request runs again, as the member asked it) and the ``seasons`` a weekly
    quota counts (0 for a movie)."""

    service: Service
    external_id: int
    title: str
    tool: str
    arguments: dict
    seasons: int = 0


@dataclass(frozen=True, kw_only=True)
class Tool:
    """One tool as the catalogue declares it: ``name``, ``description`` and ``parameters``
    (a JSON schema) are what the model reads; the ``roles`` that see it, the ``services``
    it needs (any one of them), its ``tier``; ``handler(ctx, args)`` runs it and, for a
    DESTRUCTIVE tool, ``describe(ctx, args)`` writes the question the person confirms.
    ``former(args)``, when set, turns arguments in a shape the tool took before (stored
    calls, held approvals, a model copying an older call) into today's, before they are
    checked; it leaves anything else as it is. ``direct(data, args, language, budget,
    asked)``, when set, is the tool's rule for answering the person itself: the text (in
    ``language``, within ``budget`` characters) when the result is the whole answer to
    ``asked`` (the person's text), None when the model must put it into words
    (``answers``)."""

    name: str
    description: str
    parameters: dict
    tier: Tier
    roles: frozenset[Role]
    services: tuple[Service, ...]
    handler: Callable[[ToolContext, dict], dict | ToolResult]
    describe: Callable[[ToolContext, dict], str] | None = None
    former: Callable[[dict], dict] | None = None
    direct: Callable[[dict, dict, Language, int, str], str | None] | None = None


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass
class ToolContext:
    """What a tool call may touch: the configured clients and who is asking.

    ``record_request(service, external_id, title, seasons=0, added=False)`` remembers that
    this user wants a text when the title arrives; ``added=True`` (with the seasons added)
    when the call added it, which weekly quotas count (a "tell me" alone never does);
    ``clock`` returns an aware datetime in the household's zone, in which the tools show
    times (tests pin it). ``gate(AddRequest)``, when set, is asked before an add runs: it
    raises ToolError (over quota), returns the result to give instead (held for an admin's
    approval), or returns None to add now. ``searches`` limits how often one title may be
    searched again (None: no limit). ``language`` is the asker's: the dates and sizes in
    results follow its locale (the rest stays English, for the model), and the removal
    question, which the person reads, is in it. ``seerr``, with ``[seerr]`` set: adds are
    Seerr requests filed as the asker's own Seerr user (``SeerrRequests``).
    """

    sonarr: ServiceClient | None
    radarr: ServiceClient | None
    user_id: int | None = None
    role: str = Role.MEMBER
    record_request: RequestRecorder | None = None
    clock: Clock = utc_now
    gate: Callable[[AddRequest], dict | None] | None = None
    searches: SearchGate | None = None
    language: Language = field(default_factory=lambda: load("en"))
    seerr: SeerrRequests | None = None

    def client(self, service: Service) -> ServiceClient:
        """The client for ``service``; ToolError when that service is not configured."""
        client = self.sonarr if service == Service.SONARR else self.radarr
        if client is None:
            raise ToolError(f"{service.title()} is not set up on this server")
        return client
