"""The pure prompt builder (``conversation/prompt/build.py``): orphan pruning, sanitising,
windowing and its metrics, on stored histories given as data."""

import copy
import inspect
import json
import logging

import pytest

from mediabot.config import HistoryConfig
from mediabot.conversation.prompt.build import (
    build_llm_messages,
    build_prompt,
    estimate_tokens,
    prune_orphaned_user_messages,
    validate_messages,
)
from mediabot.conversation.prompt.shape import (
    INTERRUPTED_RESULT,
    UNANSWERED_LINE,
    portable_arguments,
)
from tests.support.messages import SYSTEM, calls, contents, reply, result, user
from tests.support.prompts import body, prelude


def context(messages):
    """What the prompt says of the window after the shared system prompt, which stays alone
    in the system message: the person's part, as paragraphs after it (``prelude``)."""
    assert messages[0]["content"] == SYSTEM
    part = prelude(messages)
    return "\n\n" + part if part else ""


# --------------------------------------------------------------- seed 000: orphan pruning

TOOL_CALL = calls(("c1", "search_media"))
TOOL_RESULT = result("c1")
PRUNE_CASES = [
    ([user("hi"), user("hello"), reply("hey")], [user("hello"), reply("hey")]),
    ([user("a"), user("b"), user("c"), reply("ok")], [user("c"), reply("ok")]),
    ([user("a"), reply("b"), user("c"), user("d")], [user("a"), reply("b"), user("d")]),
    ([user("a"), TOOL_CALL, TOOL_RESULT, user("b"), user("c")],
     [user("a"), TOOL_CALL, TOOL_RESULT, user("c")]),
    ([user("a")], [user("a")]),
    ([], []),
    ([reply("a"), user("b")], [reply("a"), user("b")]),
]


@pytest.mark.parametrize("history, expected", PRUNE_CASES)
def test_prune_keeps_the_last_user_message_of_each_run(history, expected):
    before = copy.deepcopy(history)
    assert prune_orphaned_user_messages(history) == expected
    assert history == before


def test_tool_messages_do_not_break_a_run_of_user_messages():
    history = [user("a"), result("stray"), user("b"), reply("ok")]
    assert prune_orphaned_user_messages(history) == [result("stray"), user("b"), reply("ok")]


def test_the_builder_prunes_before_windowing_so_the_window_is_not_wasted():
    history = [user("q1"), reply("a1")] + [user(f"spam {i}") for i in range(10)] + [user("q2")]
    out = build_llm_messages(SYSTEM, history, max_messages=3)
    assert contents(body(out)) == ["q1", "a1", "q2"]


# --------------------------------------------------------- seed 001: atomic tool-call units

def test_a_tool_call_unit_is_evicted_whole_and_named_in_the_pruned_line():
    history = [user("First request"), calls(("call_1", "analyze_data"), content="I'll look"),
               result("call_1", "Analysis result"), user("Second request"),
               reply("Response to second request"), user("Third request")]
    out = build_llm_messages(SYSTEM, history, max_messages=3)
    assert context(out) == ("\n\nEarlier messages were pruned. "
                            "Tool operations included: analyze_data.")
    assert body(out) == [user("Second request"), reply("Response to second request"),
                         user("Third request")]


def test_a_unit_that_would_straddle_the_cut_is_evicted_whole():
    history = ([user("Boundary question"), calls(("b1", "search_media"), ("b2", "add_movie")),
                result("b1"), result("b2"), reply("Added"), user("Next")])
    out = build_llm_messages(SYSTEM, history, max_messages=4)   # room for 4 of the 6
    assert contents(body(out)) == ["Next"]
    assert context(out).endswith("Tool operations included: search_media, add_movie.")
    validate_messages(out)


