"""Property tests: whatever the stored history holds, the prompt is one that the OpenAI API
and the common chat templates both accept (the portable shape of docs/architecture.md).

Histories are generated with the corruptions real deployments produce: tool results without
a parent, calls whose results were lost in a crash, Ollama's ``call_0`` reused on every turn,
vLLM's 46-character ids, bursts of user messages, consecutive assistants (an expiry notice
after a reply), turns that failed after a tool round, parallel calls, text beside calls,
null / empty / invalid arguments, stored system and developer rows, and histories that start
mid-conversation. The engine always saves the user's message before building, so every
history ends with one.
"""

import copy
import datetime as dt
import itertools
import json
import re
from zoneinfo import ZoneInfo

from hypothesis import example, given
from hypothesis import strategies as st

from mediabot.conversation.prompt.build import (
    CHARS_PER_TOKEN,
    build_prompt,
    estimate_tokens,
    validate_messages,
)
from mediabot.conversation.prompt.message_rules import find_violation
from mediabot.conversation.prompt.shape import message_chars
from tests.support.prompts import body

SYSTEM = "You are mediabot, a helpful media assistant."
TOOLS = ("search_media", "add_movie", "download_queue", "upcoming")
text = st.text(alphabet="abcdefghij XYZ.?", max_size=120)
call_id = st.one_of(st.just("call_0"), st.just("call_1"),
                    st.text(alphabet="abcdef0123456789", min_size=46, max_size=46),
                    st.from_regex(r"call_[a-z0-9]{6}", fullmatch=True))


arguments = st.one_of(st.just('{"query": "dune"}'), st.none(), st.just(""), st.just("  "),
                      st.just("null"), st.just("not json"), st.just('{"query": '),
                      st.just("[1, 2]"), st.just('{"n": NaN}'), st.just({"query": "dune"}))


def tool_call(ident, name, args='{"query": "dune"}'):
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": args}}


@st.composite
def tool_turn(draw, complete=False):
    """An assistant tool_calls message (one or parallel calls, maybe text beside them) and
    some (maybe none, maybe stray) results; ``complete``: every call answered, in order."""
    ids = draw(st.lists(call_id, min_size=1, max_size=3))
    names = draw(st.lists(st.sampled_from(TOOLS), min_size=len(ids), max_size=len(ids)))
    content = draw(st.one_of(st.none(), st.just(""), text))
    messages = [{"role": "assistant", "content": content,
                 "tool_calls": [tool_call(i, n, draw(arguments))
                                for i, n in zip(ids, names, strict=True)]}]
    answered = ids if complete else draw(st.lists(st.sampled_from(ids + ["stray"]),
                                                  max_size=len(ids) + 1))
    messages += [{"role": "tool", "tool_call_id": i, "content": draw(text)} for i in answered]
    return messages


@st.composite
def failed_after_tool_round(draw):
    """A user message, a complete tool round, and no reply: the model failed after it."""
    return [{"role": "user", "content": draw(text)}, *draw(tool_turn(complete=True))]


clean_piece = st.one_of(
    text.map(lambda t: [{"role": "user", "content": t}]),
    st.lists(text, min_size=2, max_size=4).map(
        lambda ts: [{"role": "user", "content": t} for t in ts]),
    text.map(lambda t: [{"role": "assistant", "content": t}]),
    tool_turn(),
    tool_turn(complete=True),
    failed_after_tool_round(),
    st.tuples(text, text).map(lambda ts: [{"role": "assistant", "content": t} for t in ts]),
    call_id.map(lambda i: [{"role": "tool", "tool_call_id": i, "content": "orphan"}]),
)
piece = st.one_of(
    clean_piece,
    st.just([{"role": "assistant", "content": None}]),
    st.just([{"role": "system", "content": "note"}]),
    st.just([{"role": "developer", "content": "dev note"}]),
)


@st.composite
def history(draw, pieces=piece):
    messages = [m for chunk in draw(st.lists(pieces, max_size=25)) for m in chunk]
    messages.append({"role": "user", "content": draw(text)})
    return [dict(m, _id=i) for i, m in enumerate(messages, 1)]


def after_system(messages):
    """The conversation after the one system message, which is first and alone, and the
    person's part that says what fell out, when anything did (``tests.support.prompts.body``)."""
    assert [m["role"] for m in messages].count("system") == 1
    return body(messages)


def _stored(*messages):
    return [dict(m, _id=i) for i, m in enumerate(messages, 1)]


