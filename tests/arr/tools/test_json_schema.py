"""The argument checker's own keywords beyond types: a pattern, and a parameter's own
sentence for whatever does not fit it."""

import pytest

from mediabot.arr.tools.base import ToolError
from mediabot.arr.tools.json_schema import ERROR, for_model, validate

CODE = {"type": "string", "pattern": "^[a-z]{2}[0-9]+$", "description": ""}


def test_a_pattern_is_checked_and_named_when_it_does_not_match():
    assert validate(CODE, "ab12", "code") == "ab12"
    with pytest.raises(ToolError) as caught:
        validate(CODE, "12ab", "code")
    assert str(caught.value) == "code must match ^[a-z]{2}[0-9]+$, not '12ab'"


@pytest.mark.parametrize("value", ["12ab", 12, None, True])
def test_a_parameter_with_its_own_sentence_answers_with_it_whatever_the_misfit(value):
    schema = {"type": "object", "properties": {
        "code": {**CODE, ERROR: "code must be two letters and a number, like ab12"}}}
    assert validate(schema, {"code": "ab12"}) == {"code": "ab12"}
    with pytest.raises(ToolError) as caught:
        validate(schema, {"code": value})
    assert str(caught.value) == "code must be two letters and a number, like ab12"


def test_neither_is_shown_to_the_model():
    assert for_model({**CODE, ERROR: "like ab12"}) == {"type": "string", "description": ""}
