"""A tool result the model answered two turns ago is sent as its call and a one-line digest,
and only from a block eviction on, so a server's cached prefix still holds; the stored
history keeps the whole result. (conversation/prompt/window.py, shape.digest.)"""

import copy
import itertools
import json
import re

from mediabot.conversation.history import get_history
from mediabot.conversation.prompt.build import build_prompt
from mediabot.conversation.prompt.shape import DIGEST_CHARS, DIGEST_LEAD, digest
from mediabot.store import db
from tests.support.household import ADMIN

SYSTEM = "You are mediabot."


def search_turn(number: int) -> list[dict]:
    """A text, a search_media call with a four-hit result, and the reply."""
    hits = [{"kind": "series", "title": f"Show {number}-{hit}", "year": 2000 + hit,
             "tvdb_id": number * 100 + hit, "overview": "A crew follows a paper company " * 2,
             "in_library": hit == 0, "seasons": 2} for hit in range(4)]
    call_id = f"c{number}"
    return [{"role": "user", "content": f"search {number}"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": call_id, "type": "function",
                 "function": {"name": "search_media", "arguments": json.dumps(
                     {"query": f"show {number}"})}}]},
            {"role": "tool", "tool_call_id": call_id, "name": "search_media",
             "content": json.dumps({"results": hits, "more": 3}, separators=(",", ":"))},
            {"role": "assistant", "content": f"Found Show {number}-0."}]


def chat_turn(number: int) -> list[dict]:
    return [{"role": "user", "content": f"thanks {number}"},
            {"role": "assistant", "content": "You're welcome."}]


def evening(turns: int) -> list[list[dict]]:
    return [search_turn(n) if n % 2 == 0 else chat_turn(n) for n in range(turns)]


def prompts(turns: list[list[dict]], **limits) -> list:
    """The prompt of every text's first request, the history growing turn by turn."""
    out, history = [], []
    for turn in turns:
        history += turn[:1]
        out.append(build_prompt(SYSTEM, copy.deepcopy(history), **limits))
        history += turn[1:]
    return out


def digested(messages: list[dict]) -> list[dict]:
    return [m for m in messages if m["role"] == "tool" and m["content"].startswith(DIGEST_LEAD)]


def newest_user(messages: list[dict]) -> int:
    return max(i for i, m in enumerate(messages) if m["role"] == "user")


def test_an_old_result_becomes_its_call_and_a_digest_of_titles_and_ids():
    built = prompts(evening(24), max_messages=20, max_tokens=1200)
    with_digests = [p for p in built if digested(p.messages)]
    assert with_digests, "the window overflowed and some results were digested"
    for prompt in with_digests:
        messages = prompt.messages
        for message in digested(messages):
            index = messages.index(message)
            call = messages[index - 1]["tool_calls"][0]
            number = int(json.loads(call["function"]["arguments"])["query"].split()[1])
            assert call["function"]["name"] == "search_media"          # the call is kept
            assert len(message["content"]) <= DIGEST_CHARS
            for hit in range(4):                                      # titles, years, ids
                assert f"Show {number}-{hit} ({2000 + hit}) tvdb_id {number * 100 + hit}" \
                    in message["content"]
            assert "more 3" in message["content"] and "paper company" not in message["content"]
        assert prompt.metrics.digested == len(digested(messages))


def test_the_results_of_the_last_two_turns_are_always_whole():
    for prompt in prompts(evening(24), max_messages=20, max_tokens=1200):
        messages = prompt.messages
        users = [i for i, m in enumerate(messages) if m["role"] == "user"]
        recent = messages[users[-2] if len(users) > 1 else users[-1]:]
        assert not digested(recent), [m["content"] for m in recent]


def test_digests_appear_only_when_a_block_is_evicted_so_each_prompt_starts_with_the_last():
    built = prompts(evening(30), max_messages=20, max_tokens=1200)
    breaks = 0
    for before, after in itertools.pairwise(built):
        old, new = before.messages, after.messages
        grown = new[:newest_user(old) + 1] == old[:newest_user(old) + 1]
        if not grown:
            breaks += 1
            assert after.metrics.evicted > before.metrics.evicted or \
                after.metrics.digested > before.metrics.digested, (old, new)
        else:
            assert after.metrics.digested == before.metrics.digested
    assert 0 < breaks <= len(built) // 4, breaks


def test_digests_make_room_for_more_of_the_conversation():
    """Within a token budget, the window holds more turns than would fit whole."""
    history = [m for turn in evening(30) for m in turn]
    cut = build_prompt(SYSTEM, history, max_messages=100, max_tokens=1500)
    assert cut.metrics.digested > 0 and cut.metrics.estimated_tokens <= 1500
    kept = history[-cut.metrics.kept:]
    whole = build_prompt(SYSTEM, kept, max_messages=100, max_tokens=100_000)
    assert whole.metrics.evicted == 0 and whole.metrics.estimated_tokens > 1500


def test_the_stored_history_is_not_changed():
    turns = evening(24)
    history = [m for turn in turns for m in turn]
    stored = copy.deepcopy(history)
    prompt = build_prompt(SYSTEM, history, max_messages=20, max_tokens=1200)
    assert prompt.metrics.digested > 0 and history == stored


def test_a_digest_keeps_errors_messages_and_short_results_as_they_are():
    assert digest('{"error":"nothing matches \'zzqx\'"}') == '{"error":"nothing matches \'zzqx\'"}'
    long_error = json.dumps({"error": "Sonarr is not answering at http://tv.lan:8989 " * 6})
    assert digest(long_error).startswith(f"{DIGEST_LEAD} error: Sonarr is not answering")
    queue = json.dumps({"downloads": [
        {"title": "Severance", "progress": "63%", "time_left": "12 min",
         "status": "downloading", "episodes": "S02E05"},
        {"title": "Dune: Part Two (2024)", "progress": "63%", "time_left": "2 h 15 min",
         "status": "downloading"}], "total": 4})
    assert digest(queue) == f"{DIGEST_LEAD} downloads: Severance, Dune: Part Two (2024); total 4"
    assert digest("not json at all") == "not json at all"


def test_the_engine_sends_digests_and_stores_what_really_happened(engine_for, fake_llm, clock):
    """A real evening of searches in a window the token budget cuts: later requests carry
    digests of the early results, while every stored result row holds the whole result."""
    engine = engine_for(arr=True, history={"max_messages": 20, "max_context_tokens": 2500})
    alex = db.User.get(phone=ADMIN).id
    for number, query in enumerate(["office", "dune", "severance", "office", "dune",
                                    "severance", "office"]):
        clock.advance(minutes=3)
        fake_llm.enqueue_tool_calls([("search_media", {"query": query})])
        fake_llm.enqueue_text(f"Found some {query}.")
        engine.handle(alex, f"search {query} {number}")
        fake_llm.enqueue_text("Sure.")
        engine.handle(alex, f"thanks {number}")
    sent = [m for request in fake_llm.requests for m in request["messages"]
            if m["role"] == "tool"]
    briefs = [m["content"] for m in sent if m["content"].startswith(DIGEST_LEAD)]
    assert briefs and all(re.search(r" id (tv|m)[0-9]+", brief) for brief in briefs)
    stored = [m["content"] for m in get_history(alex, 200) if m["role"] == "tool"]
    assert len(stored) == 7 and all(json.loads(content)["results"] for content in stored)
    assert not any(content.startswith(DIGEST_LEAD) for content in stored)