# A stored system note in the window and no person's part: the part is then the note alone,
# in brackets with the acknowledgement, three characters more than the note's paragraph the
# cut counted, so the prompt came out one token over (~115 of 114; ~72 of 71).
NOTE_ALONE = _stored(
    {"role": "user", "content": ""},
    {"role": "assistant", "content": None, "tool_calls": [tool_call("call_0", "add_movie", None)]},
    {"role": "tool", "tool_call_id": "call_0", "content": ""},
    {"role": "system", "content": "note"},
    {"role": "user", "content": ""},
    {"role": "assistant", "content": None, "tool_calls": [tool_call("call_1", "add_movie")]},
    {"role": "user", "content": "c" * 16 + "x"})
NOTE_AFTER_PARALLEL_CALLS = _stored(
    {"role": "user", "content": "??"}, {"role": "assistant", "content": "?"},
    {"role": "assistant", "content": "??????????"}, {"role": "developer", "content": "dev note"},
    {"role": "assistant", "content": None,
     "tool_calls": [tool_call("call_0", "search_media"),
                    tool_call("call_0", "search_media", None)]},
    {"role": "tool", "tool_call_id": "call_0", "content": "?"},
    {"role": "tool", "tool_call_id": "call_0", "content": "???"},
    {"role": "user", "content": "??????????"})


@example(NOTE_ALONE, 9, 114, 0)
@example(NOTE_AFTER_PARALLEL_CALLS, 7, 71, 0)
@given(history(), st.integers(1, 30), st.integers(20, 600), st.integers(0, 40))
def test_any_history_gives_a_prompt_the_api_accepts(stored, max_messages, max_tokens,
                                                    reserved):
    snapshot = copy.deepcopy(stored)
    prompt = build_prompt(SYSTEM, stored, max_messages=max_messages, max_tokens=max_tokens,
                          reserved_tokens=reserved)
    messages = prompt.messages
    assert find_violation(messages) is None                   # OpenAI's rules
    assert find_violation(messages, portable=True) is None    # and the templates'
    validate_messages(messages)
    rest = after_system(messages)
    newest = {"role": "user", "content": stored[-1]["content"]}
    assert rest[0]["role"] == "user" and rest[-1] == newest
    assert len(rest) <= max_messages
    assert not any(a["role"] == b["role"] == "user" for a, b in itertools.pairwise(rest))
    assert (estimate_tokens(messages) + reserved <= max_tokens) or rest == [newest]
    assert stored == snapshot


@given(history())
def test_every_call_is_answered_exactly_once_with_a_short_unique_id(stored):
    messages = build_prompt(SYSTEM, stored, max_messages=1000, max_tokens=10**6).messages
    ids = [c["id"] for m in messages for c in m.get("tool_calls", ())]
    answers = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert sorted(ids) == sorted(answers)
    assert len(set(ids)) == len(ids) and all(len(i) <= 40 for i in ids)
    assert all(not key.startswith("_") for m in messages for key in m)


@given(history(), st.integers(1, 30))
def test_the_metrics_account_for_every_stored_message(stored, max_messages):
    prompt = build_prompt(SYSTEM, stored, max_messages=max_messages)
    m = prompt.metrics
    assert m.total == m.pruned + m.dropped + m.evicted + m.kept
    assert m.sent == len(after_system(prompt.messages))


@given(history(clean_piece))
def test_a_history_that_fits_whole_and_starts_with_a_user_is_not_windowed(stored):
    whole = build_prompt(SYSTEM, stored, max_messages=10_000, max_tokens=10**6)
    assert whole.metrics.evicted == 0 or stored[0]["role"] != "user"


def _first_user(stored):
    return next(i for i, m in enumerate(stored) if m["role"] == "user")


@given(history())
def test_nothing_said_after_the_first_user_message_is_lost_in_the_reshaping(stored):
    """With room for everything, every call and every assistant text after the first user
    message reaches the model: split, merged or moved, never dropped."""
    messages = build_prompt(SYSTEM, stored, max_messages=10**6, max_tokens=10**9).messages
    later = stored[_first_user(stored):]
    stored_calls = [c["function"]["name"] for m in later if m["role"] == "assistant"
                    for c in m.get("tool_calls") or ()]
    sent_calls = [c["function"]["name"] for m in messages for c in m.get("tool_calls", ())]
    assert sent_calls == stored_calls
    replies = "\n".join(m["content"] for m in messages if m["role"] == "assistant")
    for message in later:
        if message["role"] == "assistant" and message["content"]:
            assert message["content"] in replies
    assert all(m["name"] == c["tool_calls"][0]["function"]["name"]
               for c, m in itertools.pairwise(messages) if m["role"] == "tool")
    assert all(isinstance(json.loads(c["function"]["arguments"]), dict)
               for m in messages for c in m.get("tool_calls", ()))


# ------------------------------------------------------------------------ time stamps

ZONES = st.sampled_from([ZoneInfo(name) for name in
                         ("UTC", "Europe/London", "America/New_York", "Australia/Sydney")])
