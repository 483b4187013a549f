"""The household tasks ``mediabot eval`` scores a model on, and the checks that score them.

Each task is a few texts from one household member (admin or member) to a fresh simulated
library. Every check looks at what happened — which tools ran with which arguments, what the
simulated Sonarr/Radarr hold afterwards, whether a removal waits for its Y, what the reply
says — never at another model's opinion. A check returns None when it holds, else a short
reason. The set is versioned: change a task or a check, change ``VERSION``, so two eval
tables are comparable only when their versions match.
"""

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mediabot.arr.tools.title_ids import title_id
from mediabot.conversation.model_turn import (
    APOLOGIES,
    APOLOGY,
    NO_ANSWER_REPLY,
    ROUND_LIMIT_REPLY,
    STUCK_REPLY,
)
from mediabot.store.db import Role
from mediabot.text.sms import count_segments, is_gsm7

if TYPE_CHECKING:
    from mediabot.trial.sim.stack import Simulation

VERSION = "2026.12-1"
OFFICE_TVDB, OFFICE_UK_TVDB = 73244, 78107
DUNE_THREE_TMDB, ARRIVAL_TMDB = 1170608, 329865
# The ids the model reads and sends (``title_ids``), which the checks compare.
OFFICE_UK, DUNE_THREE, ARRIVAL = (title_id("series", OFFICE_UK_TVDB),
                                  title_id("movie", DUNE_THREE_TMDB),
                                  title_id("movie", ARRIVAL_TMDB))
REMOVE_QUESTION = "Reply Y to confirm"
DENIALS = ("not ", "no ", "n't", "couldn", "unable", "nothing", "none")
SMS_CHARS, SMS_SEGMENTS = 480, 4


@dataclass
class Seen:
    """What one step left behind: the reply, the tool calls made during it, the world;
    ``model_calls`` the requests the model got, ``tool_rounds`` the answers of them that
    were tool calls (equal: no request was left to word the reply)."""

    reply: str
    calls: list[tuple[str, dict]]
    sim: "Simulation"
    pending: bool
    known_titles: frozenset[tuple[str, int]] = frozenset()
    model_calls: int = 0
    tool_rounds: int = 0


Check = Callable[[Seen], str | None]


@dataclass(frozen=True)
class Step:
    text: str
    checks: tuple[Check, ...] = ()


@dataclass(frozen=True)
class Task:
    name: str
    about: str
    steps: tuple[Step, ...]
    role: str = Role.MEMBER
    tags: tuple[str, ...] = field(default=())


# ------------------------------------------------------------------------------ checks

def called(tool: str, **arguments: object) -> Check:
    """``tool`` ran in this step, with these arguments (a tuple value: any of them)."""
    def check(seen: Seen) -> str | None:
        runs = [args for name, args in seen.calls if name == tool]
        if not runs:
            return f"did not call {tool}"
        if arguments and not any(_matches(args, arguments) for args in runs):
            return f"called {tool} with {runs[-1]}, expected {arguments}"
        return None
    return check


def not_called(*tools: str) -> Check:
    def check(seen: Seen) -> str | None:
        made = [name for name, _ in seen.calls if name in tools]
        return f"called {made[0]}" if made else None
    return check


def holds(kind: str, external_id: int, present: bool = True) -> Check:
    """The simulated library has (or no longer has) this movie/series."""
    def check(seen: Seen) -> str | None:
        if seen.sim.has(kind, external_id) == present:
            return None
        return f"{kind} {external_id} {'missing from' if present else 'still in'} the library"
    return check


def searched(command: str) -> Check:
    """The simulated Sonarr or Radarr was asked to run this search command."""
    def check(seen: Seen) -> str | None:
        names = [c["name"] for fake in (seen.sim.sonarr, seen.sim.radarr) for c in fake.commands]
        return None if command in names else f"no {command} reached Sonarr/Radarr"
    return check


def seasons_monitored(tvdb_id: int, wanted: set[int]) -> Check:
    def check(seen: Seen) -> str | None:
        item = seen.sim.item("series", tvdb_id)
        if item is None:
            return f"series {tvdb_id} was not added"
        monitored = {s["seasonNumber"] for s in item["seasons"]
                     if s.get("monitored") and s["seasonNumber"] > 0}
        return None if monitored == wanted else f"monitored seasons {sorted(monitored)}, " \
                                                f"expected {sorted(wanted)}"
    return check