def test_a_unit_that_fits_is_kept_with_all_its_results():
    history = [user("Keep this"), calls(("k1", "search_media")), result("k1", "Found")]
    history.append(reply("Found it"))
    history.append(user("and this"))
    out = build_llm_messages(SYSTEM, history)
    assert [m["role"] for m in out] == ["system", "user", "assistant", "tool", "assistant",
                                        "user"]
    assert out[3]["tool_call_id"] == out[2]["tool_calls"][0]["id"]
    assert out[3]["content"] == "Found"


def test_the_pruned_line_has_no_tool_part_when_no_tools_were_evicted():
    history = [user("old"), reply("old reply")] + [user("q"), reply("a")] * 3 + [user("now")]
    out = build_llm_messages(SYSTEM, history, max_messages=3)
    assert context(out) == "\n\nEarlier messages were pruned."


def test_tool_names_are_listed_once_in_first_use_order():
    history = [user("a"), calls(("1", "search_media")), result("1"), user("b"),
               calls(("2", "add_movie"), ("3", "search_media")), result("2"), result("3"),
               user("c")]
    out = build_llm_messages(SYSTEM, history, max_messages=1)
    assert context(out) == ("\n\nEarlier messages were pruned. Tool operations included: "
                            "search_media, add_movie.")


CATALOG = ["search_media", "library_status", "add_movie", "add_series", "download_queue",
           "upcoming"]


def test_with_the_catalog_the_pruned_line_names_the_tools_in_its_order():
    history = [user("a"), calls(("1", "upcoming")), result("1"), user("b"),
               calls(("2", "add_movie"), ("3", "search_media")), result("2"), result("3"),
               user("c")]
    prompt = build_prompt(SYSTEM, history, max_messages=1, tool_order=CATALOG)
    assert context(prompt.messages) == ("\n\nEarlier messages were pruned. Tool operations "
                                        "included: search_media, add_movie, upcoming.")
    assert prompt.metrics.evicted_tools == ("search_media", "add_movie", "upcoming")
    unknown = [user("a"), calls(("1", "gone_tool")), result("1"), user("b"),
               calls(("2", "upcoming")), result("2"), user("c")]
    assert context(build_llm_messages(SYSTEM, unknown, max_messages=1)).endswith(
        "gone_tool, upcoming.")
    assert context(build_prompt(SYSTEM, unknown, max_messages=1, tool_order=CATALOG).messages
                   ).endswith("included: upcoming, gone_tool.")   # names it does not know last


def test_the_pruned_line_names_the_tools_of_stored_messages_older_than_the_history_too():
    history = [user("b"), calls(("2", "search_media")), result("2"), reply("ok"), user("c")]
    older = build_prompt(SYSTEM, history, max_messages=1, tool_order=CATALOG,
                         earlier_tools=["upcoming", "add_movie"]).messages
    assert context(older) == ("\n\nEarlier messages were pruned. Tool operations included: "
                              "search_media, add_movie, upcoming.")
    kept = build_prompt(SYSTEM, history, tool_order=CATALOG, earlier_tools=["upcoming"])
    assert body(kept.messages)[0] == user("b") and kept.metrics.evicted == 0
    assert context(kept.messages).endswith("Tool operations included: upcoming.")
    assert context(build_prompt(SYSTEM, history, earlier_tools=[]).messages) == (
        "\n\nEarlier messages were pruned.")


def test_the_pruned_line_changes_only_when_a_new_kind_of_tool_falls_out():
    turns = [("search_media", "upcoming"), ("search_media",), ("upcoming",), ("add_movie",),
             ("search_media", "upcoming"), ("add_movie",), ("upcoming",), ("search_media",)]
    history, lines = [], []
    for number, names in enumerate(turns):
        history += [user(f"q{number}"), calls(*((f"{number}{n}", n) for n in names))]
        history += [result(f"{number}{n}") for n in names] + [reply(f"a{number}")]
        line = context(build_prompt(SYSTEM, history + [user("now")], max_messages=6,
                                    tool_order=CATALOG).messages)
        if line and (not lines or lines[-1] != line):
            lines.append(line)
    assert [line.split("included: ")[-1] for line in lines] == [
        "search_media, upcoming.", "search_media, add_movie, upcoming."]


