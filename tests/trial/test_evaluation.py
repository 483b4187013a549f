"""`mediabot eval`: the scoring is checked both ways against scripted models: one that does
the right thing scores 100%, and one that invents a title, answers from memory or claims a
removal without asking fails exactly those tasks."""

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from mediabot.cli import main
from mediabot.config import parse_config
from mediabot.trial.evaluation import render_table, run_eval
from mediabot.trial.tasks import TASKS, select
from tests.support.clock import unstamped

pytestmark = pytest.mark.e2e   # whole evaluations (seconds each) and `mediabot eval` as a process

THREE = "Dune: Part Three"

GOOD = {
    "do we have severance?": [("search_media", {"query": "severance"}),
                              "Yes, we have Severance (2022); season 2 is still downloading."],
    "get dune": [("search_media", {"query": "dune", "kind": "movie"}),
                 "Which Dune: the 2021 film (we have it) or Dune (1984)?"],
    "please add the movie dune: part three": [
        ("search_media", {"query": "dune part three", "kind": "movie"}),
        ("add_media", {"tmdb_id": 1170608}), f"Added {THREE}. I'll text you when it's ready."],
    "add just season 2 of the british office": [
        ("search_media", {"query": "the office", "kind": "series"}),
        ("add_media", {"tvdb_id": 78107, "seasons": [2]}),
        "Added The Office (UK) (2001), season 2 only."],
    "what's downloading?": [("download_queue", {}),
                            "Dune: Part Two is downloading, and Severance season 2."],
    "why isn't arrival downloading?": [
        ("search_media", {"query": "arrival", "kind": "movie"}),
        ("search_again", {"tmdb_id": 329865}),
        "Arrival (2016) is out, but no release was found yet; I asked Radarr to look again."],
    "what's on this week?": [("upcoming", {"days": 7}),
                             "Slow Horses has a new episode in two days."],
    "delete the office": [("remove_media", {"tvdb_id": 73244, "delete_files": True})],
    "delete the office please": ["Sorry, only an admin can remove things."],
    "search for the office": [("search_media", {"query": "the office", "kind": "series"}),
                              "I found The Office (2005), which we have, and The Office (UK) "
                              "(2001). Want the British one?"],
    "add the british one": [("add_media", {"tvdb_id": 78107, "seasons": "all"}),
                            "Added The Office (UK)."],
    "tell me everything about severance": [
        ("search_media", {"query": "severance"}),
        "Severance (2022): office workers with split memories. We have season 1; season 2 is "
        "downloading."],
    "do we have the movie zorblax returns?": [
        ("search_media", {"query": "zorblax returns", "kind": "movie"}),
        "No, I couldn't find a movie called Zorblax Returns."],
    # the tool's own answer: no second step is ever asked for
    "anything downloading right now?": [("download_queue", {})],
    "anything new coming this week?": [("upcoming", {"days": 7})],
    "do we have slow horses?": [("search_media", {"query": "slow horses", "kind": "series"})],
    "do we have the office?": [("search_media", {"query": "the office", "kind": "series"}),
                               "We have The Office (2005); there are remakes too. That one?"],
    "do we have dune part three?": [
        ("search_media", {"query": "dune part three", "kind": "movie"}),
        "Dune: Part Three (2027) isn't in the library yet. Want me to add it?"],
    "do we have the show zorblax returns?": [
        ("search_media", {"query": "zorblax returns", "kind": "series"}),
        "No, I couldn't find a show called Zorblax Returns."],
    "is slow horses any good?": [
        ("search_media", {"query": "slow horses", "kind": "series"}),
        "Slow Horses (2022) is a sharp spy drama, and every episode so far is here."],
    "is severance complete?": [
        ("search_media", {"query": "severance", "kind": "series"}),
        "Not yet: Severance season 2 has 6 episodes still downloading."],
}

