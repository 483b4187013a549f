"""The approvals' front (``approvals/front.py``): one number space for the household's own
requests and Seerr's, so an admin's APPROVE n always names one request."""

import datetime as dt

import pytest

from mediabot.approvals.front import Approvals, next_number
from mediabot.approvals.house_rules import HouseRules
from mediabot.approvals.seerr_requests import SeerrApprovals
from mediabot.arr.tools.base import AddRequest, Service
from mediabot.config import RequestsConfig
from mediabot.seerr.api import SeerrClient
from mediabot.store import db
from mediabot.store.people import get_person
from mediabot.text.keywords import Verdict

NOW = dt.datetime(2026, 11, 23, 20, 0)


@pytest.fixture
def household(database):
    admin = db.User.create(phone="+15550000001", display_name="Alex", role="admin")
    member = db.User.create(phone="+15550000002", display_name="Sam", role="member")
    return get_person(admin.id, "en"), get_person(member.id, "en")


def asked(told: list, number: int) -> list[str]:
    return [text for _, text in told if f"APPROVE {number} " in text]


def test_household_and_seerr_requests_never_share_a_number(household, seerr):
    admin, member = household
    told: list = []

    def notify(person, text, key=None, kind=db.TextKind.OTHER, subject=None):
        told.append((person.phone, text))

    rules = HouseRules(RequestsConfig(approval="members"), notify, numbers=next_number)
    approvals = Approvals(rules, SeerrApprovals(
        SeerrClient(seerr.url, seerr.api_key, timeout=3, retries=0), notify,
        numbers=next_number))
    theo = seerr.add_user("theo", permissions=32)   # may request; Seerr asks an admin

    def member_asks(title: str, tmdb_id: int) -> int:
        held = rules.gate(member, AddRequest(Service.RADARR, tmdb_id, title, "add_media",
                                             {"tmdb_id": tmdb_id}), NOW)
        return held["request"]

    first = member_asks("Dune (2021)", 438631)
    assert approvals.seerr.ask(seerr.request_in_web_ui(theo, "movie", 693134), NOW) == "asked"
    third = member_asks("Alien (1979)", 348)
    assert (first, third) == (1, 3), "the household's next request is above Seerr's 2"
    assert [len(asked(told, n)) for n in (1, 2, 3)] == [1, 1, 1]
    reply = approvals.decide(admin, Verdict.DENY, 3, NOW, lambda row: None)
    assert reply == "Denied request 3 (Alien (1979)); Sam has been told."
    assert approvals.seerr.decide(admin, Verdict.DENY, 3, NOW) is None, "3 is not Seerr's"
