"""The time stamp in front of each text (``conversation/prompt/stamps.py``): full on the
prompt's first text and on a day's first, short after a text of the same day, and the same
in every later prompt while the text and the one before it stay in the window."""

import datetime as dt
import re
from zoneinfo import ZoneInfo

import pytest

from mediabot.conversation.prompt.build import CHARS_PER_TOKEN, build_prompt, estimate_tokens
from mediabot.conversation.prompt.stamps import stamps
from tests.support.prompts import body

LONDON, NEW_YORK, UTC = ZoneInfo("Europe/London"), ZoneInfo("America/New_York"), ZoneInfo("UTC")
SYSTEM = "You are mediabot."
EVENING = dt.datetime(2026, 3, 14, 18, 33)   # naive UTC, as stored: a Saturday, GMT
FULL = re.compile(r"\[Sat 2026-03-14 \d\d:\d\d GMT\] text \d+")
SHORT = re.compile(r"\[Sat \d\d:\d\d\] text \d+")


def said(stamp) -> tuple[str, str]:
    return (stamp.after, stamp.opening)


def test_a_text_after_one_of_the_same_day_has_the_day_and_time_only():
    first, second = stamps([EVENING, EVENING + dt.timedelta(minutes=4)], LONDON)
    assert said(first) == ("[Sat 2026-03-14 18:33 GMT] ", "[Sat 2026-03-14 18:33 GMT] ")
    assert said(second) == ("[Sat 18:37] ", "[Sat 2026-03-14 18:37 GMT] ")


def test_the_first_text_of_a_new_day_has_the_date_and_zone_again():
    late, after_midnight, morning = stamps(
        [dt.datetime(2026, 3, 14, 23, 58), dt.datetime(2026, 3, 15, 0, 3),
         dt.datetime(2026, 3, 15, 9, 0)], LONDON)
    assert late.after == "[Sat 2026-03-14 23:58 GMT] "
    assert after_midnight.after == "[Sun 2026-03-15 00:03 GMT] "
    assert morning.after == "[Sun 09:00] "


def test_a_week_later_on_the_same_weekday_is_another_day():
    assert [s.after for s in stamps([EVENING, EVENING + dt.timedelta(days=7)], LONDON)] == [
        "[Sat 2026-03-14 18:33 GMT] ", "[Sat 2026-03-21 18:33 GMT] "]


def test_a_daylight_saving_change_that_day_gives_the_new_zone_in_full():
    """London springs forward on Sunday 29 March 2026 at 01:00 UTC: the same local day, but
    a short stamp would leave the model on GMT."""
    night, morning, noon = stamps([dt.datetime(2026, 3, 29, 0, 30), dt.datetime(2026, 3, 29, 8),
                                   dt.datetime(2026, 3, 29, 11)], LONDON)
    assert night.after == "[Sun 2026-03-29 00:30 GMT] "
    assert morning.after == "[Sun 2026-03-29 09:00 BST] "
    assert noon.after == "[Sun 12:00] "


def test_the_days_are_the_zones_the_prompt_is_built_in():
    """Times are stored in UTC: a new ``[server] timezone`` renders them, and tells the days
    apart, in the new zone."""
    times = [dt.datetime(2026, 11, 22, 23, 30), dt.datetime(2026, 11, 23, 0, 30)]
    assert [s.after for s in stamps(times, UTC)] == ["[Sun 2026-11-22 23:30 UTC] ",
                                                     "[Mon 2026-11-23 00:30 UTC] "]
    assert [s.after for s in stamps(times, NEW_YORK)] == ["[Sun 2026-11-22 18:30 EST] ",
                                                          "[Sun 19:30] "]


def test_a_text_without_a_time_has_no_stamp_and_the_next_one_is_full():
    _, made_up, after = stamps([EVENING, None, EVENING + dt.timedelta(minutes=1)], LONDON)
    assert made_up is None
    assert after.after == "[Sat 2026-03-14 18:34 GMT] "


# --------------------------------------------------------------------- in the prompt

def evening(*minutes: int) -> list[dict]:
    """Texts ``minutes`` after EVENING, each answered, the last one waiting for its answer."""
    history = []
    for number, offset in enumerate(minutes):
        at = EVENING + dt.timedelta(minutes=offset)
        history.append({"role": "user", "content": f"text {number}", "_at": at})
        history.append({"role": "assistant", "content": f"answer {number}", "_at": at})
    history.pop()
    return [dict(m, _id=i) for i, m in enumerate(history, 1)]


def texts(messages: list[dict]) -> list[str]:
    return [m["content"] for m in body(messages) if m["role"] == "user"]


def test_the_prompt_has_the_date_on_its_first_text_and_on_each_days_first():
    prompt = build_prompt(SYSTEM, evening(0, 4, 24 * 60, 24 * 60 + 5), zone=LONDON)
    assert texts(prompt.messages) == [
        "[Sat 2026-03-14 18:33 GMT] text 0", "[Sat 18:37] text 1",
        "[Sun 2026-03-15 18:33 GMT] text 2", "[Sun 18:38] text 3"]


def test_when_the_window_slides_its_new_first_text_has_the_date():
    history = evening(*range(0, 40, 4))
    prompt = build_prompt(SYSTEM, history, max_messages=6, zone=LONDON)
    kept = texts(prompt.messages)
    assert prompt.metrics.evicted and len(kept) < 10
    assert kept[0] != "[Sat 2026-03-14 18:33 GMT] text 0" and FULL.fullmatch(kept[0]), kept
    assert all(SHORT.fullmatch(t) for t in kept[1:]), kept


def test_a_text_renders_the_same_in_every_later_prompt_while_it_and_the_one_before_are_kept():
    """What keeps a server's cache: the prompt before the newest text is the one it read."""
    history = evening(*range(0, 60, 3))
    prompts = [build_prompt(SYSTEM, history[:end], max_messages=8, zone=LONDON).messages
               for end in range(1, len(history) + 1, 2)]
    seen: dict[str, str] = {}
    for messages in prompts:
        for content in texts(messages)[1:]:           # the first is full wherever it was
            said_text = content.split("] ", 1)[1]
            assert seen.setdefault(said_text, content) == content
    assert len(seen) > 10


@pytest.mark.parametrize("extra", [0, 1])
def test_the_cut_counts_the_full_stamp_of_the_text_that_opens_the_window(extra):
    """A summary covers the first two turns, so the window opens on the third text, whose
    stamp in sequence is short: it is sent full, and the cut counts it so. With a budget of
    exactly what that prompt costs the window keeps everything after the summary; one
    character more and it must let a turn go."""
    history = evening(0, 3, 6, 9, 12)
    exact = build_prompt(SYSTEM, history, zone=LONDON, summary="They like films.",
                         summary_through=4)
    kept = texts(exact.messages)
    assert kept[0] == "[Sat 2026-03-14 18:39 GMT] text 2" and kept[1] == "[Sat 18:42] text 3"
    chars = sum(len(m["content"]) for m in exact.messages)
    pad = -chars % CHARS_PER_TOKEN + extra              # a whole number of tokens, then one over
    budget = (chars + pad - extra) // CHARS_PER_TOKEN
    prompt = build_prompt(SYSTEM + " " * pad, history, zone=LONDON, max_tokens=budget,
                          summary="They like films.", summary_through=4)
    assert estimate_tokens(prompt.messages) <= budget
    assert (texts(prompt.messages) == kept) is (extra == 0), texts(prompt.messages)
