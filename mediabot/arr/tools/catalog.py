"""The tools the model may call: their schemas, descriptions (written for the model) and
handlers. Handlers pick the service(s), call the sonarr/radarr functions through
``ArrClient.run`` and shape one compact result dict; failures are ToolErrors.
"""

import datetime as dt
from collections.abc import Callable
from types import ModuleType
from typing import Any

from mediabot.arr.tools import radarr, sonarr
from mediabot.arr.tools.answers import queue_answer, status_answer, upcoming_answer
from mediabot.arr.tools.base import (
    ADMINS,
    EVERYONE,
    AddRequest,
    AlreadyInLibrary,
    ArrApi,
    Service,
    ServiceClient,
    Tier,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
)
from mediabot.arr.tools.format import human_size
from mediabot.arr.tools.json_schema import ERROR, HIDDEN
from mediabot.arr.tools.title_ids import MALFORMED, PATTERN, TitleId, former_ids, parse_title_id
from mediabot.arr.tools.trim import title_of

# Results carry the top few items and a count of the rest: every result stays in the prompt
# (and a server reads it) for as long as its turn is in the window.
SEARCH_LIMIT = 4
QUEUE_LIMIT = 5
CALENDAR_LIMIT = 5
SERVICES = {"series": (Service.SONARR, sonarr, "TVDB"), "movie": (Service.RADARR, radarr, "TMDB")}


def _services(ctx: ToolContext, kind: str) -> list[tuple[Service, ModuleType]]:
    """The (service, module) pairs a kind needs; ToolError when none is set up."""
    if kind != "any":
        service, module, _ = SERVICES[kind]
        ctx.client(service)
        return [(service, module)]
    pairs = [(s, m) for s, m, _ in SERVICES.values() if getattr(ctx, s) is not None]
    if not pairs:
        raise ToolError("neither Sonarr nor Radarr is set up on this server")
    return pairs


def _each_service(ctx: ToolContext, kind: str, fn_name: str,
                  *args: Any) -> tuple[list, list[str]]:
    """Run ``module.fn_name`` on every service of ``kind``: (results, error sentences).

    One service failing does not hide the other's answer; all failing is a ToolError.
    """
    results, errors = [], []
    for service, module in _services(ctx, kind):
        try:
            results.append(ctx.client(service).run(getattr(module, fn_name), *args))
        except ToolError as exc:
            errors.append(str(exc))
    if errors and not results:
        raise ToolError(" and ".join(errors))
    return results, errors


def _with_warnings(result: dict, errors: list[str]) -> dict:
    if errors:
        result["warnings"] = errors
    return result


def _interleave(lists: list[list]) -> list:
    longest = max((len(items) for items in lists), default=0)
    return [items[i] for i in range(longest) for items in lists if i < len(items)]


def search_media(ctx: ToolContext, args: dict) -> ToolResult:
    """The top ``SEARCH_LIMIT`` hits of both kinds, interleaved, and how many more matched:
    a title the library has comes with what is on disk and what is missing (what
    library_status answered before issue 31), any other with what an add needs."""
    results, errors = _each_service(ctx, args["kind"], "search", args["query"], SEARCH_LIMIT,
                                    ctx.clock(), ctx.language)
    posters = {id(hit): hit.pop("_poster", None) for found, _ in results for hit in found}
    hits = _interleave([found for found, _ in results])[:SEARCH_LIMIT]
    if not hits:
        raise ToolError(errors[0] if errors else f"nothing matches '{args['query']}'")
    if ctx.seerr is not None:
        errors += ctx.seerr.annotate(args["query"], hits)
    offered = tuple((hit["title"], hit["year"], posters[id(hit)]) for hit in hits)
    found = {"results": hits}
    more = sum(total for _, total in results) - len(hits)
    if more > 0:
        found["more"] = more
    return ToolResult(_with_warnings(found, errors), offered=offered)


def former_search(raw: dict) -> dict:
    """``"kind": "any"`` (what search_media and library_status showed before issue 31) is
    what no kind means now."""
    return {key: value for key, value in raw.items()
            if not (key == "kind" and value == "any")}


