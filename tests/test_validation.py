"""The OpenAI message-sequence rules: each rule, its index, and the real API's wording."""

import pytest

from mediabot.history import validate_messages
from mediabot.validation import find_violation


def user(text="hi"):
    return {"role": "user", "content": text}


def reply(text="ok"):
    return {"role": "assistant", "content": text}


def calls(*ids, content=None):
    return {"role": "assistant", "content": content, "tool_calls": [
        {"id": i, "type": "function", "function": {"name": "search_media", "arguments": "{}"}}
        for i in ids]}


def result(call_id, text="[]"):
    return {"role": "tool", "tool_call_id": call_id, "content": text}


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
def test_sequences_the_api_accepts_pass(messages):
    assert find_violation(messages) is None
    validate_messages(messages)


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
