"""Who a Seerr user is to the household, against the fake Seerr: a member by their link,
resolved once and kept (a Display Name changed later moves nobody), or someone from outside,
named as such."""

import pytest

from mediabot.approvals.seerr_members import member_for, seerr_id_of, seerr_name
from mediabot.seerr.api import SeerrClient, SeerrError
from mediabot.store import db
from mediabot.text.language import load
from tests.fakes.seerr_model import Permission
from tests.support.household import MEMBER

ENGLISH = load("en")


@pytest.fixture
def client(seerr):
    client = SeerrClient(seerr.url, seerr.api_key, timeout=5, retries=0)
    yield client
    client.close()


def test_a_link_is_resolved_once_and_kept(database, seerr, client):
    sam_id = seerr.add_user("sam", email="sam@home.example", permissions=Permission.REQUEST)
    sam = db.User.create(phone=MEMBER, display_name="Sam", seerr_user="sam@home.example")
    assert seerr_id_of(client, sam) == sam_id
    assert db.User.get_by_id(sam.id).seerr_id == sam_id
    lookups = len(seerr.calls_to("GET", "/user"))
    assert lookups >= 1
    assert seerr_id_of(client, db.User.get_by_id(sam.id)) == sam_id
    assert len(seerr.calls_to("GET", "/user")) == lookups     # no second lookup


def test_a_display_name_changed_later_moves_nobody(database, seerr, client):
    sam_id = seerr.add_user("sam", permissions=Permission.REQUEST)
    theo_id = seerr.add_user("theo", permissions=Permission.REQUEST, local=True)
    sam = db.User.create(phone=MEMBER, display_name="Sam", seerr_user="sam")
    assert member_for(client, client.user(sam_id)).id == sam.id
    seerr.set_display_name(theo_id, "sam")       # Theo now calls himself "sam" in Seerr
    assert member_for(client, client.user(theo_id)) is None
    assert member_for(client, client.user(sam_id)).id == sam.id


def test_someone_of_no_member_is_named_as_a_seerr_user(database, seerr, client):
    theo_id = seerr.add_user("theo", permissions=Permission.REQUEST)
    db.User.create(phone=MEMBER, display_name="Sam", seerr_user="sam")
    assert seerr_name(client, ENGLISH, client.user(theo_id)) == "a Seerr user, theo"


def test_a_member_is_named_by_their_own_name(database, seerr, client):
    sam_id = seerr.add_user("sam", permissions=Permission.REQUEST)
    db.User.create(phone=MEMBER, display_name="Sam", seerr_user="sam")
    assert seerr_name(client, ENGLISH, client.user(sam_id)) == "Sam"


def test_a_link_seerr_does_not_know_is_not_found(database, seerr, client):
    sam = db.User.create(phone=MEMBER, display_name="Sam", seerr_user="nobody")
    with pytest.raises(SeerrError) as info:
        seerr_id_of(client, sam)
    assert info.value.kind == "not_found"
    assert db.User.get_by_id(sam.id).seerr_id is None