def _record(ctx: ToolContext, service: Service, external_id: int, title: str, *,
            seasons: int = 0, added: bool = False) -> bool:
    """Remember who wants a text when the title lands; ``added`` when this call added it
    (what a weekly quota counts). False when this conversation cannot be texted later."""
    if ctx.record_request is None:
        return False
    ctx.record_request(service, external_id, title, seasons=seasons, added=added)
    return True


def _add(ctx: ToolContext, target: TitleId, tool_args: dict, *args: Any) -> dict | ToolResult:
    """Shared by both kinds of add_media: add, record the request, or explain why not.

    With household rules for this user (``ctx.gate``), the title is looked up first so the
    rules can count it and name it; the gate may refuse (quota) or hold it for approval.
    """
    kind, external_id = target.kind, target.number
    service, module, _ = SERVICES[kind]
    client = ctx.client(service)
    not_found = _not_found(target)
    if ctx.gate is not None:
        held = _ask_gate(ctx.gate, client, module, kind, external_id, tool_args, not_found)
        if held is not None:
            return held
    try:
        result = client.run(module.add, external_id, *args, client.config, client.metadata,
                            not_found=not_found)
    except AlreadyInLibrary as exc:
        return _already_there(ctx, service, external_id, exc)
    poster = result.pop("_poster", None)
    seasons = len(result.get("monitored_seasons") or ()) if kind == "series" else 0
    notified = _record(ctx, service, external_id, result["title"], added=True,
                       seasons=max(seasons, 1) if kind == "series" else 0)
    result["message"] = (f"Added {result['title']}; {client.name} is searching for it."
                         + (" The user will get a text when it is ready." if notified else ""))
    return ToolResult(result, added=(poster,) if poster else ())


def _already_there(ctx: ToolContext, service: Service, external_id: int,
                   exc: AlreadyInLibrary) -> dict:
    """An add of a title the library has: nothing is added or counted (no quota, no
    approval); whoever asked gets the "ready" text when what is missing arrives (what
    "text me when it's ready" asks for)."""
    title = exc.title
    if exc.complete and not exc.more_coming:
        return {"ok": True, "added": False,
                "message": f"{title} is already in the library and ready to watch."}
    if not _record(ctx, service, external_id, title):
        return {"ok": True, "added": False, "message": f"{title} is already in the library."}
    if exc.complete:
        message = (f"{title} is already in the library with every aired episode; the user "
                   "will get a text when new episodes arrive.")
    else:
        message = (f"{title} is already in the library, not downloaded yet; the user will "
                   "get a text when it is ready.")
    return {"ok": True, "added": False, "message": message}


def _ask_gate(gate: Callable[[AddRequest], dict | None], client: ServiceClient,
              module: ModuleType, kind: str, external_id: int, tool_args: dict,
              not_found: str) -> dict | None:
    data = client.run(module.lookup, external_id, not_found=not_found)
    if data.get("id"):
        return None     # already in the library: the add itself says so
    available = len([s for s in data.get("seasons") or [] if s.get("seasonNumber", 0) > 0])
    seasons = seasons_counted(tool_args.get("seasons", "all"), available) \
        if kind == "series" else 0
    return gate(AddRequest(SERVICES[kind][0], external_id, title_of(data), "add_media",
                           tool_args, seasons))


def seasons_counted(seasons: str | list[int], available: int) -> int:
    """How many seasons an add asks for: a list counts its distinct seasons ([1, 1] is one),
    "all" every season, "latest" and "future" one."""
    if isinstance(seasons, list):
        return len(sonarr.season_set(seasons))
    return max(available, 1) if seasons == "all" else 1


def add_movie(ctx: ToolContext, target: TitleId, args: dict) -> dict | ToolResult:
    if ctx.seerr is not None:
        return ctx.seerr.request_movie(ctx, target.number)
    return _add(ctx, target, args, args.get("quality_profile"))


def add_series(ctx: ToolContext, target: TitleId, args: dict) -> dict | ToolResult:
    """The seasons as a set from here on: what is counted, held for an admin, added."""
    args = {**args, "seasons": sonarr.season_set(args.get("seasons", "all"))}
    if ctx.seerr is not None:
        return ctx.seerr.request_series(ctx, target.number, args["seasons"])
    return _add(ctx, target, args, args["seasons"], args.get("quality_profile"))