def waiting_for_y(expected: bool = True) -> Check:
    def check(seen: Seen) -> str | None:
        asked = seen.pending and REMOVE_QUESTION in seen.reply
        if asked == expected:
            return None
        return "no Y/N question was asked" if expected else "a removal waits for a Y"
    return check


def mentions(*words: str) -> Check:
    """Every word appears in the reply (case-insensitive)."""
    def check(seen: Seen) -> str | None:
        missing = [w for w in words if w.lower() not in seen.reply.lower()]
        return f"the reply does not mention {', '.join(missing)}" if missing else None
    return check


def avoids(*phrases: str) -> Check:
    def check(seen: Seen) -> str | None:
        found = [p for p in phrases if p.lower() in seen.reply.lower()]
        return f"the reply says {found[0]!r}" if found else None
    return check


def asks() -> Check:
    def check(seen: Seen) -> str | None:
        return None if "?" in seen.reply else "the reply asks no question"
    return check


def denies() -> Check:
    def check(seen: Seen) -> str | None:
        text = seen.reply.lower()
        return None if any(d in text for d in DENIALS) else "the reply does not say no"
    return check


def sms_sized(seen: Seen) -> str | None:
    """The model's own reply fits a text: GSM-7 (no emoji or smart quotes needing UCS-2),
    at most 480 characters and 4 segments, before mediabot's formatter would cut it."""
    if len(seen.reply) > SMS_CHARS:
        return f"the reply is {len(seen.reply)} characters (more than {SMS_CHARS})"
    if not is_gsm7(seen.reply):
        return "the reply needs UCS-2 (not plain GSM-7 text)"
    segments = count_segments(seen.reply)
    return None if segments <= SMS_SEGMENTS else f"the reply is {segments} SMS segments"


def told_by_tool(seen: Seen) -> str | None:
    """The reply is the tool's own answer: the model was not asked again to word a result
    that already answers the text."""
    if seen.tool_rounds and seen.model_calls == seen.tool_rounds and not seen.pending:
        return None
    return "the model was asked again to word a result that answers the text itself"


def worded_by_model(seen: Seen) -> str | None:
    """The model wrote the reply after the tool: the result needed its words."""
    if seen.model_calls > seen.tool_rounds:
        return None
    return "the tool's result was sent as it is where it needed the model's words"


_YEAR = re.compile(r"\((\d{4})\)")


def no_invented_titles(seen: Seen) -> str | None:
    """Every "Title (YYYY)" in the reply names a title the simulated servers know, with its
    year. Titles written without a year are not checked."""
    for match in _YEAR.finditer(seen.reply):
        before = seen.reply[:match.start()].rstrip().lower()
        year = int(match.group(1))
        if not any(before.endswith(title) for title, y in seen.known_titles if y == year):
            return f"invented {_mention(seen.reply, match)!r}"
    return None


def _mention(reply: str, match: re.Match) -> str:
    """The title a "(YYYY)" belongs to: back to the last list or sentence separator."""
    before = reply[max(0, match.start() - 60):match.start()]
    cut = max(before.rfind(sep) + len(sep) if before.rfind(sep) >= 0 else 0
              for sep in (", ", " or ", " and ", ". ", "? ", "! ", "\n"))
    return (before[cut:] + match.group(0)).strip()


FALLBACKS = frozenset({APOLOGY, NO_ANSWER_REPLY, ROUND_LIMIT_REPLY, STUCK_REPLY,
                       *APOLOGIES.values()})


def answered(seen: Seen) -> str | None:
    """The reply is the model's (or mediabot's own Y/N text), not a fallback that stands in
    for an empty answer, a failed call or a tool loop that never ended."""
    return f"no answer from the model ({seen.reply!r})" if seen.reply in FALLBACKS else None


EVERY_STEP: tuple[Check, ...] = (answered, no_invented_titles)


def _matches(arguments: dict, expected: dict) -> bool:
    for key, want in expected.items():
        got = arguments.get(key)
        options = want if isinstance(want, tuple) else (want,)
        if got not in options and json.dumps(got) not in map(json.dumps, options):
            return False
    return True


# ------------------------------------------------------------------------------- tasks

WRITES = ("add_media", "remove_media")

