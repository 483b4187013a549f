"""The prompt is cache-stable: each request's rendered prompt starts with the one before it.

A local model server (llama.cpp, Ollama, vLLM) reuses the longest common prefix of the new
rendered prompt and the last one and evaluates the rest again, so a household on a CPU waits
for every character after the first difference. This holds bench/prompt_cache.py's property
without the server: the real engine answers the bench's 30-text evening (the clock moving
1-8 minutes between texts, at the default window of 20 messages and at 8, where it evicts as
it goes), and the fake server renders each request through a vendored chat template. The
share of each rendered prompt that the previous one already held (in characters, a stand-in
for tokens) must meet the issue's targets: >= 90% at a text's first request (median), >= 95%
after a tool result (median; the result itself is new, so at 8 messages it cannot), and over
all requests together >= 90% (OVERALL), the next prompts read ahead once a reply has gone
included (Qwen's template writes the tools after the system message, so each block eviction
that names a new kind of tool in the pruned line re-reads them; read ahead, off the wait).
A tool round never loses the prompt its turn already sent, and the pruned line only grows,
in the catalog's order.
"""

import itertools
import json
import statistics

import pytest

from bench.household_script import TEXTS
from mediabot.conversation.incoming import read_text
from mediabot.store import db, people
from tests.fakes.chat_templates import TEMPLATES
from tests.support.household import ADMIN
from tests.support.messages import LLAMA_PROPS
from tests.support.prompts import prelude


def shared(before: str, after: str) -> int:
    """How many leading characters ``after`` has in common with ``before``."""
    count = 0
    for old, new in zip(before, after, strict=False):
        if old != new:
            break
        count += 1
    return count


def cached(before: str, after: str, eos: str) -> int:
    """What a server holds of ``after``: the shared prefix, and when all of ``before`` is
    shared, also the answer it generated after it (up to its end-of-turn marker), which stays
    in its cache as llama-server's slot does."""
    count = shared(before, after)
    end = after.find(eos, count) if count == len(before) else -1
    return count if end < 0 else end + len(eos)


def run_evening(engine, fake_llm, clock) -> None:
    """Each text's first answer is its call (or its reply), the answer after a tool result
    its reply: a tool that answers the text itself is asked for nothing more. Each text is
    answered as the daemon does, on a server that answers as llama-server: the reply, then
    the work after it, where the next prompt is read ahead (one token) when it would not
    begin with what the server read (after a tool's own answer, or a slide)."""
    fake_llm.serve_root("/props", {**LLAMA_PROPS, "total_slots": 1})
    alex = db.User.get(phone=ADMIN).id
    for minutes, text, call in TEXTS:
        clock.advance(minutes=minutes)
        fake_llm.set_responder(lambda body, text=text, call=call:
                               [(call["name"], json.loads(call["arguments"]))]
                               if call is not None and body["messages"][-1]["role"] == "user"
                               and body["max_tokens"] > 1
                               else f"Done: {text[:40]}.")
        answer = engine.respond(read_text(people.get_person(alex, "en"), text))
        engine.after_turn(answer)


@pytest.fixture(scope="module")
def evenings():
    """The evenings already run in this module, by (template, max_messages): the same
    evening at 8 messages is read by two tests, and it is the slowest thing here."""
    return {}


def evening(evenings, engine_for, fake_llm, clock, template, max_messages):
    """The requests and rendered prompts of the bench's evening under ``template`` at a
    window of ``max_messages``: run once per module, then only read."""
    if (template, max_messages) not in evenings:
        engine = engine_for(arr=True, history={"max_messages": max_messages})
        fake_llm.use_template(template)
        run_evening(engine, fake_llm, clock)
        evenings[template, max_messages] = (tuple(fake_llm.requests), tuple(fake_llm.rendered))
    return evenings[template, max_messages]


def read_ahead(requests) -> set[int]:
    """The requests that read a text's next prompt ahead, once its reply had gone (for one
    token): after a tool's own answer (the server had read only up to the call) or where
    the window slid."""
    return {i for i, body in enumerate(requests) if body["max_tokens"] == 1}


def shares(requests, rendered, template):
    """Per request after the first: (its last message's role, characters the server holds,
    the previous prompt's length, its length)."""
    eos = TEMPLATES[template].eos
    return [(requests[i]["messages"][-1]["role"],
             cached(rendered[i - 1], rendered[i], eos), len(rendered[i - 1]), len(rendered[i]))
            for i in range(1, len(rendered))]