# ------------------------------------------- the window holds through a turn's tool rounds

def test_a_turns_tool_rounds_keep_the_window_its_first_request_chose():
    history = [user("q1"), reply("a1"), user("q2"), reply("a2"), user("q3")]
    first = body(build_llm_messages(SYSTEM, history, max_messages=6))
    assert contents(first) == ["q1", "a1", "q2", "a2", "q3"]
    for number in range(3):     # three rounds: call, result
        history += [calls((f"c{number}", "search_media")), result(f"c{number}", f"r{number}")]
        rounds = body(build_llm_messages(SYSTEM, history, max_messages=6))
        assert rounds[:5] == first and len(rounds) == 5 + 2 * (number + 1)
    history += [reply("a3"), user("q4")]       # the turn is over: the cap holds again
    after = body(build_llm_messages(SYSTEM, history, max_messages=6))
    assert len(after) <= 6 and after[-1] == user("q4")


def test_only_the_token_budget_moves_the_window_inside_a_turn():
    history = [user("q1 " + "x" * 400), reply("a1"), user("q2"), reply("a2"), user("q3"),
               calls(("c", "search_media")), result("c", "y" * 800)]
    assert len(body(build_llm_messages(SYSTEM, history[:5], max_messages=5,
                                       max_tokens=300))) == 5   # its first request
    held = body(build_llm_messages(SYSTEM, history, max_messages=5, max_tokens=10_000))
    assert held[0]["content"].startswith("q1") and len(held) == 7
    tight = body(build_llm_messages(SYSTEM, history, max_messages=5, max_tokens=300))
    assert contents(tight)[0] == "q2"


def test_a_summary_takes_the_place_of_the_pruned_line_only_when_something_was_evicted():
    history = [user("old"), reply("older")] * 5 + [user("now")]
    out = build_llm_messages(SYSTEM, history, max_messages=3, summary="Alex likes sci-fi.")
    assert context(out) == ("\n\nEarlier messages were pruned. "
                            "A summary of them: Alex likes sci-fi.")
    assert build_llm_messages(SYSTEM, [user("now")], summary="Alex likes sci-fi.") == [
        {"role": "system", "content": SYSTEM}, user("now")]


# --------------------------------------------------------------- seed 002: window rules

def test_the_window_starts_at_a_user_message_even_when_that_keeps_fewer():
    history = [user("q1"), reply("a1"), user("q2"), calls(("x", "upcoming")), result("x"),
               reply("a2"), user("q3")]
    out = build_llm_messages(SYSTEM, history, max_messages=5)
    assert body(out)[0] == user("q2")
    assert len(body(out)) == 5
    out = build_llm_messages(SYSTEM, history, max_messages=4)
    assert contents(body(out)) == ["q3"]


def test_a_history_that_starts_mid_conversation_is_cut_to_its_first_user_message():
    history = [result("lost"), reply("tail of an old answer"), user("hello"), reply("hi")]
    history.append(user("what's downloading?"))
    out = build_llm_messages(SYSTEM, history)
    assert contents(body(out)) == ["hello", "hi", "what's downloading?"]
    assert context(out) == "\n\nEarlier messages were pruned."


def test_the_system_prompt_comes_first_and_only_once():
    out = build_llm_messages(SYSTEM, [user("hi")])
    assert out == [{"role": "system", "content": SYSTEM}, user("hi")]


def test_stored_private_keys_never_reach_the_model():
    history = [dict(user("hi"), _id=7, name="alex"), dict(reply("hey"), _id=8),
               dict(user("again"), _id=9)]
    out = build_llm_messages(SYSTEM, history)
    assert all(set(m) == {"role", "content"} for m in out)


