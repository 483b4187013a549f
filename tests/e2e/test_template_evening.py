"""End to end under real chat templates: a household's evening with mediabot, served by a
fake OpenAI server that renders every request through Mistral's or Llama 3.1's own template,
as vLLM and llama-cpp-python do, and refuses what the template refuses with vLLM's 400.

The engine runs for real (real openai SDK over loopback HTTP, real SQLite, fake Sonarr and
Radarr through arrapi), with a small window so the conversation is evicted as it goes, a
parallel call, and a model failure in the middle of a tool round (an overloaded server's
503: a refusal would be retried with the smallest prompt, which is not what is tested here).
"""

import pytest

from mediabot.conversation.model_turn import APOLOGIES, APOLOGY, STUCK_REPLY
from mediabot.conversation.prompt.build import validate_messages
from mediabot.trial.sim.arr_fixtures import DUNE_1984_TMDB, OFFICE_TVDB
from tests.support.clock import short_stamped

# (what Alex texts, the model's tool calls for it, the model's reply after the results; None
# where the model writes none: it fails, mediabot asks or answers, or the tool answers itself)
EVENING = [
    ("do we have dune?", [("search_media", {"query": "dune", "kind": "movie"})],
     "Dune (2021) is in the library; Dune (1984) is not. Want the 1984 one?"),
    ("yes add the 1984 one", [("add_movie", {"tmdb_id": DUNE_1984_TMDB})],
     "Added Dune (1984); it is searching for a copy now."),
    ("what's downloading, and what's on this week?",
     [("download_queue", {}), ("upcoming", {"days": 7})],
     "Severance is downloading, and Slow Horses has a new episode this week."),
    # the model fails here, in the tool round (a search whose result needs its words)
    ("anything new tomorrow?", [("search_media", {"query": "slow horses"})], None),
    ("hello? anything new tomorrow?", [], "Nothing airs tomorrow, sorry to disappoint."),
    ("do we have severance?", [("library_status", {"query": "severance", "kind": "series"})],
     "Severance is in the library with season 2 downloading."),
    ("is slow horses any good?", [("search_media", {"query": "slow horses"})],
     "Slow Horses (2022) is a spy drama; it is already in the library."),
    ("thanks!", [], "Any time, Alex."),
    ("what's coming up in the next two weeks?", [("upcoming", {"days": 14})], None),
    ("is the office in the library?", [("library_status", {"query": "the office"})],
     "Yes, all nine seasons of The Office are on disk."),
    ("delete the office", [("remove_media", {"kind": "series", "id": OFFICE_TVDB,
                                             "delete_files": True})], None),
    ("N", None, None),                                   # mediabot answers, no model call
    ("what about dune part two?", [("search_media", {"query": "dune part two"})],
     "Dune: Part Two (2024) is not in the library yet. Want it?"),
    ("any downloads stuck?", [("download_queue", {})], None),
    ("thanks, that's all for tonight", [], "Good night, Alex!"),
]
FAILED_TURN = 3


@pytest.fixture
def engine(engine_for):
    return engine_for(arr=True, history={"max_messages": 8})


@pytest.mark.parametrize("template, mode", [
    ("mistral-nemo", "vllm"), ("mistral-nemo", "passthrough"),
    ("llama-3.1", "vllm"), ("llama-3.1", "passthrough")])
def test_a_household_evening_through_a_real_template(engine, alex, fake_llm, template, mode):
    fake_llm.use_template(template, mode=mode)
    replies = []
    for turn, (text, calls, answer) in enumerate(EVENING):
        if calls:
            fake_llm.enqueue_tool_calls(calls, ids="ollama" if turn % 2 else None)
        if turn == FAILED_TURN:
            fake_llm.enqueue_error(503, "The server is overloaded, try again later.")
        elif answer is not None:
            fake_llm.enqueue_text(answer)
        replies.append(engine.handle(alex, text))

    refused = len(fake_llm.requests) - len(fake_llm.rendered)   # none rescued by the retry
    assert refused == 0, f"{refused} requests refused by the {template} template"
    apologies = set(APOLOGIES.values()) | {APOLOGY, STUCK_REPLY}
    assert [n for n, r in enumerate(replies) if r in apologies] == [FAILED_TURN], replies
    assert replies[10].startswith("Remove The Office (2005)") and replies[11].startswith("OK")
    assert replies[-1] == "Good night, Alex!"
    assert replies[8].startswith("Coming in the next 14 days: Slow Horses"), replies[8]
    assert "downloads: Severance" in replies[13] and "stuck at" in replies[13], replies[13]
    assert "Earlier messages were pruned" in "".join(fake_llm.rendered), "the window evicted"
    after_failure = fake_llm.rendered[next(i for i, r in enumerate(fake_llm.requests)
                                           if r["messages"][-1]["content"]
                                           == short_stamped(EVENING[FAILED_TURN + 1][0]))]
    assert EVENING[FAILED_TURN + 1][0] in after_failure, "the newest text reaches the model"
    for request in fake_llm.requests:
        validate_messages(request["messages"])

