"""The fake Seerr answers as Seerr's server does where mediabot depends on it, over real
HTTP, and its traffic is held to Seerr's OpenAPI spec (tests/fakes/seerr-api.yml)."""

import base64
import json
import pathlib
import threading

import pytest
import requests
from werkzeug.wrappers import Request, Response

from mediabot.trial.sim.loopback import LoopbackServer
from tests.fakes.seerr import FakeSeerr
from tests.fakes.seerr_catalog import (
    DUNE_TMDB,
    DUNE_TWO_TMDB,
    OFFICE_TMDB,
    SEVERANCE_TMDB,
    SEVERANCE_TVDB,
)
from tests.fakes.seerr_model import MediaStatus, Notification, Permission, RequestStatus
from tests.fakes.seerr_spec import SPEC_PATH, SpecViolation, check_response
from tests.fakes.seerr_webhook import DEFAULT_TEMPLATE, render, truncate

# Seerr's default webhook payload as server/lib/settings/index.ts stores it (base64 of a JSON
# string holding the template's text).
SEERR_DEFAULT_PAYLOAD = (
    "IntcbiAgXCJub3RpZmljYXRpb25fdHlwZVwiOiBcInt7bm90aWZpY2F0aW9uX3R5cGV9fVwiLFxuICBcImV2ZW50"
    "XCI6IFwie3tldmVudH19XCIsXG4gIFwic3ViamVjdFwiOiBcInt7c3ViamVjdH19XCIsXG4gIFwibWVzc2FnZVwi"
    "OiBcInt7bWVzc2FnZX19XCIsXG4gIFwiaW1hZ2VcIjogXCJ7e2ltYWdlfX1cIixcbiAgXCJ7e21lZGlhfX1cIjog"
    "e1xuICAgIFwibWVkaWFfdHlwZVwiOiBcInt7bWVkaWFfdHlwZX19XCIsXG4gICAgXCJ0bWRiSWRcIjogXCJ7e21l"
    "ZGlhX3RtZGJpZH19XCIsXG4gICAgXCJ0dmRiSWRcIjogXCJ7e21lZGlhX3R2ZGJpZH19XCIsXG4gICAgXCJzdGF0"
    "dXNcIjogXCJ7e21lZGlhX3N0YXR1c319XCIsXG4gICAgXCJzdGF0dXM0a1wiOiBcInt7bWVkaWFfc3RhdHVzNGt9"
    "fVwiXG4gIH0sXG4gIFwie3tyZXF1ZXN0fX1cIjoge1xuICAgIFwicmVxdWVzdF9pZFwiOiBcInt7cmVxdWVzdF9p"
    "ZH19XCIsXG4gICAgXCJyZXF1ZXN0ZWRCeV9lbWFpbFwiOiBcInt7cmVxdWVzdGVkQnlfZW1haWx9fVwiLFxuICAg"
    "IFwicmVxdWVzdGVkQnlfdXNlcm5hbWVcIjogXCJ7e3JlcXVlc3RlZEJ5X3VzZXJuYW1lfX1cIixcbiAgICBcInJl"
    "cXVlc3RlZEJ5X2F2YXRhclwiOiBcInt7cmVxdWVzdGVkQnlfYXZhdGFyfX1cIixcbiAgICBcInJlcXVlc3RlZEJ5"
    "X3NldHRpbmdzX2Rpc2NvcmRJZFwiOiBcInt7cmVxdWVzdGVkQnlfc2V0dGluZ3NfZGlzY29yZElkfX1cIixcbiAg"
    "ICBcInJlcXVlc3RlZEJ5X3NldHRpbmdzX3RlbGVncmFtQ2hhdElkXCI6IFwie3tyZXF1ZXN0ZWRCeV9zZXR0aW5n"
    "c190ZWxlZ3JhbUNoYXRJZH19XCJcbiAgfSxcbiAgXCJ7e2lzc3VlfX1cIjoge1xuICAgIFwiaXNzdWVfaWRcIjog"
    "XCJ7e2lzc3VlX2lkfX1cIixcbiAgICBcImlzc3VlX3R5cGVcIjogXCJ7e2lzc3VlX3R5cGV9fVwiLFxuICAgIFwi"
    "aXNzdWVfc3RhdHVzXCI6IFwie3tpc3N1ZV9zdGF0dXN9fVwiLFxuICAgIFwicmVwb3J0ZWRCeV9lbWFpbFwiOiBc"
    "Int7cmVwb3J0ZWRCeV9lbWFpbH19XCIsXG4gICAgXCJyZXBvcnRlZEJ5X3VzZXJuYW1lXCI6IFwie3tyZXBvcnRl"
    "ZEJ5X3VzZXJuYW1lfX1cIixcbiAgICBcInJlcG9ydGVkQnlfYXZhdGFyXCI6IFwie3tyZXBvcnRlZEJ5X2F2YXRh"
    "cn19XCIsXG4gICAgXCJyZXBvcnRlZEJ5X3NldHRpbmdzX2Rpc2NvcmRJZFwiOiBcInt7cmVwb3J0ZWRCeV9zZXR0"
    "aW5nc19kaXNjb3JkSWR9fVwiLFxuICAgIFwicmVwb3J0ZWRCeV9zZXR0aW5nc190ZWxlZ3JhbUNoYXRJZFwiOiBc"
    "Int7cmVwb3J0ZWRCeV9zZXR0aW5nc190ZWxlZ3JhbUNoYXRJZH19XCJcbiAgfSxcbiAgXCJ7e2NvbW1lbnR9fVwi"
    "OiB7XG4gICAgXCJjb21tZW50X21lc3NhZ2VcIjogXCJ7e2NvbW1lbnRfbWVzc2FnZX19XCIsXG4gICAgXCJjb21t"
    "ZW50ZWRCeV9lbWFpbFwiOiBcInt7Y29tbWVudGVkQnlfZW1haWx9fVwiLFxuICAgIFwiY29tbWVudGVkQnlfdXNl"
    "cm5hbWVcIjogXCJ7e2NvbW1lbnRlZEJ5X3VzZXJuYW1lfX1cIixcbiAgICBcImNvbW1lbnRlZEJ5X2F2YXRhclwi"
    "OiBcInt7Y29tbWVudGVkQnlfYXZhdGFyfX1cIixcbiAgICBcImNvbW1lbnRlZEJ5X3NldHRpbmdzX2Rpc2NvcmRJ"
    "ZFwiOiBcInt7Y29tbWVudGVkQnlfc2V0dGluZ3NfZGlzY29yZElkfX1cIixcbiAgICBcImNvbW1lbnRlZEJ5X3Nl"
    "dHRpbmdzX3RlbGVncmFtQ2hhdElkXCI6IFwie3tjb21tZW50ZWRCeV9zZXR0aW5nc190ZWxlZ3JhbUNoYXRJZH19"
    "XCJcbiAgfSxcbiAgXCJ7e2V4dHJhfX1cIjogW11cbn0i"
)