def test_an_empty_history_gives_just_the_system_prompt():
    assert build_llm_messages(SYSTEM, []) == [{"role": "system", "content": SYSTEM}]


def test_the_newest_user_message_is_kept_even_when_it_alone_exceeds_both_caps():
    history = [user("short"), reply("ok"), user("x" * 40_000)]
    prompt = build_prompt(SYSTEM, history, max_messages=1, max_tokens=100)
    assert body(prompt.messages) == [user("x" * 40_000)]
    assert prompt.metrics.estimated_tokens > 100


# ----------------------------------------------------------------------------- sanitise

def test_a_tool_result_without_its_call_directly_before_is_dropped():
    history = [user("a"), reply("b"), result("ghost"), user("c")]
    prompt = build_prompt(SYSTEM, history)
    assert [m["role"] for m in body(prompt.messages)] == ["user", "assistant", "user"]
    assert prompt.metrics.dropped == 1


def test_calls_whose_results_were_lost_in_a_crash_are_closed_as_interrupted():
    history = [user("add dune"), calls(("c1", "search_media"), ("c2", "add_movie")),
               result("c1", "found"), user("hello?")]
    prompt = build_prompt(SYSTEM, history)
    tools = [m for m in prompt.messages if m["role"] == "tool"]
    assert [t["content"] for t in tools] == ["found", INTERRUPTED_RESULT]
    assert "unknown" in json.loads(INTERRUPTED_RESULT)["error"]
    assert prompt.metrics.closed == 1
    validate_messages(prompt.messages)


def test_ids_are_rewritten_short_and_unique_and_ollama_call_0_pairs_by_adjacency():
    long_id = "chatcmpl-tool-" + "f" * 32     # vLLM's 46 characters
    history = [user("a"), calls(("call_0", "search_media")), result("call_0", "first"),
               reply("one"), user("b"), calls(("call_0", "add_movie")),
               result("call_0", "second"), reply("two"), user("c"),
               calls((long_id, "upcoming")), result(long_id, "third"), user("d")]
    out = build_llm_messages(SYSTEM, history)
    ids = [c["id"] for m in out for c in m.get("tool_calls", ())]
    assert len(set(ids)) == 3 and all(len(i) <= 40 and i.isalnum() for i in ids)
    pairs = [(m["tool_call_id"], m["content"]) for m in out if m["role"] == "tool"]
    assert pairs == list(zip(ids, ["first", "second", "third"], strict=True))
    validate_messages(out)


def test_a_result_for_another_call_inside_a_tool_run_is_dropped():
    history = [user("a"), calls(("c1", "search_media")), result("zz", "stray"),
               result("c1", "real"), user("b")]
    prompt = build_prompt(SYSTEM, history)
    assert [m["content"] for m in prompt.messages if m["role"] == "tool"] == ["real"]
    assert prompt.metrics.dropped == 1


def test_messages_the_api_would_refuse_are_dropped_and_the_users_they_joined_pruned():
    history = [user("a"), {"role": "assistant", "content": None}, user("b"),
               {"role": "function", "content": "x"}, reply("ok"), user("c")]
    prompt = build_prompt(SYSTEM, history)
    assert contents(body(prompt.messages)) == ["b", "ok", "c"]
    assert (prompt.metrics.dropped, prompt.metrics.pruned) == (2, 1)


def test_empty_tool_calls_make_a_plain_reply():
    history = [user("a"), {"role": "assistant", "content": "hi", "tool_calls": []}, user("b")]
    out = build_llm_messages(SYSTEM, history)
    assert body(out)[1] == reply("hi")


def test_arguments_stored_as_objects_are_sent_as_json_text():
    message = calls(("c1", "search_media"))
    message["tool_calls"][0]["function"]["arguments"] = {"query": "dune"}
    out = build_llm_messages(SYSTEM, [user("a"), message, result("c1"), user("b")])
    assert json.loads(out[2]["tool_calls"][0]["function"]["arguments"]) == {"query": "dune"}


