"""The 30 texts one household member (Sam, an admin) sends during an evening, for
``bench/prompt_cache.py``: searches, adds, "what's downloading", a removal answered with Y,
and small talk, with minutes passing between them. ``HOUSEHOLD`` is the same evening sent by
three members in turn (``MEMBERS``: Sam the admin, Alex a member, Lucía a member who reads
Spanish), so one server slot sees a different person's prompt at almost every text.

Each entry is (minutes since the previous text, the text, the tool call the first answer is
turned into, or None). The tiny model rarely calls tools by itself, so the recording proxy
rewrites that first answer into this call, in llama-server's own response shape; the
prompt is still evaluated for real, and the tool then runs against the simulated library.
Ids are the simulation's (mediabot/trial/sim/arr_fixtures.py): Dune Part Two 693134,
Arrival 329865, Severance 371980, The Office (UK) 78107.

The same calls drive every tree the bench compares (``--baseline`` runs an older one), so
they keep the names and arguments all of them take: add_series and add_movie,
library_status, notify_me, and ``kind`` with ``id``. A tree from issue 31 on runs them as
add_media, search_media and ``tmdb_id``/``tvdb_id`` (``catalog.FORMER_NAMES``,
``Tool.former``), which is what a stored call of that shape does in a household's history.
Where the request's tools name a title by one ``id`` ("tv78107"), the proxy sends the call
as a model reading them would write it (``as_offered``); an older tree gets it as it is.
"""

import json

from mediabot.arr.tools.catalog import FORMER_NAMES
from mediabot.arr.tools.title_ids import former_ids

DUNE_TWO, ARRIVAL, DUNE_1984 = 693134, 329865, 841
SEVERANCE, OFFICE_UK = 371980, 78107


def call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": json.dumps(arguments)}


def as_offered(forced: dict, tools: list[dict]) -> dict:
    """``forced`` (a call of the script, in the oldest form) as a model reading ``tools``
    (the request's) would write it: by the tool it became (``FORMER_NAMES``) with one
    ``id``, ``{"id": "tv78107"}``, where that tool takes an ``id`` string; as it is where
    the tree offers no such tool, so an older tree runs what it always ran."""
    name = FORMER_NAMES.get(forced["name"], forced["name"])
    offered = {tool["function"]["name"]: tool["function"].get("parameters") or {}
               for tool in tools if tool.get("function")}
    parameter = (offered.get(name, {}).get("properties") or {}).get("id") or {}
    if parameter.get("type") != "string":
        return forced
    return {"name": name, "arguments": json.dumps(former_ids(json.loads(forced["arguments"])))}


TEXTS = (
    (0, "hi, it's Sam", None),
    (3, "do we have dune?", call("search_media", query="dune")),
    (2, "is dune part two in the library?", call("library_status", query="dune part two")),
    (4, "what's downloading right now?", call("download_queue")),
    (5, "thanks!", None),
    (6, "can you find the office uk version", call("search_media", query="the office",
                                                    kind="series")),
    (2, "add the uk one please", call("add_series", tvdb_id=OFFICE_UK)),
    (3, "how long until it's done?", call("download_queue")),
    (7, "anything good coming out this week?", call("upcoming", days=7)),
    (4, "cool", None),
    (5, "search for arrival", call("search_media", query="arrival", kind="movie")),
    (3, "how big is arrival on disk?", call("library_status", query="arrival", kind="movie")),
    (2, "remove arrival, we never watch it", call("remove_media", kind="movie", id=ARRIVAL)),
    (1, "Y", None),
    (6, "what's downloading now", call("download_queue")),
    (4, "is severance complete?", call("library_status", query="severance", kind="series")),
    (3, "why is season 2 missing episodes?", call("search_again", kind="series",
                                                  id=SEVERANCE)),
    (5, "text me when it's ready", call("notify_me", kind="series", id=SEVERANCE)),
    (2, "thank you", None),
    (8, "find the old dune from the 80s", call("search_media", query="dune 1984",
                                               kind="movie")),
    (3, "add that one", call("add_movie", tmdb_id=DUNE_1984)),
    (4, "what's in the queue?", call("download_queue")),
    (5, "what's coming up in the next two weeks?", call("upcoming", days=14)),
    (3, "who directed dune?", None),
    (6, "do we have slow horses?", call("search_media", query="slow horses", kind="series")),
    (2, "is it all downloaded?", call("library_status", query="slow horses", kind="series")),
    (7, "how's the dune download going?", call("download_queue")),
    (3, "ok great", None),
    (4, "anything else new this week?", call("upcoming", days=7)),
    (2, "goodnight!", None),
)

# (phone, name, role, language): 555-01xx numbers are reserved for fiction. Sam is the
# demo's admin (mediabot.trial.demo.DEMO_PHONE); the other two differ from Sam by exactly
# what issue 31 names: a member's role (a different tool list) and a language.
MEMBERS = (
    ("+15555550100", "Sam", "admin", ""),
    ("+15555550101", "Alex", "member", ""),
    ("+15555550102", "Lucía", "member", "es"),
)
ADMIN = 0


def household_order(texts=TEXTS, members: int = len(MEMBERS)) -> tuple[int, ...]:
    """Who sends each text: members in turn, except that a removal goes to the admin and a
    lone Y to whoever asked the removal just before it (a Y answers only its own question)."""
    order: list[int] = []
    for index, (_, text, forced) in enumerate(texts):
        if forced is not None and forced["name"] == "remove_media":
            order.append(ADMIN)
        elif text == "Y" and order:
            order.append(order[-1])
        else:
            order.append(index % members)
    return tuple(order)


HOUSEHOLD = tuple((member, *entry) for member, entry in zip(household_order(), TEXTS,
                                                             strict=True))