# overall share reused, in rendered characters: the 0.90 where this evening reaches
# it; Qwen writes the tools after the system message, so each new kind of tool in the
# pruned line re-reads them (nine kinds here: see docs/benchmarks.md). Shares, not amounts:
# when issue 31 cut the shared system text and tools by a third (a prompt of 6,298 -> 4,750
# characters, median, Qwen at 20), what each text and tool round adds became a larger share
# of a smaller prompt, while what the server reads over the evening fell (Qwen 37,181 ->
# 33,245 characters at 20, 40,525 -> 33,540 at 8; Hermes 20,559 -> 22,151 and 17,339 ->
# 17,794, more history fitting the same token budget): 0.875 -> 0.86 and 0.84 -> 0.82 for
# Qwen, and a tool round's median share 0.95 -> 0.92, with its size held below instead.
# The default cold-read budget then went 1200 -> 1400 with at least ~400 tokens of history
# (was ~600): a smaller window again (the same round is 0.919 of it), so 0.91; the round's
# size (ROUND_CHARS) and that it re-reads nothing (the test after this one) are the guard.
# Since tools answer the queue, what is coming and a settled title's status themselves, the
# evening makes 40 requests, not 50: the after-tool requests that went (each ~0.92 reused)
# took Hermes at 20 from 0.907 to 0.898 of a smaller total, while what the server reads over
# the evening fell (READ: rendered characters, 28,169 -> 26,235 for Hermes at 20, 26,334 ->
# 24,800 for Qwen; 21,051 -> 18,534 and 19,609 -> 17,388 at 8), and nothing is written for them.
# Since the next prompt is read ahead once a reply has gone where it would not begin with
# what the server read (after a tool's own answer or a slide: 15 of 30 texts at 20, 20 at
# 8), the server reads the result, the reply and a slid window then, and the next text only
# its own words: the share reused over all requests, read-aheads included, went 0.898 ->
# 0.924 for Hermes at 20 (Qwen's, bound at 0.86 and 0.82: 0.910, 0.929 at 8); what is read on the
# person's wait (READ) fell 26,235 -> 11,121 characters for Hermes at 20 and 24,800 -> 9,686
# for Qwen (17,388 -> 9,537 at 8), and in all (READ_ALL) it grew by the stand-in for the
# next text each read-ahead reads (~40 characters): 24,800 -> 25,436 for Qwen at 20; with
# short time stamps and one id per title it is back within what the server read over the
# evening before any of them (READ_ALL holds the bounds READ held then). At 20 messages the
# shorter search results let the window sit at its budget's edge before "can you find the
# office uk version": the read-ahead's "ok" fits where that text does not, so its first
# request slides on the person's wait (913 characters for Qwen): READ at 20 is what the
# tree with all three measures (Qwen 9,905, Hermes 11,358), not the 9,686 and 11,121 of the
# read-ahead alone.
OVERALL = {("qwen2.5", 20): 0.90, ("qwen2.5", 8): 0.92,
           ("vllm-hermes", 20): 0.92, ("vllm-hermes", 8): 0.94}
READ = {("qwen2.5", 20): 10_000, ("qwen2.5", 8): 9_600,
        ("vllm-hermes", 20): 11_400, ("vllm-hermes", 8): 10_800}
READ_ALL = {("qwen2.5", 20): 24_900, ("qwen2.5", 8): 17_500,
            ("vllm-hermes", 20): 26_300, ("vllm-hermes", 8): 18_600}
ROUND_CHARS = 400   # what a tool round adds, median: the call and its result (~340 here)


@pytest.mark.parametrize("max_messages", [20, 8])
@pytest.mark.parametrize("template", ["qwen2.5", "vllm-hermes"])
def test_each_prompt_starts_with_the_one_before_it(evenings, engine_for, fake_llm, clock,
                                                   template, max_messages):
    requests, rendered = evening(evenings, engine_for, fake_llm, clock, template, max_messages)
    assert len(rendered) == len(requests) >= 40, "every request was rendered"
    rows = shares(requests, rendered, template)
    ahead = read_ahead(requests)
    first = [held / size for i, (role, held, _, size) in enumerate(rows, 1)
             if role != "tool" and i not in ahead]
    after_tool = [held / size for role, held, _, size in rows if role == "tool"]
    assert len(first) == 28 and len(ahead) >= 5 and len(after_tool) > 8
    # after a tool's own answer the server never saw its result or the reply: they are read
    # ahead once the reply has gone, so the next text reads only its own words
    assert statistics.median(first) >= 0.90, sorted(first)
    if max_messages == 20:   # at 8 the result itself is a larger share of a smaller prompt
        assert statistics.median(after_tool) >= 0.91, [round(x, 3) for x in sorted(after_tool)]
    added = [size - held for role, held, _, size in rows if role == "tool"]
    assert statistics.median(added) <= ROUND_CHARS, sorted(added)
    assert sum(r[1] for r in rows) / sum(r[3] for r in rows) >= OVERALL[template, max_messages]
    read = [size - held for _, held, _, size in rows]
    assert len(rendered[0]) + sum(read) <= READ_ALL[template, max_messages]
    assert len(rendered[0]) + sum(n for i, n in enumerate(read, 1) if i not in ahead) \
        <= READ[template, max_messages], "what the person waits for"