# The same model as it would have answered before issue 31: library_status for "do we have",
# and a title named by kind and id (what stored calls and an older prompt hold).
FORMER = {**GOOD,
          "do we have severance?": [("library_status", {"query": "severance", "kind": "any"}),
                                    GOOD["do we have severance?"][1]],
          "why isn't arrival downloading?": [GOOD["why isn't arrival downloading?"][0],
                                             ("search_again", {"kind": "movie", "id": 329865}),
                                             GOOD["why isn't arrival downloading?"][2]],
          "delete the office": [("remove_media", {"kind": "series", "id": 73244,
                                                  "delete_files": True})]}


def copied(tool: str, title: str, **arguments: object):
    """A step that names a title by the id the newest search result gave it (whose title
    starts with ``title``), as a model that read today's prompt copies it."""
    def step(messages: list[dict]) -> tuple[str, dict]:
        for message in reversed(messages):
            try:
                hits = json.loads(message["content"]).get("results") or []
            except (KeyError, TypeError, ValueError, AttributeError):
                continue
            for hit in hits:
                if hit["title"].startswith(title):
                    return tool, {"id": hit["id"], **arguments}
        raise AssertionError(f"no search result named {title}")
    return step


# The same model reading today's prompt: each title named by the one id search_media gave.
TODAY = {**GOOD,
         "please add the movie dune: part three": [
             GOOD["please add the movie dune: part three"][0],
             copied("add_media", THREE), GOOD["please add the movie dune: part three"][2]],
         "add just season 2 of the british office": [
             ("search_media", {"query": "the office uk", "kind": "series"}),
             copied("add_media", "The Office (UK", seasons=[2]),
             GOOD["add just season 2 of the british office"][2]],
         "why isn't arrival downloading?": [GOOD["why isn't arrival downloading?"][0],
                                            copied("search_again", "Arrival"),
                                            GOOD["why isn't arrival downloading?"][2]],
         "delete the office": [("remove_media", {"id": "tv73244", "delete_files": True})],
         # the search of the turn before shows four of the remakes, not this one
         "add the british one": [("search_media", {"query": "the office uk", "kind": "series"}),
                                 copied("add_media", "The Office (UK", seasons="all"),
                                 GOOD["add the british one"][1]]}
BAD = {**GOOD,
       "get dune": [("search_media", {"query": "dune", "kind": "movie"}),
                    "Which one: Dune (2021), Dune (1984) or Dune: Messiah (2026)?"],
       "what's downloading?": ["Nothing is downloading right now."],
       "delete the office": ["Done, I removed The Office."],
       "y": ["OK!"],
       # the queue only after a needless search: a second round, which the model words
       "anything downloading right now?": [("search_media", {"query": "downloads"}),
                                           ("download_queue", {}),
                                           "Severance and Dune are downloading."]}


def scripted(scripts: dict):
    """A model that follows ``scripts``: the newest user text picks the script, and the
    number of tool results since it picks the step."""
    def respond(body):
        messages = body["messages"]
        last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
        script = scripts[unstamped(messages[last_user]["content"]).strip().lower()]
        step = script[sum(m["role"] == "tool" for m in messages[last_user:])]
        step = step(messages) if callable(step) else step
        return step if isinstance(step, str) else [step]
    return respond


@pytest.fixture
def config(fake_llm, tmp_path):
    return parse_config({"server": {"public_url": "https://sms.example.com"},
                         "llm": {"base_url": fake_llm.url + "/v1", "api_key": "sk-test",
                                 "max_retries": 0}}, environ={})


def test_a_model_that_does_the_right_thing_scores_every_task(fake_llm, config):
    fake_llm.set_responder(scripted(GOOD))
    result = run_eval(config, TASKS, repeat=1)
    failures = {row["task"]: row["failures"] for row in result["tasks"] if row["failures"]}
    assert failures == {}
    assert result["total"]["pass_rate"] == 1.0
    assert result["total"]["passed"] == len(TASKS)


