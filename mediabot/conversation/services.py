"""The service bundle a turn runs against, and what is worked out from it for one person.

``Services`` is built once from config (``app.build_services``), and tests hand in fakes:
the model, the Sonarr/Radarr clients (None when not set up), the clock, the rolling
summarizer, the approvals (``approvals.front``) and, when adds are filed as the asker in a
request manager, the factory of each asker's link to it (``link_for``, handed in). From it
and a user come the ``Frame`` a prompt is built around (``build_frame``), the tools that
user may see (``tools_for``) and the tools' view of the world (``tool_context``, or
``approved_context`` for an add an admin already approved). None of this calls the model
or writes anything.
"""

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from mediabot.approvals.front import Approvals
from mediabot.approvals.house_rules import HouseRules
from mediabot.arr.searches import SearchLimit
from mediabot.arr.tools import Tool, ToolContext, available_tools, tool_schemas
from mediabot.arr.tools.base import AddRequest, SeerrRequests, ServiceClient
from mediabot.arr.wanted import record_request
from mediabot.config import Config
from mediabot.conversation.prompt.build import estimate_tokens
from mediabot.conversation.prompt.system_prompt import (
    dropped_note,
    person_note,
    shared_system_prompt,
)
from mediabot.conversation.summarizer import Summarizer
from mediabot.model.chat import ChatModel
from mediabot.store import db
from mediabot.store.db import Role
from mediabot.store.people import Person
from mediabot.text.localtime import Clock, as_local

Gate = Callable[[AddRequest], dict | None]


# The request manager an asker's adds are filed through as them, made for the person
# (``ToolContext.seerr``); the daemon hands it in when one is set up.
LinkFor = Callable[[Person], SeerrRequests]


@dataclass
class Services:
    """What a turn needs from the outside world, built once from config."""

    config: Config
    model: ChatModel
    sonarr: ServiceClient | None = None
    radarr: ServiceClient | None = None
    clock: Clock = db.utcnow
    summarizer: Summarizer | None = None
    approvals: Approvals = field(default_factory=Approvals)   # the household's and others'
    link_for: LinkFor | None = None   # adds filed as the asker instead (the rules stand by)

    @property
    def rules(self) -> HouseRules | None:
        return self.approvals.rules


class Frame(NamedTuple):
    """What every prompt for a user is built around (the same for a whole turn)."""

    tools: dict[str, Tool]   # by name
    schemas: list[dict]
    reserved: int            # the schemas' estimated tokens
    system: str
    zone: dt.tzinfo          # the household's: each user message shows its time in it
    note: str = ""           # for this turn only (a question its text let lapse), on its text
    person: str = ""         # this person's part, after the shared system text and tools


def approvals_on(services: Services, user: Person) -> bool:
    """Does this admin answer requests (APPROVE 12 / DENY 12)?"""
    return services.approvals.answered_by(user)


def offered_tools(services: Services) -> list[Tool]:
    """The tools every member of the household is offered: all those whose service is set
    up, the same list for everyone so a server's cache keeps it across people. Which of
    them a person may run is checked when they run (``tools_for``)."""
    return available_tools(Role.ADMIN, sonarr=services.sonarr is not None,
                           radarr=services.radarr is not None)


def tools_for(services: Services, user: Person) -> list[Tool]:
    """The tools ``user`` may run."""
    return available_tools(user.role, sonarr=services.sonarr is not None,
                           radarr=services.radarr is not None)


def build_frame(services: Services, user: Person, dropped: str = "") -> Frame:
    """The frame of this user's prompts; ``dropped`` names a question that just lapsed.

    The system text starts with the household's rules (``shared_system_prompt``) and the
    tools are the household's (``offered_tools``). The person's name, role and language
    (``person_note``) end the system text, before the tools, where the server restores each
    member's saved prompt (``SlotPins.person_first``); elsewhere they go in ``person``, sent
    after the tools, so the household shares the tools too. What waits for an admin's
    approval is always ``person``: it changes with every request and answer."""
    tools = {t.name: t for t in offered_tools(services)}
    schemas = tool_schemas(list(tools.values()))
    reserved = estimate_tokens([{"role": "system", "content": json.dumps(schemas)}])
    zone = services.config.server.zone
    system = shared_system_prompt(
        zone=zone, tools=list(tools),
        missing=[name for name, client in (("Sonarr", services.sonarr),
                                           ("Radarr", services.radarr)) if client is None])
    waiting = services.approvals.waiting_note() if approvals_on(services, user) else None
    identity = person_note(user.name, admin=user.admin, language=user.language)
    if services.model.pins.person_first():
        system, person = "\n\n".join(p for p in (system, identity) if p), waiting or ""
    else:
        person = "\n\n".join(p for p in (identity, waiting) if p)
    return Frame(tools, schemas, reserved, system, zone,
                 dropped_note(dropped) if dropped else "", person)


def tool_context(services: Services, user: Person) -> ToolContext:
    """The tools' view of the world for ``user``, with the household's rules on adds (none
    when adds are filed as the asker elsewhere: that manager's own approvals and quotas
    decide them)."""
    house, clock = services.rules, services.clock
    if house is None or not house.applies_to(user) or services.link_for is not None:
        return approved_context(services, user)

    def gate(request: AddRequest) -> dict | None:
        return house.gate(user, request, clock())
    return _context(services, user, gate)


def approved_context(services: Services, user: Person) -> ToolContext:
    """The tools' view for an add an admin already approved: no rules this time."""
    return _context(services, user, None)


def _context(services: Services, user: Person, gate: Gate | None) -> ToolContext:
    clock, config = services.clock, services.config
    return ToolContext(sonarr=services.sonarr, radarr=services.radarr,
                       user_id=user.id, role=user.role,
                       record_request=lambda service, ext_id, title, **how:
                           record_request(user.id, service, ext_id, title, clock(), **how),
                       clock=lambda: as_local(clock(), config.server.zone), gate=gate,
                       searches=SearchLimit(config.requests.search_again_hours,
                                            clock, config.server.zone),
                       language=user.language,
                       seerr=services.link_for(user) if services.link_for else None)
