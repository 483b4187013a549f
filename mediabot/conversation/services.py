"""The service bundle a turn runs against, and what is worked out from it for one person.

``Services`` is built once from config (``app.build_services``), and tests hand in fakes:
the model, the Sonarr/Radarr clients and Seerr's (None when not set up), the clock, the rolling
summarizer and the household's rules. From it and a user come the ``Frame`` a prompt is
built around (``build_frame``), the tools that user may see (``tools_for``) and the tools'
view of the world (``tool_context``, or ``approved_context`` for an add an admin already
approved). None of this calls the model or writes anything.
"""

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from mediabot.approvals.house_rules import HouseRules
from mediabot.approvals.seerr_members import seerr_id_of, seerr_name
from mediabot.approvals.seerr_requests import SeerrApprovals
from mediabot.arr.searches import SearchLimit
from mediabot.arr.tools import Tool, ToolContext, available_tools, tool_schemas
from mediabot.arr.tools.base import AddRequest, ServiceClient
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
from mediabot.seerr.add import SeerrLink
from mediabot.seerr.api import SeerrClient
from mediabot.store import db, users
from mediabot.store.db import Role
from mediabot.store.people import person_of
from mediabot.text.language import Language
from mediabot.text.localtime import Clock, as_local

Gate = Callable[[AddRequest], dict | None]


@dataclass
class Services:
    """What a turn needs from the outside world, built once from config."""

    config: Config
    model: ChatModel
    sonarr: ServiceClient | None = None
    radarr: ServiceClient | None = None
    clock: Clock = db.utcnow
    summarizer: Summarizer | None = None
    rules: HouseRules | None = None
    seerr: SeerrClient | None = None   # [seerr]: adds become Seerr requests
    seerr_approvals: SeerrApprovals | None = None   # with [seerr]: its approvals by text


class Frame(NamedTuple):
    """What every prompt for a user is built around (the same for a whole turn)."""

    tools: dict[str, Tool]   # by name
    schemas: list[dict]
    reserved: int            # the schemas' estimated tokens
    system: str
    zone: dt.tzinfo          # the household's: each user message shows its time in it
    note: str = ""           # for this turn only (a question its text let lapse), on its text
    person: str = ""         # this person's part, after the shared system text and tools


def approvals_on(services: Services, user: db.User) -> bool:
    """Does this admin answer members' requests (APPROVE 12 / DENY 12)? With Seerr, its
    pending requests are put to the admins that way."""
    rules = services.rules
    return user.role == Role.ADMIN and (
        services.seerr_approvals is not None
        or (rules is not None and rules.config.approval == "members"))


def offered_tools(services: Services) -> list[Tool]:
    """The tools every member of the household is offered: all those whose service is set
    up, the same list for everyone so a server's cache keeps it across people. Which of
    them a person may run is checked when they run (``tools_for``)."""
    return available_tools(Role.ADMIN, sonarr=services.sonarr is not None,
                           radarr=services.radarr is not None)


def tools_for(services: Services, user: db.User) -> list[Tool]:
    """The tools ``user`` may run."""
    return available_tools(user.role, sonarr=services.sonarr is not None,
                           radarr=services.radarr is not None)


def language_of(services: Services, user: db.User) -> Language:
    """The language ``user`` reads: their ``[[users]]`` language, else the household's."""
    return users.language_of(user, services.config.sms.language)


def build_frame(services: Services, user: db.User, dropped: str = "") -> Frame:
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
    rules = services.rules
    notes = [rules.waiting_note() if rules is not None else None,
             services.seerr_approvals.waiting_note() if services.seerr_approvals else None]
    waiting = "\n\n".join(n for n in notes if n) if approvals_on(services, user) else None
    identity = person_note(user.display_name, admin=user.role == Role.ADMIN,
                           language=language_of(services, user))
    if services.model.pins.person_first():
        system, person = "\n\n".join(p for p in (system, identity) if p), waiting or ""
    else:
        person = "\n\n".join(p for p in (identity, waiting) if p)
    return Frame(tools, schemas, reserved, system, zone,
                 dropped_note(dropped) if dropped else "", person)


def tool_context(services: Services, user: db.User) -> ToolContext:
    """The tools' view of the world for ``user``, with the household's rules on adds (none
    with Seerr: its own approvals and quotas decide the requests filed there)."""
    house, clock = services.rules, services.clock
    if house is None or not house.applies_to(user) or services.seerr is not None:
        return approved_context(services, user)

    def gate(request: AddRequest) -> dict | None:
        return house.gate(user, request, clock())
    return _context(services, user, gate)


def approved_context(services: Services, user: db.User) -> ToolContext:
    """The tools' view for an add an admin already approved: no rules this time."""
    return _context(services, user, None)


def _context(services: Services, user: db.User, gate: Gate | None) -> ToolContext:
    clock, config = services.clock, services.config
    return ToolContext(sonarr=services.sonarr, radarr=services.radarr,
                       user_id=user.id, role=user.role,
                       record_request=lambda service, ext_id, title, **how:
                           record_request(user.id, service, ext_id, title, clock(), **how),
                       clock=lambda: as_local(clock(), config.server.zone), gate=gate,
                       searches=SearchLimit(config.requests.search_again_hours,
                                            clock, config.server.zone),
                       language=language_of(services, user),
                       seerr=_seerr_link(services, user))


def _seerr_link(services: Services, user: db.User) -> SeerrLink | None:
    """With [seerr]: Seerr and ``user``'s link, and how the admins hear of a missing one."""
    if services.seerr is None:
        return None
    rules = services.rules

    def hint_admins(title: str) -> None:
        """Once per member and admin (the dedupe key): the admins who can fix the link."""
        if rules is None or rules.notify is None:
            return
        for admin in users.active_admins():
            if admin.id != user.id:
                text = rules.speaks(admin).gettext(
                    "{name} asked for {title}, but their number has no working link to a "
                    "Seerr user, so nothing was requested. Set seerr_user for {phone} in "
                    "[[users]]; mediabot check lists every link.",
                    name=user.display_name or user.phone, title=title, phone=user.phone)
                rules.notify(person_of(admin, rules.language), text,
                             key=f"seerr-unlinked:{user.id}:{admin.id}")
    client = services.seerr
    return SeerrLink(client, user.seerr_user, user.role == Role.ADMIN, hint_admins,
                     lambda: seerr_id_of(client, user),
                     lambda lang, seerr_user: seerr_name(client, lang, seerr_user))
