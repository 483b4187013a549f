"""The prompt budget is kept in the server's tokens, learnt from the usage it reports."""

import json

import pytest

from mediabot.conversation.prompt.build import estimate_tokens
from mediabot.model import calibration
from mediabot.store import db
from tests.support.household import ADMIN

BUDGET = 1500


def server_tokens(request: dict, scale: float) -> int:
    """What the fake server (``usage_scale``) counted for one request."""
    tools = request.get("tools")
    sent = request["messages"] + ([{"role": "system", "content": json.dumps(tools)}]
                                  if tools else [])
    return round(scale * estimate_tokens(sent))


def test_a_model_counting_more_tokens_gets_its_window_cut_at_the_servers_budget(engine_for,
                                                                               fake_llm):
    engine = engine_for(history={"max_messages": 60, "max_context_tokens": BUDGET,
                                 "max_prompt_tokens": BUDGET})
    alex = db.User.get(phone=ADMIN).id
    fake_llm.usage_scale = 1.3
    fake_llm.set_responder(lambda body: "Sure, here is a fairly long answer to that. " * 4)
    for i in range(30):
        engine.handle(alex, f"question {i}: " + "tell me about this show please " * 8)
    counted = [server_tokens(r, 1.3) for r in fake_llm.requests[5:]]
    assert max(counted) <= BUDGET * 1.1, counted
    assert max(counted) >= BUDGET * 0.8, "the window still fills up to about the budget"
    assert calibration.ratio_for("gpt-4o-mini") == pytest.approx(1.3, rel=0.1)


def test_a_server_reporting_no_usage_keeps_the_estimate(database, clock):
    assert calibration.observe("local", 1000, None, clock()) == 1.0
    assert calibration.ratio_for("local") == 1.0
    assert calibration.observe("local", 1000, 1300, clock()) == pytest.approx(1.3)
    assert calibration.ratio_for("other") == 1.0, "each model learns its own"


@pytest.mark.parametrize("reports, expected", [
    ([1300] * 8, 1.3),                 # a steady tokenizer is learnt as it is
    ([1300] * 8 + [5000], 1.3 * 0.7 + 3.0 * 0.3),   # one odd prompt moves it a little, clamped
    ([100] * 5, calibration.MIN_RATIO),             # nonsense cannot shrink the window to nothing
])
def test_the_ratio_is_a_clamped_running_mean(reports, expected):
    ratio = None
    for reported in reports:
        ratio = calibration.updated_ratio(ratio, 1000, reported)
    assert ratio == pytest.approx(expected)


def test_the_budget_in_estimated_tokens(database):
    assert calibration.estimate_budget(4000, 1.0) == 4000
    assert calibration.estimate_budget(4000, 1.25) == 3200


def test_the_budget_holds_still_while_the_ratio_drifts_within_a_step():
    """The running mean moves after every turn; the window's cut (and so the cached prefix)
    must not move with it, and the budget never exceeds the server's."""
    budgets = {calibration.estimate_budget(4000, ratio) for ratio in (1.26, 1.28, 1.3, 1.37)}
    assert budgets == {round(4000 / 1.375)}
    assert all(calibration.estimate_budget(4000, r) * r <= 4000 for r in (1.01, 1.26, 2.9))