MEMBER = Permission.REQUEST
MANAGER = Permission.REQUEST | Permission.MANAGE_REQUESTS


def api(seerr, method, path, *, user=None, key=None, **kwargs):
    headers = {"X-Api-Key": seerr.api_key if key is None else key}
    if key == "":
        headers = {}
    if user is not None:
        headers["X-API-User"] = str(user)
    return requests.request(method, f"{seerr.url}/api/v1{path}", headers=headers, timeout=5,
                            **kwargs)


def file(seerr, user, tmdb_id=DUNE_TWO_TMDB, media_type="movie", **body):
    return api(seerr, "POST", "/request", user=user,
               json={"mediaType": media_type, "mediaId": tmdb_id, **body})


class Receiver:
    """A webhook endpoint on loopback that keeps what it was posted."""

    def __init__(self):
        self.posts: list[tuple[dict, dict]] = []
        self.server = LoopbackServer(self._app).start()
        self.url = self.server.url + "/hooks/seerr"
        self._lock = threading.Lock()

    def _app(self, environ, start_response):
        request = Request(environ)
        with self._lock:
            self.posts.append((dict(request.headers), json.loads(request.get_data())))
        return Response("", status=204)(environ, start_response)


@pytest.fixture
def receiver():
    hook = Receiver()
    yield hook
    hook.server.stop()


# -- authentication and X-API-User -----------------------------------------------------------

def test_no_key_is_401_a_wrong_key_403_and_status_needs_none(seerr):
    missing = api(seerr, "GET", "/auth/me", key="")
    assert missing.status_code == 401
    assert missing.json()["message"] == "cookie 'connect.sid' required"
    wrong = api(seerr, "GET", "/auth/me", key="not-the-key")
    assert wrong.status_code == 403
    assert wrong.json() == {"status": 403,
                            "error": "You do not have permission to access this endpoint"}
    assert api(seerr, "GET", "/status", key="").json()["version"] == "3.1.0"