def add_media(ctx: ToolContext, args: dict) -> dict | ToolResult:
    """One tool for both kinds: the id (as search_media gave it) says which. A title
    already in the library is not added again: the asker is told when it is ready."""
    target = parse_title_id(args.get("id"))
    if target.kind == "movie":
        return add_movie(ctx, target, {key: value for key, value in args.items()
                                       if key != "seasons"})
    return add_series(ctx, target, args)


def _not_found(target: TitleId) -> str:
    kind, source = target.kind, SERVICES[target.kind][2]
    return f"no {kind} has {source} id {target.number}"


def _library_call(ctx: ToolContext, args: dict, fn_name: str, *extra: Any) -> Any:
    target = parse_title_id(args.get("id"))
    service, module, _ = SERVICES[target.kind]
    return ctx.client(service).run(getattr(module, fn_name), target.number, *extra,
                                   not_found=_not_found(target))


def remove_media(ctx: ToolContext, args: dict) -> dict:
    """Runs after the person's Y; its message is texted to them, so it is in their language."""
    title, lang = _library_call(ctx, args, "remove", args["delete_files"]), ctx.language
    if args["delete_files"]:
        return {"ok": True, "message": lang.gettext("Removed {title} and deleted its files.",
                                                    title=title)}
    return {"ok": True, "message": lang.gettext("Removed {title} from the library; its files "
                                                "were kept.", title=title)}


def describe_remove(ctx: ToolContext, args: dict) -> str:
    """The confirmation question, with title, year and size on disk, in the asker's
    language (the words to answer with follow it, in ``confirmations``)."""
    title, size = _library_call(ctx, args, "size_and_label")
    lang = ctx.language
    if not args["delete_files"]:
        return lang.gettext("Remove {title} from the library, keeping its files?", title=title)
    if not size:
        return lang.gettext("Remove {title}? It has no files on disk.", title=title)
    return lang.gettext("Remove {title} and delete its {size} of files?", title=title,
                        size=human_size(size, lang))


def download_queue(ctx: ToolContext, args: dict) -> dict:
    pairs, errors = _each_service(ctx, "any", "queue")
    items = [item for found, _ in pairs for item in found]
    total = sum(count for _, count in pairs)
    result = {"downloads": items[:QUEUE_LIMIT], "total": total}
    if not total:
        result["message"] = "nothing is downloading"
    return _with_warnings(result, errors)


def upcoming(ctx: ToolContext, args: dict) -> dict:
    _services(ctx, "any")
    start = ctx.clock()
    end = start + dt.timedelta(days=args["days"])
    result, errors = {"days": args["days"]}, []
    for key, (service, module, _) in (("episodes", SERVICES["series"]),
                                      ("movies", SERVICES["movie"])):
        if getattr(ctx, service) is None:
            continue
        try:
            found = ctx.client(service).run(module.calendar, start, end, ctx.language)
        except ToolError as exc:
            errors.append(str(exc))
            continue
        result[key] = found[:CALENDAR_LIMIT]
        if len(found) > CALENDAR_LIMIT:
            result[f"{key}_total"] = len(found)
    if errors and len(result) == 1:
        raise ToolError(" and ".join(errors))
    return _with_warnings(result, errors)


def search_again(ctx: ToolContext, args: dict) -> dict:
    """Why a library title is missing files, in the server's own words, and a new search
    when one can help, at most once per title in ``[requests] search_again_hours``."""
    target = parse_title_id(args.get("id"))
    service, external_id = SERVICES[target.kind][0], target.number
    client = ctx.client(service)
    plan = _library_call(ctx, args, "stuck", ctx.clock(), ctx.language)
    told = f"{plan['title']}: {'; '.join(plan['why'])}."
    if plan["search"] is None:
        return {"searched": False, "message": f"{told} Not searched again: "
                                              f"{plan['not_searched']}."}
    wait = ctx.searches.claim(service, external_id) if ctx.searches is not None else None
    if wait is not None:
        return {"searched": False, "message": f"{told} It was searched for again recently; "
                f"it can be searched again from {ctx.language.when(wait, wait.tzinfo or dt.UTC)}."}
    try:
        client.run(_post_command, *plan["search"])
    except ToolError:
        if ctx.searches is not None:
            ctx.searches.release(service, external_id)
        raise
    return {"searched": True, "message": f"{told} Asked {client.name} to search for it again."}


