"""The message rules: OpenAI's (each rule, its index, the real API's wording), and the portable
rules chat templates need on top (docs/architecture.md, "The prompt's shape")."""

import pytest

from mediabot.conversation.prompt.build import validate_messages
from mediabot.conversation.prompt.message_rules import find_violation


def user(text="hi"):
    return {"role": "user", "content": text}


def reply(text="ok"):
    return {"role": "assistant", "content": text}


def calls(*ids, content=None, arguments="{}"):
    return {"role": "assistant", "content": content, "tool_calls": [
        {"id": i, "type": "function",
         "function": {"name": "search_media", "arguments": arguments}} for i in ids]}


def result(call_id, text="[]", name=None):
    message = {"role": "tool", "tool_call_id": call_id, "content": text}
    return message if name is None else dict(message, name=name)


def pair(call_id, text="[]"):
    """One portable call/result pair."""
    return [calls(call_id, content=""), result(call_id, text, name="search_media")]


SYSTEM = {"role": "system", "content": "s"}


VALID = [
    pytest.param([user()], id="one user message"),
    pytest.param([{"role": "system", "content": "s"}, user(), reply()], id="plain exchange"),
    pytest.param([user(), user(), reply()], id="consecutive users are legal"),
    pytest.param([user(), calls("a", "b"), result("b"), result("a"), reply()],
                 id="results in any order"),
    pytest.param([user(), calls("call_0"), result("call_0"), user(), calls("call_0"),
                  result("call_0")], id="call_0 reused across turns pairs by adjacency"),
    pytest.param([{"role": "developer", "content": "d"}, user()], id="developer role"),
    pytest.param([user(), calls("a", content="looking"), result("a")],
                 id="tool_calls with text content"),
    pytest.param([user([{"type": "text", "text": "hi"}])], id="content parts"),
]


@pytest.mark.parametrize("messages", VALID)
def test_sequences_the_api_accepts_pass_openais_rules(messages):
    assert find_violation(messages) is None


INVALID = [
    pytest.param([], None, "messages-empty", "empty_array", id="empty"),
    pytest.param([user(), result("a")], 1, "tool-without-call", None, id="tool after user"),
    pytest.param([result("a"), user()], 0, "tool-without-call", None, id="tool first"),
    pytest.param([user(), calls("a"), result("a"), reply(), result("a")], 4,
                 "tool-without-call", None, id="tool after a plain reply"),
    pytest.param([user(), calls("a", "b"), result("a"), user()], 1,
                 "tool-calls-unanswered", None, id="one result missing"),
    pytest.param([user(), calls("a")], 1, "tool-calls-unanswered", None,
                 id="results missing at the end"),
    pytest.param([user(), calls("a"), result("zzz")], 2, "unknown-tool-call-id", None,
                 id="result for another call"),
    pytest.param([user(), calls("x" * 46), result("x" * 46)], 1, "id-too-long",
                 "string_above_max_length", id="vLLM 46-char id"),
    pytest.param([user(), calls("a"), result("y" * 41)], 2, "id-too-long",
                 "string_above_max_length", id="long tool_call_id"),
    pytest.param([{"role": "user", "content": None}], 0, "content-null", None,
                 id="null user content"),
    pytest.param([user(), {"role": "assistant", "content": None}], 1, "content-null", None,
                 id="null assistant content without calls"),
    pytest.param([user(), calls("a"), {"role": "tool", "tool_call_id": "a", "content": None}],
                 2, "content-null", None, id="null tool content"),
    pytest.param([user(), {"role": "assistant", "content": "x", "tool_calls": []}], 1,
                 "tool-calls-empty", "empty_array", id="empty tool_calls"),
    pytest.param([{"role": "bot", "content": "x"}], 0, "unknown-role", "invalid_value",
                 id="unknown role"),
    pytest.param([{"role": "function", "content": "x", "name": "f"}], 0, "unknown-role",
                 "invalid_value", id="legacy function role"),
    pytest.param([user(), calls("a"), {"role": "tool", "content": "x"}], 2,
                 "tool-call-id-missing", "missing_required_parameter", id="no tool_call_id"),
    pytest.param(["hi"], 0, "message-not-an-object", "invalid_type", id="not an object"),
]


@pytest.mark.parametrize("messages, index, rule, code", INVALID)
def test_each_rule_is_reported_with_index_and_code(messages, index, rule, code):
    violation = find_violation(messages)
    assert (violation.index, violation.rule, violation.code) == (index, rule, code)
    with pytest.raises(ValueError) as caught:
        validate_messages(messages)
    assert rule in str(caught.value)
    assert ("messages " if index is None else f"message {index} ") in str(caught.value)


def test_tool_without_call_uses_the_real_wording_and_param():
    violation = find_violation([user(), reply(), result("call_1")])
    assert violation.param == "messages.[2].role"
    assert violation.message == ("Invalid parameter: messages with role 'tool' must be a "
                                 "response to a preceeding message with 'tool_calls'.")


def test_unanswered_calls_name_every_missing_id():
    violation = find_violation([user(), calls("call_x", "call_y", "call_z"),
                                result("call_y"), user("again")])
    assert violation.param == "messages.[1].role"
    assert violation.message == (
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        "call_x, call_z")


def test_shape_errors_are_reported_before_sequence_errors():
    messages = [user(), result("a"), calls("x" * 50), result("x" * 50)]
    assert find_violation(messages).rule == "id-too-long"


