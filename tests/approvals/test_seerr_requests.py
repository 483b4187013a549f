"""Seerr's approvals by text, in process: the real Seerr client against the fake Seerr on
loopback (every call checked against Seerr's OpenAPI spec), a fresh database, and the texts
the admins and the member would read. A request waits in Seerr; each admin is asked once;
the first answer is carried out in Seerr as that admin's own Seerr user."""

import pytest

from mediabot.approvals.seerr_requests import still_waiting
from mediabot.store import db
from mediabot.store.db import TextKind
from mediabot.text.keywords import Verdict
from mediabot.trial.sim.arr_fixtures import DUNE_TWO_TMDB
from tests.fakes.seerr_model import RequestStatus
from tests.support.clock import START
from tests.support.household import ADMIN, ADMIN2, MEMBER
from tests.support.seerr_house import DUNE_TWO, seerr_house

NOW = START


@pytest.fixture
def house(database, seerr):
    house = seerr_house(seerr)
    yield house
    house.client.close()


def test_each_admin_is_asked_once_with_the_number_to_answer(house):
    request = house.sam_asks_for_dune_two()
    assert house.approvals.ask(request, NOW) == "asked"
    assert house.approvals.ask(request, NOW) == "already asked"
    question = f"Sam asked for {DUNE_TWO}. Reply APPROVE 1 or DENY 1"
    assert house.texts.to(ADMIN) == [question]
    assert house.texts.to(ADMIN2) == [question]
    assert house.texts.to(MEMBER) == []
    assert {kind for _, _, kind, _ in house.texts.sent} == {TextKind.SEERR_APPROVAL}
    assert still_waiting(1)


def test_approve_is_carried_out_in_seerr_as_the_admins_own_user_and_sam_is_told(house):
    request = house.sam_asks_for_dune_two()
    house.approvals.ask(request, NOW)
    reply = house.approvals.decide(house.people["alex"], Verdict.APPROVE, 1, NOW)
    assert reply == f"Approved request 1: {DUNE_TWO} is added. Sam has been told."
    assert house.seerr.request_status(request) == RequestStatus.APPROVED
    [approval] = house.seerr.calls_to("POST", f"/request/{request}/approve")
    assert approval.api_user == str(house.ids["alex"])
    assert house.texts.to(MEMBER) == [
        f"Alex approved {DUNE_TWO}: it's added, and I'll text you when it's ready."]
    assert not still_waiting(1)
    # what Radarr's webhook will look up, so Sam hears when it is ready
    assert db.Request.get(db.Request.external_id == DUNE_TWO_TMDB).user_id == \
        house.people["sam"].id


def test_deny_declines_it_in_seerr_and_a_second_answer_is_told_it_was_decided(house):
    request = house.sam_asks_for_dune_two()
    house.approvals.ask(request, NOW)
    assert house.approvals.decide(house.people["alex"], Verdict.DENY, 1, NOW) == \
        f"Denied request 1 ({DUNE_TWO}); Sam has been told."
    assert house.seerr.request_status(request) == RequestStatus.DECLINED
    assert house.texts.to(MEMBER) == [f"Alex didn't approve {DUNE_TWO}, so it wasn't added."]
    late = house.approvals.decide(house.people["jo"], Verdict.APPROVE, 1, NOW)
    assert "already" in late and "Alex" in late
    assert house.seerr.request_status(request) == RequestStatus.DECLINED


def test_an_admin_seerr_refuses_to_let_decide_is_told_and_the_request_keeps_waiting(house):
    request = house.sam_asks_for_dune_two()
    house.approvals.ask(request, NOW)
    reply = house.approvals.decide(house.people["jo"], Verdict.APPROVE, 1, NOW)
    assert "1" in reply and DUNE_TWO in reply
    assert house.seerr.request_status(request) == RequestStatus.PENDING
    assert still_waiting(1)
    assert house.texts.to(MEMBER) == []
    # Alex, who may, still can
    house.approvals.decide(house.people["alex"], Verdict.APPROVE, 1, NOW)
    assert house.seerr.request_status(request) == RequestStatus.APPROVED


def test_an_unlinked_admin_is_told_how_to_be_linked(house):
    request = house.sam_asks_for_dune_two()
    house.approvals.ask(request, NOW)
    unlinked = db.User.create(phone="+15551230009", display_name="Kim", role="admin")
    assert house.approvals.decide(unlinked, Verdict.APPROVE, 1, NOW) == (
        "Your number is not linked to a Seerr user, so request 1 can't be decided by text. "
        "The operator can link you (seerr_user in [[users]]).")
    assert house.seerr.request_status(request) == RequestStatus.PENDING


def test_a_request_decided_in_the_web_ui_is_closed_by_the_sweep(house):
    request = house.sam_asks_for_dune_two()
    house.approvals.ask(request, NOW)
    house.seerr.approve_in_web_ui(request, as_user=house.ids["alex"])
    assert house.approvals.sweep(NOW) == 1
    assert not still_waiting(1)
    late = house.approvals.decide(house.people["jo"], Verdict.DENY, 1, NOW)
    assert "already" in late
    assert house.seerr.request_status(request) == RequestStatus.APPROVED


def test_the_sweep_asks_about_a_request_whose_webhook_never_came(house):
    house.sam_asks_for_dune_two()
    assert house.approvals.sweep(NOW) == 1
    assert house.texts.to(ADMIN) == [f"Sam asked for {DUNE_TWO}. Reply APPROVE 1 or DENY 1"]
    assert house.approvals.sweep(NOW) == 0
    assert len(house.texts.to(ADMIN)) == 1


def test_a_request_cancelled_in_seerr_is_gone_and_nothing_is_decided(house):
    request = house.sam_asks_for_dune_two()
    house.approvals.ask(request, NOW)
    house.seerr.cancel_in_web_ui(request)
    reply = house.approvals.decide(house.people["alex"], Verdict.APPROVE, 1, NOW)
    assert "1" in reply and DUNE_TWO in reply
    assert not still_waiting(1)
    assert house.texts.to(MEMBER) == []


def test_someone_of_no_household_member_is_named_as_a_seerr_user(house):
    request = house.seerr.request_in_web_ui(house.ids["theo"], "movie", DUNE_TWO_TMDB)
    house.approvals.ask(request, NOW)
    assert house.texts.to(ADMIN) == [
        f"A Seerr user, theo, asked for {DUNE_TWO}. Reply APPROVE 1 or DENY 1"]
    assert house.approvals.decide(house.people["alex"], Verdict.APPROVE, 1, NOW) == \
        f"Approved request 1 ({DUNE_TWO}) in Seerr."
    assert house.texts.to(MEMBER) == []


def test_a_number_that_is_not_seerrs_is_left_to_the_households_own_approvals(house):
    assert house.approvals.decide(house.people["alex"], Verdict.APPROVE, 7, NOW) is None


def test_the_admins_prompt_lists_what_waits_in_seerr(house):
    assert house.approvals.waiting_note() is None
    house.approvals.ask(house.sam_asks_for_dune_two(), NOW)
    assert f"#1 Sam: {DUNE_TWO}" in house.approvals.waiting_note()