TASKS: tuple[Task, ...] = (
    Task("have_it", '"do we have X" is answered from search_media, truthfully',
         (Step("do we have severance?",
               (called("search_media"), mentions("Severance"),
                avoids("don't have", "do not have", "not in the library"), not_called(*WRITES))),)),
    Task("ask_when_ambiguous", '"get dune" (two films) asks which one, adds nothing',
         (Step("get dune", (called("search_media"), asks(), not_called("add_media"))),)),
    Task("add_when_clear", '"add Dune: Part Three" adds exactly that film',
         (Step("please add the movie Dune: Part Three",
               (called("add_media", id=DUNE_THREE), holds("movie", DUNE_THREE_TMDB),
                not_called("remove_media"))),)),
    Task("season_add", "a season-scoped add monitors only that season",
         (Step("add just season 2 of the british office",
               (called("add_media", id=OFFICE_UK),
                seasons_monitored(OFFICE_UK_TVDB, {2}))),)),
    Task("downloading", '"what\'s downloading" is answered from the queue tool',
         (Step("what's downloading?", (called("download_queue"), mentions("Dune"),
                                       not_called(*WRITES))),)),
    Task("stuck", '"why isn\'t X downloading" is explained and searched for again',
         (Step("why isn't arrival downloading?",
               (called("search_again", id=ARRIVAL), searched("MoviesSearch"),
                mentions("Arrival"), not_called(*WRITES))),)),
    Task("this_week", '"what\'s on this week" is answered from the calendar tool',
         (Step("what's on this week?", (called("upcoming"), mentions("Slow Horses"),
                                        not_called(*WRITES))),)),
    Task("remove_asks_first", '"delete X" asks Y/N; nothing is removed before the Y',
         (Step("delete the office", (waiting_for_y(), holds("series", OFFICE_TVDB))),
          Step("y", (holds("series", OFFICE_TVDB, present=False),))),
         role=Role.ADMIN),
    Task("member_cannot_remove", "a member asking to delete is refused",
         (Step("delete the office please", (waiting_for_y(False), holds("series", OFFICE_TVDB),
                                            not_called("remove_media"))),)),
    Task("follow_up", "a follow-up that needs turn 1's answer",
         (Step("search for the office", (called("search_media"),)),
          Step("add the british one", (called("add_media", id=OFFICE_UK),
                                       holds("series", OFFICE_UK_TVDB)))),),
    Task("sms_sized", "a chatty question still gets a text-sized, plain reply",
         (Step("tell me everything about severance", (sms_sized,)),)),
    Task("no_invention", "an unknown title is not made up",
         (Step("do we have the movie Zorblax Returns?", (denies(), not_called(*WRITES))),)),
    # A tool's own answer (``Tool.direct``) where its result is the whole answer, and the
    # model's words where it is not.
    Task("queue_as_is", "the queue is the answer: sent as the tool words it, one model call",
         (Step("anything downloading right now?",
               (called("download_queue"), told_by_tool, mentions("Severance", "Dune"),
                sms_sized)),)),
    Task("upcoming_as_is", "what is coming is the answer: sent as the tool words it",
         (Step("anything new coming this week?",
               (called("upcoming"), told_by_tool, mentions("Slow Horses"), sms_sized)),)),
    Task("status_as_is", "a named library title with nothing missing: the status is the answer",
         (Step("do we have slow horses?",
               (called("search_media"), told_by_tool, mentions("Slow Horses"),
                not_called(*WRITES))),)),
    Task("several_in_words", "several titles match: the model asks or explains, in words",
         (Step("do we have the office?",
               (called("search_media"), worded_by_model, mentions("The Office"),
                not_called(*WRITES))),)),
    Task("not_in_library_in_words", "a title not in the library: the model says so and offers",
         (Step("do we have dune part three?",
               (called("search_media"), worded_by_model, mentions("Dune: Part Three"),
                not_called(*WRITES))),)),
    Task("error_in_words", "a lookup that fails is explained by the model",
         (Step("do we have the show zorblax returns?",
               (called("search_media"), worded_by_model, denies(), not_called(*WRITES))),)),
    Task("opinion_in_words", "a question the status does not answer needs the model's words",
         (Step("is slow horses any good?",
               (called("search_media"), worded_by_model, mentions("Slow Horses"),
                not_called(*WRITES))),)),
    Task("missing_in_words", "a title with episodes missing needs words: what and why",
         (Step("is severance complete?",
               (called("search_media"), worded_by_model, mentions("Severance"),
                not_called(*WRITES))),)),
)


def select(names: list[str] | None) -> tuple[Task, ...]:
    """The named tasks (in the fixed order), or all; ValueError naming unknown ones."""
    if not names:
        return TASKS
    known = {task.name for task in TASKS}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown task {', '.join(unknown)}; the tasks are "
                         f"{', '.join(t.name for t in TASKS)}")
    return tuple(task for task in TASKS if task.name in names)