def test_a_result_must_answer_the_previous_call_message_not_an_older_one():
    messages = [user(), calls("a"), result("a"), user(), calls("b"), result("a")]
    violation = find_violation(messages)
    assert (violation.index, violation.rule) == (5, "unknown-tool-call-id")


# ------------------------------------------------------------------- the portable rules

PORTABLE = [
    pytest.param([user()], id="one user message"),
    pytest.param([SYSTEM, user(), reply()], id="plain exchange"),
    pytest.param([{"role": "developer", "content": "d"}, user()], id="developer as system"),
    pytest.param([SYSTEM, user(), *pair("a"), *pair("b"), reply(), user()],
                 id="consecutive pairs then a reply"),
    pytest.param([SYSTEM, user(), *pair("a")], id="ends after a result (mid tool loop)"),
    pytest.param([SYSTEM, user(), *pair("call_0"), reply(), user(), *pair("call_0"), reply()],
                 id="call_0 reused across turns"),
    pytest.param([SYSTEM, user(), calls("a", content="", arguments='{"query": "dune"}'),
                  result("a", name="search_media"), reply("")], id="empty reply text"),
]


@pytest.mark.parametrize("messages", PORTABLE)
def test_portable_sequences_pass_both_rule_sets(messages):
    assert find_violation(messages) is None
    assert find_violation(messages, portable=True) is None
    validate_messages(messages)


NOT_PORTABLE = [
    pytest.param([SYSTEM, SYSTEM, user()], 1, "second-system", id="second system message"),
    pytest.param([SYSTEM, user(), reply(), SYSTEM, user()], 3, "second-system",
                 id="system note mid conversation"),
    pytest.param([user(), SYSTEM], 1, "system-not-first", id="system after user"),
    pytest.param([SYSTEM, reply(), user()], 1, "first-not-user", id="assistant first"),
    pytest.param([SYSTEM, *pair("a")], 1, "first-not-user", id="call first"),
    pytest.param([SYSTEM, user(), user()], 2, "not-alternating", id="user after user"),
    pytest.param([SYSTEM, user(), reply(), reply()], 3, "not-alternating",
                 id="reply after reply (expiry notice)"),
    pytest.param([SYSTEM, user(), reply(), *pair("a")], 3, "not-alternating",
                 id="call after a reply"),
    pytest.param([SYSTEM, user(), *pair("a"), user()], 4, "not-alternating",
                 id="user after a result (failed after a tool round)"),
    pytest.param([SYSTEM, user(), calls("a", "b", content=""),
                  result("a", name="search_media"), result("b", name="search_media")], 2,
                 "parallel-calls", id="two calls in one message"),
    pytest.param([SYSTEM, user(), calls("a", content="Let me look"),
                  result("a", name="search_media")], 2, "content-beside-calls",
                 id="text beside calls"),
    pytest.param([SYSTEM, user(), calls("a"), result("a", name="search_media")], 2,
                 "content-beside-calls", id="null content beside calls"),
    pytest.param([SYSTEM, user(), calls("a", content=""), result("a")], 3, "result-name",
                 id="result without name"),
    pytest.param([SYSTEM, user(), calls("a", content=""), result("a", name="add_movie")], 3,
                 "result-name", id="result named after another tool"),
    pytest.param([SYSTEM, user(), calls("a", content="", arguments="null"),
                  result("a", name="search_media")], 2, "arguments-not-object",
                 id="null arguments"),
    pytest.param([SYSTEM, user(), calls("a", content="", arguments=""),
                  result("a", name="search_media")], 2, "arguments-not-object",
                 id="empty arguments"),
    pytest.param([SYSTEM, user(), calls("a", content="", arguments='{"q": '),
                  result("a", name="search_media")], 2, "arguments-not-object",
                 id="invalid JSON arguments"),
    pytest.param([SYSTEM, user(), calls("a", content="", arguments='{"n": NaN}'),
                  result("a", name="search_media")], 2, "arguments-not-object",
                 id="NaN is not JSON"),
    pytest.param([SYSTEM, user(), calls("a", content="", arguments="[1]"),
                  result("a", name="search_media")], 2, "arguments-not-object",
                 id="arguments a list"),
    pytest.param([SYSTEM, user([{"type": "text", "text": "hi"}])], 1, "content-not-text",
                 id="content parts"),
]


@pytest.mark.parametrize("messages, index, rule", NOT_PORTABLE)
def test_each_portable_rule_is_reported_but_openai_alone_accepts(messages, index, rule):
    assert find_violation(messages) is None          # the fake OpenAI server takes these
    violation = find_violation(messages, portable=True)
    assert (violation.index, violation.rule, violation.code) == (index, rule, "portable_shape")
    with pytest.raises(ValueError) as caught:
        validate_messages(messages)
    assert f"message {index} breaks rule {rule}" in str(caught.value)


def test_openai_rules_are_reported_before_portable_ones():
    messages = [SYSTEM, SYSTEM, user(), result("a")]
    assert find_violation(messages, portable=True).rule == "tool-without-call"


def test_a_portable_violation_says_what_to_do_instead():
    violation = find_violation([SYSTEM, user(), *pair("a"), user()], portable=True)
    assert violation.message == ("Roles must alternate: a result message cannot be followed "
                                 "by a user message.")
    violation = find_violation([SYSTEM, user(), calls("a", "b", content=""),
                                result("a", name="search_media"),
                                result("b", name="search_media")], portable=True)
    assert "consecutive call/result pairs" in violation.message