def test_the_key_acts_as_the_owner_or_as_the_x_api_user(seerr):
    sam = seerr.add_user("sam", permissions=MEMBER)
    assert api(seerr, "GET", "/auth/me").json()["id"] == 1
    me = api(seerr, "GET", "/auth/me", user=sam).json()
    assert (me["id"], me["displayName"], me["permissions"]) == (sam, "sam", MEMBER)
    assert api(seerr, "GET", "/auth/me", user=99).status_code == 403


# -- filing requests ----------------------------------------------------------------------------

def test_a_member_files_as_themself_and_the_request_waits(seerr):
    sam = seerr.add_user("sam", permissions=MEMBER)
    answer = file(seerr, sam)
    assert answer.status_code == 201
    body = answer.json()
    assert (body["status"], body["requestedBy"]["id"], body["modifiedBy"]) == (
        RequestStatus.PENDING, sam, None)
    assert body["media"]["status"] == MediaStatus.PENDING
    assert seerr.notifications == [(Notification.MEDIA_PENDING, body["id"])]


def test_the_admin_key_with_a_user_id_files_for_the_member_but_approves_it(seerr):
    """The auto-approval trap: approval follows the caller, not the member filed for."""
    sam = seerr.add_user("sam", permissions=MEMBER)
    body = file(seerr, None, userId=sam).json()
    assert body["requestedBy"]["id"] == sam
    assert (body["status"], body["modifiedBy"]["id"]) == (RequestStatus.APPROVED, 1)
    assert seerr.notifications == [(Notification.MEDIA_AUTO_APPROVED, body["id"])]
    assert api(seerr, "GET", f"/movie/{DUNE_TWO_TMDB}").json()["mediaInfo"]["status"] == \
        MediaStatus.PROCESSING
    other = seerr.add_user("kim", permissions=MEMBER)
    refused = file(seerr, sam, tmdb_id=DUNE_TMDB, userId=other)
    assert refused.status_code == 403
    assert refused.json()["message"] == "You do not have permission to modify the request user."


def test_auto_approve_is_the_members_own_permission(seerr):
    trusted = seerr.add_user("ana", permissions=MEMBER | Permission.AUTO_APPROVE_MOVIE)
    assert file(seerr, trusted).json()["status"] == RequestStatus.APPROVED
    series = file(seerr, trusted, tmdb_id=SEVERANCE_TMDB, media_type="tv", seasons=[1]).json()
    assert series["status"] == RequestStatus.PENDING


def test_a_member_without_request_permission_is_refused(seerr):
    viewer = seerr.add_user("vic", permissions=0)
    refused = file(seerr, viewer)
    assert (refused.status_code, refused.json()["message"]) == (
        403, "You do not have permission to make movie requests.")


def test_quota_exceeded_is_403_and_the_quota_says_what_is_left(seerr):
    sam = seerr.add_user("sam", permissions=MEMBER, movie_quota=(1, 7))
    assert file(seerr, sam).status_code == 201
    refused = file(seerr, sam, tmdb_id=DUNE_TMDB)
    assert (refused.status_code, refused.json()["message"]) == (403, "Movie Quota exceeded.")
    quota = api(seerr, "GET", f"/user/{sam}/quota", user=sam).json()
    assert quota["movie"] == {"days": 7, "limit": 1, "used": 1, "remaining": 0,
                              "restricted": True}
    assert quota["tv"] == {"used": 0, "restricted": False}
    seerr.decline_in_web_ui(1)
    assert file(seerr, sam, tmdb_id=DUNE_TMDB).status_code == 201


def test_a_series_counts_its_seasons_against_the_quota(seerr):
    sam = seerr.add_user("sam", permissions=MEMBER, tv_quota=(2, 7))
    refused = file(seerr, sam, tmdb_id=OFFICE_TMDB, media_type="tv", seasons="all")
    assert (refused.status_code, refused.json()["message"]) == (403, "Series Quota exceeded.")
    body = file(seerr, sam, tmdb_id=OFFICE_TMDB, media_type="tv", seasons=[1, 2]).json()
    assert [s["seasonNumber"] for s in body["seasons"]] == [1, 2]


def test_a_second_request_for_a_film_is_409_until_the_first_is_declined(seerr):
    sam, kim = (seerr.add_user(n, permissions=MEMBER) for n in ("sam", "kim"))
    first = file(seerr, sam).json()["id"]
    duplicate = file(seerr, kim)
    assert (duplicate.status_code, duplicate.json()["message"]) == (
        409, "Request for this media already exists.")
    seerr.decline_in_web_ui(first)
    assert file(seerr, kim).status_code == 201