# evenings either side of a daylight-saving change (London, New York, Sydney), naive UTC
STARTS = st.sampled_from([dt.datetime(2026, 3, 28, 20), dt.datetime(2026, 10, 31, 22),
                          dt.datetime(2026, 4, 4, 12), dt.datetime(2026, 11, 22, 18)])
GAPS = st.one_of(st.integers(0, 30), st.integers(0, 36 * 60))   # minutes between messages
NUMBERED = re.compile(r"#(\d+)$")


@st.composite
def stamped_history(draw, pieces=piece):
    """A history whose messages carry the times they were received, minutes or a day and
    more apart, across midnights and daylight-saving changes; now and then one without (made
    up, not stored). Each user text ends with its row's number, to find it in the prompt."""
    at, stored = draw(STARTS), []
    for message in draw(history(pieces)):
        at += dt.timedelta(minutes=draw(GAPS))
        timed = dict(message, _at=at) if draw(st.integers(0, 9)) else dict(message)
        if timed["role"] == "user":
            timed["content"] = f"{timed['content']}#{timed['_id']}"
        stored.append(timed)
    return stored


def expected_stamps(texts: list[str], stored: list[dict], zone) -> list[str]:
    """What each of the prompt's texts should start with: the full stamp on the first and
    after a text of another local day or offset (or one with no time), else the short one."""
    times = {str(m["_id"]): m.get("_at") for m in stored}
    out, before = [], None
    for text in texts:
        at = times[NUMBERED.search(text).group(1)]
        local = at.replace(tzinfo=dt.UTC).astimezone(zone) if at else None
        same = before and local and (before.date(), before.utcoffset()) == (
            local.date(), local.utcoffset())
        out.append("" if local is None else local.strftime(
            "[%a %H:%M] " if same else "[%a %Y-%m-%d %H:%M %Z] "))
        before = local
    return out


def user_texts(messages: list[dict]) -> list[str]:
    return [m["content"] for m in after_system(messages) if m["role"] == "user"]


@given(stamped_history(), ZONES, st.integers(1, 30), st.integers(20, 600), st.integers(0, 40))
def test_with_time_stamps_the_prompt_never_exceeds_its_budget(stored, zone, max_messages,
                                                              max_tokens, reserved):
    prompt = build_prompt(SYSTEM, stored, max_messages=max_messages, max_tokens=max_tokens,
                          reserved_tokens=reserved, zone=zone)
    rest = after_system(prompt.messages)
    assert rest[-1]["content"].endswith(stored[-1]["content"])
    assert estimate_tokens(prompt.messages) + reserved <= max_tokens or len(rest) == 1
    texts = user_texts(prompt.messages)
    assert all(text.startswith(stamp) for text, stamp
               in zip(texts, expected_stamps(texts, stored, zone), strict=True)), texts


@given(stamped_history(), ZONES, st.integers(0, 30), st.sampled_from([None, "They like films."]))
def test_the_cut_counts_the_stamps_as_they_are_sent(stored, zone, through, summary):
    """A budget of exactly what the prompt costs keeps it whole; one character more and the
    window lets a turn go (unless the newest text is all it holds): the cut counted the
    short stamps and the full one of the text that opens the window, to the character."""
    whole = build_prompt(SYSTEM, stored, max_messages=10**4, max_tokens=10**6, zone=zone,
                         summary=summary, summary_through=through)
    chars = sum(message_chars(m) for m in whole.messages)
    for extra in (0, 1):
        pad = -chars % CHARS_PER_TOKEN + extra
        prompt = build_prompt(SYSTEM + " " * pad, stored, max_messages=10**4,
                              max_tokens=(chars + pad - extra) // CHARS_PER_TOKEN, zone=zone,
                              summary=summary, summary_through=through)
        same = prompt.messages[1:] == whole.messages[1:]
        assert same if extra == 0 else (not same or len(user_texts(whole.messages)) == 1)


@given(stamped_history(), ZONES, st.integers(2, 12), st.data())
def test_a_text_renders_the_same_while_it_and_the_text_before_it_are_kept(stored, zone,
                                                                          max_messages, data):
    """The prompt of an earlier text and the newest one: a text both send, the first of
    neither, is sent the same, so the prefix a server read stays valid."""
    ends = [i + 1 for i, m in enumerate(stored) if m["role"] == "user"]
    earlier = stored[:data.draw(st.sampled_from(ends))]
    before, after = (user_texts(build_prompt(SYSTEM, h, max_messages=max_messages,
                                             max_tokens=400, zone=zone).messages)
                     for h in (earlier, stored))
    sent = {NUMBERED.search(t).group(1): t for t in before[1:]}
    assert all(sent.get(NUMBERED.search(t).group(1), t) == t for t in after[1:])
