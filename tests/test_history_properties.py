"""Property tests: whatever the stored history holds, the prompt is one the API accepts.

Histories are generated with the corruptions real deployments produce: tool results without
a parent, calls whose results were lost in a crash, Ollama's ``call_0`` reused on every turn,
vLLM's 46-character ids, bursts of user messages, consecutive assistants, and histories that
start mid-conversation. The engine always saves the user's message before building, so every
history ends with one.
"""

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from mediabot.history import build_prompt, estimate_tokens, validate_messages

SYSTEM = "You are mediabot, a helpful media assistant."
TOOLS = ("search_media", "add_movie", "download_queue", "upcoming")
text = st.text(alphabet="abcdefghij XYZ.?", max_size=120)
call_id = st.one_of(st.just("call_0"), st.just("call_1"),
                    st.text(alphabet="abcdef0123456789", min_size=46, max_size=46),
                    st.from_regex(r"call_[a-z0-9]{6}", fullmatch=True))


def tool_call(ident, name):
    return {"id": ident, "type": "function",
            "function": {"name": name, "arguments": '{"query": "dune"}'}}


@st.composite
def tool_turn(draw):
    """An assistant tool_calls message and some (maybe none, maybe stray) results."""
    ids = draw(st.lists(call_id, min_size=1, max_size=3))
    names = draw(st.lists(st.sampled_from(TOOLS), min_size=len(ids), max_size=len(ids)))
    content = draw(st.one_of(st.none(), text))
    messages = [{"role": "assistant", "content": content,
                 "tool_calls": [tool_call(i, n) for i, n in zip(ids, names)]}]
    answered = draw(st.lists(st.sampled_from(ids + ["stray"]), max_size=len(ids) + 1))
    messages += [{"role": "tool", "tool_call_id": i, "content": draw(text)} for i in answered]
    return messages


clean_piece = st.one_of(
    text.map(lambda t: [{"role": "user", "content": t}]),
    st.lists(text, min_size=2, max_size=4).map(
        lambda ts: [{"role": "user", "content": t} for t in ts]),
    text.map(lambda t: [{"role": "assistant", "content": t}]),
    tool_turn(),
    call_id.map(lambda i: [{"role": "tool", "tool_call_id": i, "content": "orphan"}]),
)
piece = st.one_of(
    clean_piece,
    st.just([{"role": "assistant", "content": None}]),
    st.just([{"role": "system", "content": "note"}]),
)


@st.composite
def history(draw, pieces=piece):
    messages = [m for chunk in draw(st.lists(pieces, max_size=25)) for m in chunk]
    messages.append({"role": "user", "content": draw(text)})
    return [dict(m, _id=i) for i, m in enumerate(messages, 1)]


def after_system(messages):
    index = 0
    while messages[index]["role"] == "system":
        index += 1
    return messages[index:]


@settings(max_examples=200, deadline=None)
@given(history(), st.integers(1, 30), st.integers(20, 600), st.integers(0, 40))
def test_any_history_gives_a_prompt_the_api_accepts(stored, max_messages, max_tokens,
                                                    reserved):
    snapshot = copy.deepcopy(stored)
    prompt = build_prompt(SYSTEM, stored, max_messages=max_messages, max_tokens=max_tokens,
                          reserved_tokens=reserved)
    messages = prompt.messages
    validate_messages(messages)
    rest = after_system(messages)
    newest = {"role": "user", "content": stored[-1]["content"]}
    assert rest[0]["role"] == "user" and rest[-1] == newest
    assert len(rest) <= max_messages
    assert not any(a["role"] == b["role"] == "user" for a, b in zip(rest, rest[1:]))
    assert (estimate_tokens(messages) + reserved <= max_tokens) or rest == [newest]
    assert stored == snapshot


@settings(max_examples=200, deadline=None)
@given(history())
def test_every_call_is_answered_exactly_once_with_a_short_unique_id(stored):
    messages = build_prompt(SYSTEM, stored, max_messages=1000, max_tokens=10**6).messages
    ids = [c["id"] for m in messages for c in m.get("tool_calls", ())]
    answers = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert sorted(ids) == sorted(answers)
    assert len(set(ids)) == len(ids) and all(len(i) <= 40 for i in ids)
    assert all(not key.startswith("_") for m in messages for key in m)


@settings(max_examples=200, deadline=None)
@given(history(), st.integers(1, 30))
def test_the_metrics_account_for_every_stored_message(stored, max_messages):
    m = build_prompt(SYSTEM, stored, max_messages=max_messages).metrics
    assert m.total == m.pruned + m.dropped + m.evicted + m.kept - m.closed
    assert m.kept == len(after_system(build_prompt(SYSTEM, stored,
                                                   max_messages=max_messages).messages))


@settings(max_examples=100, deadline=None)
@given(history(clean_piece))
def test_a_history_that_fits_whole_and_starts_with_a_user_is_not_windowed(stored):
    whole = build_prompt(SYSTEM, stored, max_messages=10_000, max_tokens=10**6)
    assert whole.metrics.evicted == 0 or stored[0]["role"] != "user"