def test_a_blocklisted_title_is_403(seerr):
    sam = seerr.add_user("sam", permissions=MEMBER)
    seerr.blocklist("movie", DUNE_TMDB)
    refused = file(seerr, sam, tmdb_id=DUNE_TMDB)
    assert (refused.status_code, refused.json()) == (403, {"message":
                                                           "This media is blocklisted."})


def test_a_series_with_no_season_left_is_202_and_others_get_the_rest(seerr):
    sam, kim = (seerr.add_user(n, permissions=MEMBER) for n in ("sam", "kim"))
    seerr.set_media_status("tv", SEVERANCE_TMDB, MediaStatus.PARTIALLY_AVAILABLE,
                           seasons={1: MediaStatus.AVAILABLE})
    body = file(seerr, sam, tmdb_id=SEVERANCE_TMDB, media_type="tv", seasons="all",
                tvdbId=SEVERANCE_TVDB).json()
    assert [s["seasonNumber"] for s in body["seasons"]] == [2]
    none_left = file(seerr, kim, tmdb_id=SEVERANCE_TMDB, media_type="tv", seasons=[1, 2])
    assert (none_left.status_code, none_left.json()) == (
        202, {"message": "No seasons available to request"})


# -- approving and declining ------------------------------------------------------------------

def test_approving_needs_manage_requests(seerr):
    sam = seerr.add_user("sam", permissions=MEMBER)
    alex = seerr.add_user("alex", permissions=MANAGER)
    request_id = file(seerr, sam).json()["id"]
    refused = api(seerr, "POST", f"/request/{request_id}/approve", user=sam)
    assert refused.status_code == 403 and refused.json()["status"] == 403
    approved = api(seerr, "POST", f"/request/{request_id}/approve", user=alex).json()
    assert (approved["status"], approved["modifiedBy"]["id"]) == (RequestStatus.APPROVED, alex)
    assert approved["media"]["status"] == MediaStatus.PROCESSING
    assert api(seerr, "POST", "/request/999/approve", user=alex).json() == {
        "message": "Request not found."}


def test_declining_a_film_puts_its_media_back_to_unknown(seerr):
    sam = seerr.add_user("sam", permissions=MEMBER)
    request_id = file(seerr, sam).json()["id"]
    declined = api(seerr, "POST", f"/request/{request_id}/decline").json()
    assert (declined["status"], declined["media"]["status"]) == (RequestStatus.DECLINED,
                                                                 MediaStatus.UNKNOWN)


def test_availability_completes_the_request_and_gives_the_media_url(seerr):
    sam = seerr.add_user("sam", permissions=MEMBER)
    request_id = file(seerr, sam).json()["id"]
    seerr.approve_in_web_ui(request_id)
    seerr.set_media_status("movie", DUNE_TWO_TMDB, MediaStatus.AVAILABLE)
    assert seerr.request_status(request_id) == RequestStatus.COMPLETED
    info = api(seerr, "GET", f"/movie/{DUNE_TWO_TMDB}").json()["mediaInfo"]
    assert info["status"] == MediaStatus.AVAILABLE
    assert info["mediaUrl"].startswith("https://app.plex.tv/desktop#!/server/")
    assert info["requests"][0]["requestedBy"]["id"] == sam
    assert [k for k, _ in seerr.notifications] == [
        Notification.MEDIA_PENDING, Notification.MEDIA_APPROVED, Notification.MEDIA_AVAILABLE]


def test_a_failed_request_is_status_4(seerr):
    sam = seerr.add_user("sam", permissions=MEMBER | Permission.AUTO_APPROVE)
    request_id = file(seerr, sam).json()["id"]
    seerr.fail_request(request_id)
    assert api(seerr, "GET", f"/request/{request_id}").json()["status"] == RequestStatus.FAILED


# -- reading requests, users, titles ----------------------------------------------------------

