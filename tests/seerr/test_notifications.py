"""What Seerr's notifications become, in process: the fake Seerr's own payloads read as the
webhook reads them, the real client asking the fake who made the request, and the texts the
household reads: the requester told once, the admins on a failure, nobody outside it."""

import json

import pytest

from mediabot.seerr.api.payload import read_notification
from mediabot.seerr.notifications import SeerrNotices
from mediabot.store import db
from mediabot.store.db import TextKind
from mediabot.trial.sim.arr_fixtures import DUNE_TWO_TMDB
from tests.fakes.seerr_model import MediaStatus, Notification, Permission
from tests.support.clock import START
from tests.support.household import ADMIN, ADMIN2, MEMBER
from tests.support.seerr_house import DUNE_TWO, seerr_house


@pytest.fixture
def house(database, seerr):
    house = seerr_house(seerr)
    house.notices = SeerrNotices(house.client, house.approvals, clock=lambda: START)
    yield house
    house.client.close()


def seerr_says(house, kind, request):
    """Seerr's webhook posts ``kind`` about ``request`` as it stands in Seerr now."""
    body = house.seerr.webhook_body(kind, request)
    return house.notices.handle(read_notification(json.dumps(body).encode()))


def test_an_approval_in_seerr_is_texted_to_sam_once_and_remembered(house):
    request = house.sam_asks_for_dune_two()
    house.seerr.approve_in_web_ui(request, as_user=house.ids["alex"])
    assert seerr_says(house, Notification.MEDIA_APPROVED, request) == "told"
    seerr_says(house, Notification.MEDIA_APPROVED, request)   # Seerr re-notifies
    assert house.texts.to(MEMBER) == [
        f"Alex approved {DUNE_TWO}: it's added, and I'll text you when it's ready."]
    assert db.Request.get(db.Request.external_id == DUNE_TWO_TMDB).user_id == \
        house.people["sam"].id


def test_a_decline_by_someone_of_no_member_names_them_as_a_seerr_user(house):
    request = house.sam_asks_for_dune_two()
    house.seerr.user(house.ids["theo"]).permissions |= Permission.MANAGE_REQUESTS
    house.seerr.decline_in_web_ui(request, as_user=house.ids["theo"])
    assert seerr_says(house, Notification.MEDIA_DECLINED, request) == "told"
    assert house.texts.to(MEMBER) == [
        f"A Seerr user, theo, didn't approve {DUNE_TWO}, so it wasn't added."]


def test_an_auto_approval_is_remembered_without_a_text(house):
    request = house.sam_asks_for_dune_two()
    house.seerr.approve_in_web_ui(request, as_user=house.ids["alex"])
    assert seerr_says(house, Notification.MEDIA_AUTO_APPROVED, request) == "remembered"
    assert house.texts.sent == []
    assert db.Request.select().count() == 1


def test_available_tells_sam_it_is_ready_once(house):
    request = house.sam_asks_for_dune_two()
    house.seerr.approve_in_web_ui(request, as_user=house.ids["alex"])
    house.seerr.set_media_status("movie", DUNE_TWO_TMDB, MediaStatus.AVAILABLE)
    assert seerr_says(house, Notification.MEDIA_AVAILABLE, request) == "told"
    assert seerr_says(house, Notification.MEDIA_AVAILABLE, request) == "already told"
    assert [(text, kind) for to, text, kind, _ in house.texts.sent if to == MEMBER] == [
        (f"{DUNE_TWO} is ready to watch.", TextKind.READY)]


def test_a_failure_reaches_sam_and_every_admin(house):
    request = house.sam_asks_for_dune_two()
    house.seerr.approve_in_web_ui(request, as_user=house.ids["alex"])
    house.seerr.fail_request(request)
    seerr_says(house, Notification.MEDIA_FAILED, request)
    assert house.texts.to(MEMBER) == [
        f"{DUNE_TWO} could not be requested: Seerr couldn't pass it on to Radarr or Sonarr. "
        "The admins have been told."]
    assert len(house.texts.to(ADMIN)) == 1 and len(house.texts.to(ADMIN2)) == 1
    assert DUNE_TWO in house.texts.to(ADMIN)[0]


def test_a_request_of_someone_outside_the_household_texts_no_member(house):
    request = house.seerr.request_in_web_ui(house.ids["theo"], "movie", DUNE_TWO_TMDB)
    house.seerr.approve_in_web_ui(request, as_user=house.ids["alex"])
    assert seerr_says(house, Notification.MEDIA_APPROVED, request) == \
        "requester not in the household"
    assert house.texts.sent == []


def test_the_settings_pages_test_is_answered_and_texts_nobody(house):
    assert seerr_says(house, Notification.TEST_NOTIFICATION, None) == "test ok"
    assert house.texts.sent == []
