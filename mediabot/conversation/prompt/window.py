"""The window and what the system message says about what fell out of it.

Pure steps 4 and 5 of ``mediabot.conversation.prompt.build.build_prompt`` (that module's
docstring gives the layout and why): where the window of atomic units starts, which of its
tool results go as digests, and the pruned-context line. All are chosen so that a server's
cached prefix survives: the start and the digests move only at a block eviction, never
inside a turn's tool rounds for the message cap or the cold-read budget (only the hard
token cap can cut there), and the line names tools in a fixed order, so it changes only
when a kind of tool first falls out of the window.
"""

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from mediabot.conversation.prompt.shape import PARAGRAPH, Unit

PRUNED_LINE = "Earlier messages were pruned."
SUMMARY_LEAD = "A summary of them:"


@dataclass(frozen=True)
class Evicted:
    """What the model no longer sees: the evicted units, and the tools of stored messages
    older than the history given (``earlier``; None when there are none)."""

    units: list[Unit]
    earlier: Sequence[str] | None = None

    @property
    def any(self) -> bool:
        return bool(self.units) or self.earlier is not None


def evicted_tools(evicted: Evicted, order: Sequence[str] = ()) -> list[str]:
    """Distinct tool names of everything evicted: in ``order`` (the tool catalog's), names it
    does not know after them; without an order (or among unknown names) in first-use order,
    the older stored messages first."""
    used = dict.fromkeys([*(evicted.earlier or ()),
                          *(name for unit in evicted.units for name in unit.tools)])
    rank = {name: index for index, name in enumerate(order)}
    return sorted(used, key=lambda name: rank.get(name, len(rank)))   # stable: first use


def context_line(evicted: Evicted, summary: str | None, order: Sequence[str] = ()) -> str:
    """What the model is told about the evicted units."""
    if summary:
        return f"{PRUNED_LINE} {SUMMARY_LEAD} {summary}"
    tools = evicted_tools(evicted, order)
    if not tools:
        return PRUNED_LINE
    return f"{PRUNED_LINE} Tool operations included: {', '.join(tools)}."


@dataclass(frozen=True)
class Part:
    """What the person's part adds to a window, to the character, besides what the caller
    counts already (the person's own text with its frame, in the fixed cost) and what the
    units count (each stored note as ``PARAGRAPH + note``).

    ``lines[first]`` is the context line a window starting at unit ``first`` carries ("" when
    nothing fell out there): exactly the line the prompt will have, not the longest it could
    be. ``frame`` is what wraps a part that says anything when the person has no text of
    their own (its brackets and the acknowledgement, less the paragraph break that a part of
    one paragraph does not have); with ``person`` the caller counted the frame already."""

    lines: Sequence[str]
    person: bool = False
    frame: int = 0

    def chars(self, first: int, notes: bool) -> int:
        line = self.lines[first] if first < len(self.lines) else ""
        size = len(PARAGRAPH + line) if line else 0
        return size + (self.frame if not self.person and (line or notes) else 0)


def part_lines(units: list[Unit], earlier: Sequence[str] | None, summary: str | None,
               order: Sequence[str] = ()) -> list[str]:
    """The context line of a window starting at each unit (and after the last): what
    ``Part.lines`` holds."""
    return [context_line(evicted, summary, order) if evicted.any else ""
            for evicted in (Evicted(units[:first], earlier) for first in range(len(units) + 1))]


@dataclass(frozen=True)
class Limits:
    """What a window may hold: prompt messages, characters, and what the person's part adds
    (``part``, counted exactly, so the assembled prompt costs what the cut was chosen for).

    ``chars`` is the hard cap (the model's context), which holds on every request;
    ``messages`` and ``soft_chars`` (what a text's first request should cost a cold read;
    None: no such budget) are counted where the cut is chosen for a new text, and not
    against the tool rounds of a turn in progress (``counted``)."""

    messages: int
    chars: int
    part: Part
    soft_chars: int | None = None

    def fit(self, count: int, chars: int, share: float = 1.0, counted: bool = True) -> bool:
        soft = self.soft_chars is None or chars <= self.soft_chars * share
        return (not counted or (count <= self.messages * share and soft)) \
            and chars <= self.chars * share


@dataclass(frozen=True)
class Cut:
    """Where the window starts (``start``, an index into the units) and before which unit a
    call unit's results are sent as digests (``brief_before``; 0: none are)."""

    start: int
    brief_before: int = 0


def window_start(units: list[Unit], limits: Limits, floor: int = 0) -> Cut:
    """The first kept unit, and which results are digests: both move only at a block eviction,
    so most prompts only grow.

    Replays the history unit by unit from its oldest user message: the window keeps its
    start while it fits; when a unit overflows it, that is a block eviction: the results of
    every turn before the previous one become one-line digests (``Unit.brief``: the call
    stays, the model has answered from the result since), and the start jumps forward to the
    oldest user unit from which the rest fits in about half the limits (it stays where it was
    when the digests alone make it fit so; else the oldest that fits in the whole limits,
    else the newest user unit, whatever it costs). In the turn still in progress (the newest
    user message has no reply yet) only the token budget can move the start: the calls and
    results of its tool rounds are appended to the window its first request chose, past the
    message cap if need be, and the cap is applied again when the turn is over. The cut
    depends only on the history, never moves back, and moves only at a block eviction, so
    the prompt before the new text is the prompt a server last read. The window never starts
    before ``floor`` (the units a rolling summary covers: the model reads them there), so a
    budget that grows back (a calibration that moved) never sends them twice.
    """
    user_starts = [i for i, unit in enumerate(units) if unit.kind == "user"]
    if not user_starts:
        return Cut(len(units))
    counts = list(itertools.accumulate((len(u.messages) for u in units), initial=0))
    chars = list(itertools.accumulate((u.chars for u in units), initial=0))
    brief = list(itertools.accumulate((u.brief_chars for u in units), initial=0))
    notes = list(itertools.accumulate((bool(u.note) for u in units), initial=0))
    held_after = _turn_in_progress(units, user_starts[-1])
    cut = Cut(next((i for i in user_starts if i >= floor), user_starts[-1]))

    def fits(first: int, last: int, share: float = 1.0) -> bool:
        middle = min(max(cut.brief_before, first), last + 1)
        size = (brief[middle] - brief[first] + chars[last + 1] - chars[middle]
                + units[first].lead_chars   # the full stamp of the text that opens it
                + limits.part.chars(first, notes[last + 1] > notes[first]))
        return limits.fit(counts[last + 1] - counts[first], size, share,
                          counted=last <= held_after)

    for last in range(cut.start, len(units)):
        if fits(cut.start, last):
            continue
        turns = [i for i in user_starts if i <= last]
        if len(turns) > 1:
            cut = Cut(cut.start, max(cut.brief_before, turns[-2]))
        later = [i for i in turns if cut.start < i]
        start = next((i for i in [cut.start, *later] if fits(i, last, 0.5)),
                     next((i for i in later if fits(i, last)), later[-1] if later else cut.start))
        cut = Cut(start, cut.brief_before)
    return cut


def _turn_in_progress(units: list[Unit], newest_user: int) -> int:
    """The index after which units belong to a turn still in progress (its tool rounds), or
    the last index when the newest turn has its reply."""
    rest = units[newest_user + 1:]
    if any(unit.kind == "reply" for unit in rest):
        return len(units) - 1
    return newest_user