def _post_command(api: ArrApi, name: str, body: dict) -> dict:
    return api._raw.post_command(name, **body)


# What the model reads of each tool (``tool_schemas`` sends only type, enum, items, required
# and descriptions: bounds, defaults and parameters marked ``HIDDEN`` stay here, for
# validation). Sent on every request, for every member alike, so a description says only
# what the name, the type and the choices do not; where they say it all (the query, the
# kind, the id search_media gives back, the days) it is empty. Every parameter still has
# one: Command R+'s template writes each parameter's description and fails without it.
NOTHING = ""
_KIND = {"type": "string", "enum": ["movie", "series"], "default": "any",
         "description": NOTHING}
_QUERY = {"type": "string", "minLength": 1, "maxLength": 200, "description": NOTHING}
_PROFILE = {"type": "string", HIDDEN: True}
_SEASONS = {"anyOf": [{"type": "string", "enum": ["all", "latest", "future"]},
                      {"type": "array", "items": {"type": "integer", "minimum": 0},
                       "minItems": 1}],
            "default": "all", "description": NOTHING}
# Not required: a call without it gets the same sentence as a malformed one, which says
# what to send, and "required" would cost every request ~20 tokens.
_ID = {"id": {"type": "string", "pattern": PATTERN, ERROR: MALFORMED, "description": NOTHING}}


def _object(properties: dict, required: tuple[str, ...] = ()) -> dict:
    return {"type": "object", "properties": properties, "required": list(required),
            "additionalProperties": False}


BOTH = (Service.SONARR, Service.RADARR)
TOOLS = (
    Tool(name="search_media", description="Ids; for library titles, what is on disk.",
         parameters=_object({"query": _QUERY, "kind": _KIND}, ("query",)),
         tier=Tier.SAFE, roles=EVERYONE, services=BOTH, handler=search_media,
         former=former_search, direct=status_answer),
    Tool(name="add_media", description="If already added, texts the user when ready.",
         parameters=_object({**_ID, "seasons": _SEASONS, "quality_profile": _PROFILE}),
         tier=Tier.SAFE, roles=EVERYONE, services=BOTH, handler=add_media, former=former_ids),
    Tool(name="remove_media", description="Asks the user first.",
         parameters=_object({**_ID, "delete_files": {"type": "boolean", "default": False,
                                                      "description": NOTHING}}),
         tier=Tier.DESTRUCTIVE, roles=ADMINS, services=BOTH, handler=remove_media,
         describe=describe_remove, former=former_ids),
    Tool(name="download_queue", description="What is downloading.",
         parameters=_object({}),
         tier=Tier.SAFE, roles=EVERYONE, services=BOTH, handler=download_queue,
         direct=queue_answer),
    Tool(name="upcoming", description="New episodes and movies.",
         parameters=_object({"days": {"type": "integer", "minimum": 1, "maximum": 60,
                                      "default": 7, "description": NOTHING}}),
         tier=Tier.SAFE, roles=EVERYONE, services=BOTH, handler=upcoming,
         direct=upcoming_answer),
    Tool(name="search_again", description="Why a title is missing; searches again.",
         parameters=_object(_ID),
         tier=Tier.SAFE, roles=EVERYONE, services=BOTH, handler=search_again, former=former_ids),
)
FORMER_NAMES = {"add_movie": "add_media", "add_series": "add_media", "notify_me": "add_media",
                "library_status": "search_media"}
"""Tools merged into another, by their former names: stored history, held approvals and a
model that read an older prompt may still name them, and their arguments fit the new tool
(``Tool.former`` turns notify_me's ``kind`` and ``id`` into add_media's id: adding a title
the library has tells the asker when it is ready, which is all notify_me did for it;
search_media gives a library title's status, which is what library_status did)."""