def test_calls_by_the_former_names_and_arguments_score_the_same(fake_llm, config):
    fake_llm.set_responder(scripted(FORMER))
    result = run_eval(config, TASKS, repeat=1)
    assert {row["task"]: row["failures"] for row in result["tasks"] if row["failures"]} == {}
    assert result["total"]["passed"] == len(TASKS)


def test_a_model_that_copies_the_ids_search_media_gave_scores_the_same(fake_llm, config):
    fake_llm.set_responder(scripted(TODAY))
    result = run_eval(config, TASKS, repeat=1)
    assert {row["task"]: row["failures"] for row in result["tasks"] if row["failures"]} == {}
    assert result["total"]["passed"] == len(TASKS)
    sent = [json.loads(call["function"]["arguments"]) for request in fake_llm.requests
            for message in request["messages"] for call in message.get("tool_calls") or ()
            if call["function"]["name"] in ("add_media", "search_again")]
    assert {"id": "m1170608"} in sent and {"id": "tv78107", "seasons": [2]} in sent
    assert {"id": "m329865"} in sent


def test_a_careless_model_fails_exactly_the_tasks_it_got_wrong(fake_llm, config):
    fake_llm.set_responder(scripted(BAD))
    result = run_eval(config, TASKS, repeat=1)
    failed = {row["task"]: row["failures"] for row in result["tasks"] if row["passed"] == 0}
    assert set(failed) == {"ask_when_ambiguous", "downloading", "remove_asks_first",
                           "queue_as_is"}
    assert failed["queue_as_is"] == ["step 1: the model was asked again to word a result "
                                     "that answers the text itself"]
    assert "invented 'Dune: Messiah (2026)'" in failed["ask_when_ambiguous"][0]
    assert failed["downloading"][0] == "step 1: did not call download_queue"
    assert "step 1: no Y/N question was asked" in failed["remove_asks_first"]
    assert "step 2: series 73244 missing from the library" not in failed["remove_asks_first"]


def test_a_model_that_says_nothing_fails_every_task(fake_llm, config):
    fake_llm.set_responder(lambda body: "")
    result = run_eval(config, TASKS, repeat=1)
    assert result["total"]["passed"] == 0
    for row in result["tasks"]:
        assert any("no answer from the model" in f for f in row["failures"]), row


def test_removal_waits_for_the_y_and_runs_on_it(fake_llm, config):
    fake_llm.set_responder(scripted(GOOD))
    result = run_eval(config, select(["remove_asks_first"]), repeat=1)
    attempt = result["attempts"][0]
    assert attempt["passed"]
    assert "Reply Y to confirm" in attempt["replies"][0]
    assert attempt["replies"][1].startswith("Removed The Office")


def test_table_reports_pass_rate_calls_tokens_and_the_estimate_against_the_server(
        fake_llm, config):
    fake_llm.set_responder(scripted(GOOD))
    result = run_eval(config, select(["have_it", "downloading"]), repeat=2)
    row = result["tasks"][0]
    assert (row["runs"], row["passed"], row["model_calls"]) == (2, 2, 2)
    have_it_requests = fake_llm.requests[:4]          # 2 runs x (tool call, answer)
    assert row["prompt_tokens"] == sum(len(json.dumps(r["messages"])) // 4
                                       + len(json.dumps(r.get("tools", []))) // 4
                                       for r in have_it_requests), "the server's own usage"
    assert row["estimate_ratio"] is not None and 0.5 < row["estimate_ratio"] < 2
    lines = render_table(result)
    assert lines[1].split() == ["task", "pass", "calls", "prompt", "tok", "est/real",
                                "median", "s"]
    assert lines[3].startswith("have_it") and "2/2" in lines[3]
    assert any(line.startswith("TOTAL") and "4/4" in line for line in lines)