# ------------------------------------- the portable shape (docs/architecture.md, prompt's shape)

def roles(messages):
    return [m["role"] for m in body(messages)]


def test_a_turn_that_failed_after_a_tool_round_is_closed_by_a_synthetic_reply():
    history = [user("add dune"), calls(("c1", "search_media")), result("c1", "found"),
               user("hello? did it work?")]
    prompt = build_prompt(SYSTEM, history)
    assert roles(prompt.messages) == ["user", "assistant", "tool", "assistant", "user"]
    assert body(prompt.messages)[3] == reply(UNANSWERED_LINE)
    assert body(prompt.messages)[-1] == user("hello? did it work?")
    assert (prompt.metrics.bridged, prompt.metrics.kept, prompt.metrics.sent) == (1, 4, 5)


def test_a_crash_closed_call_gets_its_interrupted_result_then_the_synthetic_reply():
    history = [user("add dune"), calls(("c1", "add_movie")), user("well?")]
    out = build_llm_messages(SYSTEM, history)
    assert [m["content"] for m in body(out)[2:]] == [INTERRUPTED_RESULT, UNANSWERED_LINE,
                                                     "well?"]


def test_an_expiry_notice_after_a_reply_is_merged_into_that_reply():
    notice = "Your request to remove The Office expired, so nothing was removed."
    history = [user("remove the office"), calls(("r", "remove_media")), result("r", "{}"),
               reply("Remove The Office? Reply Y or N."), reply(notice), user("what's new?")]
    out = build_llm_messages(SYSTEM, history)
    assert body(out)[3] == reply("Remove The Office? Reply Y or N.\n\n" + notice)
    assert roles(out) == ["user", "assistant", "tool", "assistant", "user"]


def test_a_parallel_call_goes_out_as_consecutive_single_call_pairs_in_order():
    history = [user("add both"), calls(("a", "add_movie"), ("b", "add_series")),
               result("b", "series added"), result("a", "movie added"), reply("Both added."),
               user("thanks")]
    out = body(build_llm_messages(SYSTEM, history))
    assert roles([{"role": "system"}] + out) == [
        "user", "assistant", "tool", "assistant", "tool", "assistant", "user"]
    assert [(m["tool_calls"][0]["function"]["name"], m["content"]) for m in out[1:5:2]] == [
        ("add_movie", ""), ("add_series", "")]
    assert [(m["name"], m["content"]) for m in out[2:5:2]] == [
        ("add_movie", "movie added"), ("add_series", "series added")]


def test_the_pairs_of_a_parallel_call_are_evicted_together():
    history = [user("add both"), calls(("a", "add_movie"), ("b", "add_series")), result("a"),
               result("b"), reply("Both added."), user("thanks")]
    assert contents(body(build_llm_messages(SYSTEM, history, max_messages=6))) == ["thanks"]
    assert len(body(build_llm_messages(SYSTEM, history, max_messages=7))) == 7


def test_text_beside_calls_moves_into_the_reply_that_closes_the_turn():
    history = [user("find dune"), calls(("c", "search_media"), content="Let me look."),
               result("c", "[Dune 2021]"), reply("Found Dune (2021)."), user("add it")]
    out = body(build_llm_messages(SYSTEM, history))
    assert out[1]["content"] == "" and len(out[1]["tool_calls"]) == 1
    assert out[3] == reply("Let me look.\n\nFound Dune (2021).")


def test_text_beside_calls_of_a_turn_that_failed_comes_before_the_synthetic_reply():
    history = [user("find dune"), calls(("c", "search_media"), content="Let me look."),
               result("c"), user("hello?")]
    assert body(build_llm_messages(SYSTEM, history))[3] == reply(
        "Let me look.\n\n" + UNANSWERED_LINE)