@pytest.mark.parametrize("template", ["qwen2.5", "vllm-hermes"])
def test_a_tool_round_never_re_reads_what_the_turn_already_sent(evenings, engine_for, fake_llm,
                                                                 clock, template):
    """After a tool result the server holds the whole previous prompt and its answer: the
    window does not slide inside a turn's tool rounds, even at 8 messages."""
    requests, rendered = evening(evenings, engine_for, fake_llm, clock, template, 8)
    slid = [index for index, (role, held, before, _)
            in enumerate(shares(requests, rendered, template), 1)
            if role == "tool" and held < before]
    assert slid == []


def pruned_lines(requests) -> list[str]:
    """The pruned-context paragraph of each request's person part that has one."""
    paragraphs = (p for r in requests for p in prelude(r["messages"]).split("\n\n"))
    return [p for p in paragraphs if p.startswith("Earlier messages were pruned")]


def test_the_pruned_line_only_grows_as_tools_fall_out_and_the_fetched_rows_move_on(
        engine_for, fake_llm, clock):
    engine = engine_for(arr=True, history={"max_messages": 4, "fetch_limit": 8})
    alex = db.User.get(phone=ADMIN).id
    for number, name in enumerate(["upcoming", "search_media", "download_queue"] * 4):
        clock.advance(minutes=3)
        fake_llm.enqueue_tool_calls([(name, {"query": "dune"} if name == "search_media"
                                      else {})])
        fake_llm.enqueue_text(f"Done {number}.")
        engine.handle(alex, f"text {number}")
    lines = list(dict.fromkeys(pruned_lines(fake_llm.requests)))
    assert lines[-1].endswith("search_media, download_queue, upcoming.")   # the catalog's order
    named = [set(line.split(": ")[1].rstrip(".").split(", ")) for line in lines]
    assert all(old < new for old, new in itertools.pairwise(named)), lines


@pytest.mark.parametrize("template", ["qwen2.5", "vllm-hermes"])
def test_a_question_that_lapses_is_told_on_the_text_and_keeps_the_prefix(engine_for, fake_llm,
                                                                         clock, template):
    """A text that lets a removal question lapse: the model is told on that text, and both
    that turn's prompt and the next text's keep everything a server already read up to the
    turn before (a note in the system message re-read the tools and the whole history)."""
    engine = engine_for(arr=True)
    fake_llm.use_template(template)
    alex = db.User.get(phone=ADMIN).id
    fake_llm.enqueue_text("Nothing is downloading.")
    engine.handle(alex, "what's downloading?")
    fake_llm.enqueue_tool_calls([("remove_media", {"kind": "series", "id": 73244,
                                                   "delete_files": True})])
    clock.advance(minutes=2)
    engine.handle(alex, "delete The Office")
    for text in ("actually, is Severance complete?", "thanks"):
        clock.advance(minutes=3)
        fake_llm.enqueue_text("Done.")
        engine.handle(alex, text)
    rendered, requests = fake_llm.rendered, fake_llm.requests
    lapsing, after = requests[-2]["messages"], requests[-1]["messages"]
    assert "did not answer mediabot's removal question" in lapsing[-1]["content"]
    assert lapsing[0] == after[0] == requests[0]["messages"][0], "one system message all along"
    # the lapsing turn's prompt starts with the previous prompt whole; the next one differs
    # only from the lapsing text on (where the note was)
    assert rendered[-2].startswith(rendered[-3][:shared(rendered[-3], rendered[-2])])
    assert shared(rendered[-3], rendered[-2]) >= len(rendered[-3]) - 40
    note_at = rendered[-2].index("\n\n[Their text did not answer")
    assert shared(rendered[-2], rendered[-1]) == note_at