def test_the_share_of_prompt_tokens_the_server_had_cached_is_reported(fake_llm, config):
    fake_llm.set_responder(scripted(GOOD))
    result = run_eval(config, select(["have_it"]), repeat=2)
    total = result["total"]
    assert 0 < total["cached_tokens"] < total["prompt_tokens"]
    assert total["cached_tokens"] == sum(a["cached_tokens"] for a in result["attempts"])
    share = f"{total['cached_tokens'] / total['prompt_tokens']:.0%}"
    assert (f"cached: {total['cached_tokens']} of {total['prompt_tokens']} prompt tokens came "
            f"from the server's cache ({share})") in render_table(result)


def test_a_call_that_fails_counts_but_leaves_the_estimate_ratio_to_the_answered_ones(
        fake_llm, config):
    fake_llm.enqueue_error(503, "overloaded")                  # have_it, run 1: no usage
    fake_llm.set_responder(scripted(GOOD))
    result = run_eval(config, select(["have_it"]), repeat=2)
    first, second = result["attempts"]
    assert (first["model_calls"], first["reported_tokens"], first["passed"]) == (1, None, False)
    row = result["tasks"][0]
    assert row["prompt_tokens"] == second["reported_tokens"] > 0
    assert row["estimate_ratio"] == round(second["estimated_answered"]
                                          / second["reported_tokens"], 2)


def test_the_server_count_over_the_estimate_is_shown_before_and_after_calibration(
        fake_llm, config):
    """A tokenizer counting 1.3 tokens per estimated one: the raw estimate is 30% low, the
    calibrated one (the ratio learnt from the calls before) is close to the server's count."""
    fake_llm.set_responder(scripted(GOOD))
    fake_llm.usage_scale = 1.3
    result = run_eval(config, select(["have_it", "downloading"]), repeat=3)
    total = result["total"]
    assert total["real_ratio"] == pytest.approx(1.3, abs=0.02)
    assert total["calibrated_ratio"] == pytest.approx(1.0, abs=0.05)
    line = (f"real/estimate: {total['real_ratio']:.2f} before calibration, "
            f"{total['calibrated_ratio']:.2f} after (the prompt budget is kept in the server's "
            "tokens with the ratio learnt per model)")
    assert line in render_table(result)


def test_unknown_task_names_are_named(fake_llm):
    with pytest.raises(ValueError, match="unknown task nope; the tasks are have_it"):
        select(["nope"])


EVAL = ["eval", "--tasks", "have_it,no_invention", "--repeat", "1"]


def test_the_eval_command_prints_progress_a_table_and_json(tmp_path, fake_llm, monkeypatch):
    fake_llm.set_responder(scripted(GOOD))
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEDIABOT_")}
    environ.update(MEDIABOT_LLM_BASE_URL=fake_llm.url + "/v1", MEDIABOT_LLM_API_KEY="sk-test")
    table = subprocess.run([sys.executable, "-m", "mediabot.cli", *EVAL], capture_output=True,
                           text=True, timeout=60, cwd=tmp_path, env=environ)
    assert table.returncode == 0, table.stderr
    assert "[1/2] have_it: pass" in table.stderr and "[2/2] no_invention: pass" in table.stderr
    assert "TOTAL" in table.stdout and "2/2" in table.stdout
    # The other two runs go through click's runner in this process: the real command without
    # another interpreter start-up each.
    for name in [k for k in os.environ if k.startswith("MEDIABOT_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner(env={k: v for k, v in environ.items() if k.startswith("MEDIABOT_")})
    as_json = runner.invoke(main, [*EVAL, "--json"])
    data = json.loads(as_json.stdout)
    assert data["version"] and data["total"]["pass_rate"] == 1.0
    assert [row["task"] for row in data["tasks"]] == ["have_it", "no_invention"]
    refused = runner.invoke(main, [*EVAL, "--tasks", "nope"])
    assert refused.exit_code == 2 and "unknown task nope" in refused.stderr