def test_in_the_turn_in_progress_the_prompt_ends_with_the_last_result():
    history = [user("find dune"), calls(("c", "search_media"), content="Let me look."),
               result("c", "[Dune 2021]")]
    out = body(build_llm_messages(SYSTEM, history))
    assert roles([{"role": "system"}] + out) == ["user", "assistant", "tool"]
    assert out[-1]["content"] == "[Dune 2021]" and out[1]["content"] == ""


def test_every_result_carries_the_name_of_its_call():
    history = [user("a"), calls(("c1", "search_media")), {**result("c1"), "name": "wrong"},
               calls(("c2", None)), result("c2"), reply("done"), user("b")]
    out = body(build_llm_messages(SYSTEM, history))
    assert [(m["name"]) for m in out if m["role"] == "tool"] == ["search_media", "unknown"]


@pytest.mark.parametrize("stored, sent", [
    ('{"query": "dune"}', '{"query": "dune"}'),
    ({"query": "dune"}, '{"query": "dune"}'),
    (None, "{}"), ("", "{}"), ("   ", "{}"), ("null", "{}"),
    ('{"query": ', '{"invalid_arguments": "{\\"query\\": "}'),
    ("[1, 2]", '{"invalid_arguments": "[1, 2]"}'),
    ('{"n": NaN}', '{"invalid_arguments": "{\\"n\\": NaN}"}'),
    (["dune"], '{"invalid_arguments": "[\\"dune\\"]"}'),
])
def test_arguments_always_go_out_as_a_json_object_string(stored, sent):
    assert portable_arguments(stored) == sent
    message = calls(("c1", "search_media"))
    message["tool_calls"][0]["function"]["arguments"] = stored
    out = build_llm_messages(SYSTEM, [user("a"), message, result("c1"), reply("ok"), user("b")])
    assert out[2]["tool_calls"][0]["function"]["arguments"] == sent


def test_stored_system_rows_in_the_window_join_the_persons_part():
    history = [user("old"), {"role": "system", "content": "old note"}, reply("r"),
               user("q"), {"role": "developer", "content": "kept note"}, reply("a"),
               user("now")]
    out = build_llm_messages(SYSTEM, history, max_messages=3)
    assert context(out) == "\n\nEarlier messages were pruned.\n\nkept note"
    assert contents(body(out)) == ["q", "a", "now"]


def test_onboarding_and_yes_no_exchanges_go_out_as_they_were_stored():
    history = [user("hi"), reply("Hi! What should I call you?"), user("Sam"),
               reply("Nice to meet you, Sam."), user("remove the office"),
               calls(("r", "remove_media")), result("r", "{}"),
               reply("Remove The Office? Reply Y or N."), user("Y"), reply("Removed."),
               user("thanks")]
    out = build_llm_messages(SYSTEM, history)
    assert [m.get("content") for m in body(out)] == [
        "hi", "Hi! What should I call you?", "Sam", "Nice to meet you, Sam.",
        "remove the office", "", "{}", "Remove The Office? Reply Y or N.", "Y", "Removed.",
        "thanks"]


def test_content_parts_go_out_as_text():
    out = build_llm_messages(SYSTEM, [user([{"type": "text", "text": "hi "},
                                           {"type": "text", "text": "there"}])])
    assert body(out) == [user("hi there")]


# --------------------------------------------------------- seed 003: budget and metrics

def test_defaults_match_the_history_config_defaults():
    params = inspect.signature(build_llm_messages).parameters
    config = HistoryConfig()
    assert params["max_messages"].default == config.max_messages == 20
    assert params["max_tokens"].default == config.max_context_tokens == 4000