def test_the_request_list_filters_pages_and_shows_a_member_only_their_own(seerr):
    sam, kim = (seerr.add_user(n, permissions=MEMBER) for n in ("sam", "kim"))
    file(seerr, sam)
    file(seerr, kim, tmdb_id=DUNE_TMDB)
    file(seerr, sam, tmdb_id=OFFICE_TMDB, media_type="tv", seasons=[1])
    seerr.approve_in_web_ui(2)
    pending = api(seerr, "GET", "/request", params={"filter": "pending", "take": 1}).json()
    assert pending["pageInfo"] == {"pages": 2, "pageSize": 1, "results": 2, "page": 1}
    assert [r["id"] for r in pending["results"]] == [3]
    mine = api(seerr, "GET", "/request", user=sam).json()
    assert {r["requestedBy"]["id"] for r in mine["results"]} == {sam}
    assert api(seerr, "GET", "/request", user=sam, params={"requestedBy": kim}).status_code \
        == 403
    assert api(seerr, "GET", "/request/2", user=sam).json() == {
        "message": "You do not have permission to view this request."}
    assert api(seerr, "GET", "/request/77").status_code == 404


def test_users_are_listed_in_pages_and_emails_only_for_managers(seerr):
    for name in ("sam", "kim", "ana"):
        seerr.add_user(name, permissions=MEMBER)
    page = api(seerr, "GET", "/user", params={"take": 2, "skip": 2}).json()
    assert page["pageInfo"]["results"] == 4
    assert [(u["id"], u["email"]) for u in page["results"]] == [
        (3, "kim@example.com"), (4, "ana@example.com")]
    as_member = api(seerr, "GET", "/user", user=2, params={"q": "kim"}).json()["results"]
    assert [u["displayName"] for u in as_member] == ["kim"] and "email" not in as_member[0]
    assert api(seerr, "GET", "/user/42").json() == {"message": "User not found."}
    assert api(seerr, "GET", "/user/3/quota", user=2).status_code == 403


def test_search_carries_seerrs_status_and_details_the_requests(seerr):
    sam = seerr.add_user("sam", permissions=MEMBER)
    file(seerr, sam)
    results = api(seerr, "GET", "/search", params={"query": "dune"}).json()["results"]
    status = {r["id"]: r.get("mediaInfo", {}).get("status") for r in results}
    assert status[DUNE_TWO_TMDB] == MediaStatus.PENDING and status[DUNE_TMDB] is None
    show = api(seerr, "GET", f"/tv/{OFFICE_TMDB}").json()
    assert show["externalIds"]["tvdbId"] == 73244 and "mediaInfo" not in show
    assert api(seerr, "GET", "/movie/1").json() == {"message": "Unable to retrieve movie."}


# -- the spec as a gate -----------------------------------------------------------------------

@pytest.mark.parametrize("method, path, kwargs, message", [
    ("GET", "/request", {"params": {"filter": "nope"}}, "filter"),
    ("GET", "/user", {"params": {"page": 2}}, "Unknown query parameter 'page'"),
    ("POST", "/request", {"json": {"mediaType": "film", "mediaId": DUNE_TMDB}}, "film"),
    ("POST", "/request", {"json": {"mediaType": "movie"}}, "mediaId"),
    ("POST", "/request/1/pending", {}, "pending"),
    ("GET", "/nothing/here", {}, "not found"),
])
def test_a_request_the_spec_refuses_is_answered_as_seerr_and_recorded(
        seerr, method, path, kwargs, message):
    answer = api(seerr, method, path, **kwargs)
    assert answer.status_code == (404 if path == "/nothing/here" else 400)
    assert message in answer.json()["message"]
    assert len(seerr.violations) == 1 and message in seerr.violations[0]
    seerr.violations.clear()


def test_a_response_that_breaks_the_spec_fails_loudly():
    with FakeSeerr(version=3) as broken:     # the spec says version is a string
        answer = api(broken, "GET", "/status")
        assert answer.status_code == 500
        assert "fake Seerr broke Seerr's spec" in answer.json()["message"]
        assert "is not of type 'string'" in broken.violations[0]
        with pytest.raises(AssertionError, match="off-spec traffic"):
            broken.assert_clean()


def test_an_undocumented_status_must_carry_seerrs_error_body():
    request = Request.from_values("/api/v1/request", method="POST",
                                  headers={"X-Api-Key": "k"})
    check_response(request, Response('{"message": "Movie Quota exceeded."}', status=403,
                                      mimetype="application/json"))
    with pytest.raises(SpecViolation, match="undocumented answer 200"):
        check_response(request, Response("{}", status=200, mimetype="application/json"))
    with pytest.raises(SpecViolation, match="undocumented answer 403"):
        check_response(request, Response('{"detail": "no"}', status=403,
                                          mimetype="application/json"))


