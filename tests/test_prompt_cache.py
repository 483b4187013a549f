"""The prompt is cache-stable: each request's rendered prompt starts with the one before it.

A local model server (llama.cpp, Ollama, vLLM) reuses the longest common prefix of the new
rendered prompt and the last one and evaluates the rest again, so a household on a CPU waits
for every character after the first difference. This holds bench/prompt_cache.py's property
without the server: the real engine answers the bench's 30-text evening (the clock moving
1-8 minutes between texts, a window of 8 messages so it evicts as it goes), and the fake
server renders each request through a vendored chat template. The share of each rendered
prompt that the previous one already held (in characters, a stand-in for tokens) must meet
the issue's target at a text's first request (>= 90%, median), and comes close to the others
(the bench measures those in the server's tokens): after a tool result >= 95% (median, the
issue's target; the result itself is new) and >= 85% over all requests together (each
block eviction rewrites the pruned line, which Qwen's template renders before the tools).
"""

import json
import statistics

import pytest

from bench.household_script import TEXTS
from mediabot.store import db
from tests.fakes.chat_templates import TEMPLATES
from tests.support import ADMIN


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
    alex = db.User.get(phone=ADMIN).id
    for minutes, text, call in TEXTS:
        clock.advance(minutes=minutes)
        if call is not None:
            fake_llm.enqueue_tool_calls([(call["name"], json.loads(call["arguments"]))])
        if text != "Y" and (call is None or call["name"] != "remove_media"):
            fake_llm.enqueue_text(f"Done: {text[:40]}.")
        engine.handle(alex, text)


@pytest.mark.parametrize("template", ["qwen2.5", "vllm-hermes"])
def test_each_prompt_starts_with_the_one_before_it(engine_for, fake_llm, clock, template):
    engine = engine_for(arr=True)
    fake_llm.use_template(template)
    run_evening(engine, fake_llm, clock)
    rendered, requests = fake_llm.rendered, fake_llm.requests
    assert len(rendered) == len(requests) >= 50, "every request was rendered"
    first, after_tool, reused, total = [], [], 0, 0
    for index in range(1, len(rendered)):
        share = cached(rendered[index - 1], rendered[index], TEMPLATES[template].eos)
        reused, total = reused + share, total + len(rendered[index])
        role = requests[index]["messages"][-1]["role"]
        (after_tool if role == "tool" else first).append(share / len(rendered[index]))
    assert len(first) == 28 and len(after_tool) > 20
    assert statistics.median(first) >= 0.90, sorted(first)
    assert statistics.median(after_tool) >= 0.95, [round(x, 3) for x in sorted(after_tool)]
    assert reused / total >= 0.85