def test_estimate_tokens_counts_four_characters_a_token_over_content_and_tool_calls():
    assert estimate_tokens([]) == 0
    assert estimate_tokens([user("abcd" * 25)]) == 25
    assert estimate_tokens([user("abc")]) == 1
    message = calls(("c1", "search_media"))
    serialised = json.dumps(message["tool_calls"], separators=(",", ":"))
    assert estimate_tokens([message]) == -(-len(serialised) // 4)
    parts = [{"type": "text", "text": "hello"}]
    assert estimate_tokens([user(parts)]) == -(-len(json.dumps(parts, separators=(",", ":")))
                                               // 4)


def test_under_and_exactly_at_the_cap_nothing_is_evicted():
    history = [user("q"), reply("a")] * 9 + [user("q"), reply("a")]
    assert len(history) == 20
    prompt = build_prompt(SYSTEM, history + [user("now")], max_messages=21)
    assert (prompt.metrics.evicted, prompt.metrics.kept) == (0, 21)
    assert len(prompt.messages) == 22


def test_the_token_budget_counts_system_prompt_pruned_line_and_reserved_tokens():
    history = [user("x" * 400), reply("y" * 400)] * 5 + [user("now")]
    for reserved in (0, 300, 450):   # in blocks, 300 still leaves the half window 0 leaves
        prompt = build_prompt(SYSTEM, history, max_tokens=600, reserved_tokens=reserved)
        assert prompt.metrics.estimated_tokens <= 600
        assert prompt.metrics.estimated_tokens == estimate_tokens(prompt.messages) + reserved
    assert prompt.metrics.kept < build_prompt(SYSTEM, history, max_tokens=600).metrics.kept


def test_metrics_add_up_after_trimming():
    history = ([user("dup"), user("q"), calls(("c", "search_media")), result("ghost"),
                reply("a")] * 4 + [user("now")])
    m = build_prompt(SYSTEM, history, max_messages=5).metrics
    assert m.total == len(history)
    assert m.total == m.pruned + m.dropped + m.evicted + m.kept
    assert (m.pruned, m.dropped, m.closed) == (4, 4, 4)
    assert (m.kept, m.sent) == (4, 5)       # q, call, reply, now + one interrupted result
    assert m.evicted_tools == ("search_media",)


def test_first_kept_id_names_the_oldest_row_in_the_window():
    history = [dict(user("q1"), _id=1), dict(reply("a1"), _id=2), dict(user("q2"), _id=3)]
    assert build_prompt(SYSTEM, history, max_messages=1).metrics.first_kept_id == 3
    assert build_prompt(SYSTEM, history).metrics.first_kept_id == 1


def test_a_warning_is_logged_above_80_percent_of_the_budget(caplog):
    caplog.set_level(logging.INFO, logger="mediabot.conversation.prompt.build")
    build_prompt(SYSTEM, [user("x" * 3000)], max_tokens=1000)
    assert not [r for r in caplog.records if r.levelno == logging.WARNING]
    build_prompt(SYSTEM, [user("x" * 3400)], max_tokens=1000)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "80%" in warnings[0]
    assert "xxxx" not in caplog.text      # no message bodies in the log


# ------------------------------------------------------- seed 004: multi-turn and roles

def test_consecutive_same_role_messages_are_logged_not_fatal(caplog):
    caplog.set_level(logging.WARNING, logger="mediabot.conversation.prompt.build")
    history = [user("a"), reply("first"), reply("second"), user("b")]
    out = build_llm_messages(SYSTEM, history)
    assert contents(body(out)) == ["a", "first\n\nsecond", "b"]
    assert ("stored history has 1 pair(s) of consecutive assistant messages (first at "
            "positions 1 and 2); merged in the prompt") in caplog.text


def test_the_whole_window_reaches_the_model_not_just_the_last_message():
    turns = [("I'm Alex and I only watch things in 4K.", "Noted, Alex."),
             ("Anything new this week?", "Severance returns Friday."),
             ("Which quality do I like?", None)]
    history = []
    for question, answer in turns:
        history.append(user(question))
        if answer:
            history.append(reply(answer))
    out = build_llm_messages(SYSTEM, history)
    assert "4K" in out[1]["content"] and body(out)[-1] == user("Which quality do I like?")
    assert len(body(out)) == 5
