"""Seerr's approvals by text, in process: the real Seerr client against the fake Seerr on
loopback (every call checked against Seerr's OpenAPI spec), a fresh database, and the texts
the admins and the member would read. A request waits in Seerr; each admin is asked once;
the first answer is carried out in Seerr as that admin's own Seerr user."""

import pytest

from mediabot.approvals.seerr_requests import SeerrApprovals, still_waiting
from mediabot.seerr.api import SeerrClient
from mediabot.store import db
from mediabot.store.db import TextKind
from mediabot.text.keywords import Verdict
from mediabot.trial.sim.arr_fixtures import DUNE_TWO_TMDB
from tests.fakes.seerr_model import Permission, RequestStatus
from tests.support.clock import START
from tests.support.household import ADMIN, ADMIN2, MEMBER

NOW = START
DUNE_TWO = "Dune: Part Two (2024)"


class Texts:
    """The household's phones: every text queued for someone, in order (the ``notify`` the
    daemon hands in queues them in the outbox; here they are kept as they were asked for)."""

    def __init__(self):
        self.sent: list[tuple[str, str, TextKind, int | None]] = []
        self.keys: set[str] = set()

    def __call__(self, user, text, key=None, kind=TextKind.OTHER, subject=None):
        if key is not None and key in self.keys:   # the outbox queues a key once
            return
        self.keys.add(key)
        self.sent.append((user.phone, text, kind, subject))

    def to(self, phone):
        return [text for to, text, _, _ in self.sent if to == phone]


@pytest.fixture
def house(database, seerr):
    """Alex and Jo (admins: Alex may manage requests in Seerr, Jo may not) and Sam (a member
    who may request), each linked to their Seerr user; ``approvals`` on the fake Seerr."""
    ids = {"alex": seerr.add_user("alex", permissions=Permission.MANAGE_REQUESTS),
           "jo": seerr.add_user("jo", permissions=Permission.REQUEST),
           "sam": seerr.add_user("sam", permissions=Permission.REQUEST),
           "theo": seerr.add_user("theo", permissions=Permission.REQUEST)}
    people = {"alex": db.User.create(phone=ADMIN, display_name="Alex", role="admin",
                                     seerr_user="alex"),
              "jo": db.User.create(phone=ADMIN2, display_name="Jo", role="admin",
                                   seerr_user="jo"),
              "sam": db.User.create(phone=MEMBER, display_name="Sam", role="member",
                                    seerr_user="sam")}
    texts = Texts()
    client = SeerrClient(seerr.url, seerr.api_key, timeout=5, retries=0)

    class House:
        pass
    house = House()
    house.seerr, house.ids, house.people, house.texts = seerr, ids, people, texts
    house.approvals = SeerrApprovals(client, texts, "en")
    yield house
    client.close()


def sam_asks_for_dune_two(house):
    """Sam files Dune: Part Two in Seerr's web UI; it waits there for an admin."""
    return house.seerr.request_in_web_ui(house.ids["sam"], "movie", DUNE_TWO_TMDB)


def test_each_admin_is_asked_once_with_the_number_to_answer(house):
    request = sam_asks_for_dune_two(house)
    assert house.approvals.ask(request, NOW) == "asked"
    assert house.approvals.ask(request, NOW) == "already asked"
    question = f"Sam asked for {DUNE_TWO}. Reply APPROVE 1 or DENY 1"
    assert house.texts.to(ADMIN) == [question]
    assert house.texts.to(ADMIN2) == [question]
    assert house.texts.to(MEMBER) == []
    assert {kind for _, _, kind, _ in house.texts.sent} == {TextKind.SEERR_APPROVAL}
    assert still_waiting(1)


def test_approve_is_carried_out_in_seerr_as_the_admins_own_user_and_sam_is_told(house):
    request = sam_asks_for_dune_two(house)
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
    request = sam_asks_for_dune_two(house)
    house.approvals.ask(request, NOW)
    assert house.approvals.decide(house.people["alex"], Verdict.DENY, 1, NOW) == \
        f"Denied request 1 ({DUNE_TWO}); Sam has been told."
    assert house.seerr.request_status(request) == RequestStatus.DECLINED
    assert house.texts.to(MEMBER) == [f"Alex didn't approve {DUNE_TWO}, so it wasn't added."]
    late = house.approvals.decide(house.people["jo"], Verdict.APPROVE, 1, NOW)
    assert "already" in late and "Alex" in late
    assert house.seerr.request_status(request) == RequestStatus.DECLINED


def test_an_admin_seerr_refuses_to_let_decide_is_told_and_the_request_keeps_waiting(house):
    request = sam_asks_for_dune_two(house)
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
    request = sam_asks_for_dune_two(house)
    house.approvals.ask(request, NOW)
    unlinked = db.User.create(phone="+15551230009", display_name="Kim", role="admin")
    assert house.approvals.decide(unlinked, Verdict.APPROVE, 1, NOW) == (
        "Your number is not linked to a Seerr user, so request 1 can't be decided by text. "
        "The operator can link you (seerr_user in [[users]]).")
    assert house.seerr.request_status(request) == RequestStatus.PENDING


def test_a_request_decided_in_the_web_ui_is_closed_by_the_sweep(house):
    request = sam_asks_for_dune_two(house)
    house.approvals.ask(request, NOW)
    house.seerr.approve_in_web_ui(request, as_user=house.ids["alex"])
    assert house.approvals.sweep(NOW) == 1
    assert not still_waiting(1)
    late = house.approvals.decide(house.people["jo"], Verdict.DENY, 1, NOW)
    assert "already" in late
    assert house.seerr.request_status(request) == RequestStatus.APPROVED


def test_the_sweep_asks_about_a_request_whose_webhook_never_came(house):
    sam_asks_for_dune_two(house)
    assert house.approvals.sweep(NOW) == 1
    assert house.texts.to(ADMIN) == [f"Sam asked for {DUNE_TWO}. Reply APPROVE 1 or DENY 1"]
    assert house.approvals.sweep(NOW) == 0
    assert len(house.texts.to(ADMIN)) == 1


def test_a_request_cancelled_in_seerr_is_gone_and_nothing_is_decided(house):
    request = sam_asks_for_dune_two(house)
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
    house.approvals.ask(sam_asks_for_dune_two(house), NOW)
    assert f"#1 Sam: {DUNE_TWO}" in house.approvals.waiting_note()