def test_the_vendored_spec_is_seerrs_reference_copy():
    reference = pathlib.Path(__file__).resolve().parents[3] / "shared" / "reference" / \
        "seerr-api.yml"
    if not reference.exists():
        pytest.skip("no ../shared/reference beside this clone")
    lines = SPEC_PATH.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    assert "".join(lines[start:]) == reference.read_text(encoding="utf-8")


# -- webhooks from the default template -------------------------------------------------------

def test_hooks_are_posted_from_the_default_template_with_the_authorization(seerr, receiver):
    seerr.configure_webhook(receiver.url, authorization="Bearer hook-secret")
    sam = seerr.add_user("sam", email="Sam@Example.com", permissions=MEMBER)
    request_id = file(seerr, sam).json()["id"]
    seerr.approve_in_web_ui(request_id)
    seerr.set_media_status("movie", DUNE_TWO_TMDB, MediaStatus.AVAILABLE)
    assert seerr.wait_for_webhooks()
    assert [d.status for d in seerr.deliveries] == [204, 204, 204]
    headers, pending = receiver.posts[0]
    assert headers["Authorization"] == "Bearer hook-secret"
    assert list(pending) == ["notification_type", "event", "subject", "message", "image",
                             "media", "request", "issue", "comment", "extra"]
    assert pending["notification_type"] == "MEDIA_PENDING"
    assert (pending["event"], pending["subject"]) == ("New Movie Request",
                                                      "Dune: Part Two (2024)")
    assert pending["media"] == {"media_type": "movie", "tmdbId": str(DUNE_TWO_TMDB),
                                "tvdbId": "", "status": "PENDING", "status4k": "UNKNOWN"}
    assert pending["request"] == {
        "request_id": str(request_id), "requestedBy_email": "sam@example.com",
        "requestedBy_username": "sam", "requestedBy_avatar": seerr.user(sam).avatar,
        "requestedBy_settings_discordId": "", "requestedBy_settings_telegramChatId": ""}
    assert (pending["issue"], pending["comment"], pending["extra"]) == (None, None, [])
    kinds = [(b["notification_type"], b["event"], b["media"]["status"])
             for _, b in receiver.posts[1:]]
    assert kinds == [("MEDIA_APPROVED", "Movie Request Approved", "PENDING"),
                     ("MEDIA_AVAILABLE", "Movie Request Now Available", "AVAILABLE")]


def test_only_the_enabled_types_are_posted_and_a_series_names_its_seasons(seerr, receiver):
    seerr.configure_webhook(receiver.url, types=Notification.MEDIA_AUTO_APPROVED)
    ana = seerr.add_user("ana", permissions=MEMBER | Permission.AUTO_APPROVE)
    sam = seerr.add_user("sam", permissions=MEMBER)
    file(seerr, sam)
    file(seerr, ana, tmdb_id=OFFICE_TMDB, media_type="tv", seasons=[2, 3])
    seerr.send_test_webhook()
    assert seerr.wait_for_webhooks()
    bodies = [b for _, b in receiver.posts]
    assert [b["notification_type"] for b in bodies] == ["MEDIA_AUTO_APPROVED",
                                                        "TEST_NOTIFICATION"]
    assert bodies[0]["extra"] == [{"name": "Requested Seasons", "value": "2, 3"}]
    assert bodies[0]["media"]["tvdbId"] == "73244"
    assert len(bodies[0]["message"]) <= 500 and bodies[0]["message"].endswith("…")
    test = bodies[1]
    assert (test["subject"], test["event"], test["media"], test["request"]) == (
        "Test Notification", "", None, None)


def test_variables_are_replaced_as_javascripts_string_replace_does():
    template = json.dumps({"a": "{{subject}} and {{subject}}", "b": "x{{event}}y",
                           "{{media}}": {"n": "{{media_tmdbid}}"}, "c": 5})
    body = render(template, Notification.MEDIA_PENDING,
                  {"subject": "Cost $& more", "event": "$'", "media": None})
    assert body == {"a": "Cost {{subject}} more and {{subject}}", "b": "xyy", "c": 5,
                    "media": None}


def test_long_overviews_are_cut_at_a_word_as_lodash_truncate_does():
    text = "word " * 150
    cut = truncate(text)
    assert cut.endswith("word…") and len(cut) <= 500
    assert truncate("short") == "short"


def test_the_default_template_is_seerrs():
    assert json.loads(base64.b64decode(SEERR_DEFAULT_PAYLOAD)) == DEFAULT_TEMPLATE
