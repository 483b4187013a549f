"""The Seerr client against the fake Seerr over loopback: what it reads, how it files and
decides requests as a member, and how each of Seerr's refusals reaches mediabot."""

import logging

import pytest
from werkzeug.wrappers import Response

from mediabot.seerr.api import (
    MediaStatus,
    Permission,
    RequestStatus,
    SeerrClient,
    SeerrError,
)
from mediabot.seerr.api.client import api_base
from mediabot.trial.sim.loopback import LoopbackServer
from tests.fakes.seerr_catalog import (
    DUNE_TMDB,
    DUNE_TWO_TMDB,
    OFFICE_TMDB,
    SEVERANCE_TMDB,
    SEVERANCE_TVDB,
)

MEMBER = Permission.REQUEST


@pytest.fixture
def pauses():
    return []


@pytest.fixture
def client(seerr, pauses):
    made = SeerrClient(seerr.url, seerr.api_key, timeout=2, retries=2, backoff=0.1,
                       sleep=pauses.append)
    yield made
    made.close()


def refusal(call, *args, **kwargs) -> SeerrError:
    with pytest.raises(SeerrError) as caught:
        call(*args, **kwargs)
    return caught.value


# -- the server and its users -----------------------------------------------------------------

def test_status_names_the_version_and_me_checks_the_key(seerr, client):
    assert client.status().version == "3.1.0"
    owner = client.me()
    assert (owner.id, owner.has(Permission.MANAGE_REQUESTS)) == (1, True)
    for key, status in (("wrong", 403), ("", 401)):
        error = refusal(SeerrClient(seerr.url, key).me)
        assert (error.kind, error.status) == ("unauthorized", status)


def test_acting_as_a_member_reads_as_them_and_an_unknown_member_is_forbidden(seerr, client):
    sam = seerr.add_user("sam", permissions=MEMBER)
    me = client.me(acting_as=sam)
    assert (me.id, me.display_name, me.has(Permission.MANAGE_REQUESTS)) == (sam, "sam", False)
    error = refusal(client.me, acting_as=404)
    assert (error.kind, error.message) == (
        "forbidden", "You do not have permission to access this endpoint")


def test_all_users_reads_every_page(seerr, client):
    for n in range(5):
        seerr.add_user(f"user{n}", permissions=MEMBER)
    users = client.all_users(page_size=2)
    assert [u.id for u in users] == [1, 2, 3, 4, 5, 6]
    assert len(seerr.calls_to("GET", "/user")) == 3
    assert users[1].email == "user0@example.com" and users[1].plex_username == "user0"


def test_a_link_finds_a_user_by_id_email_or_plex_or_jellyfin_username(seerr, client):
    sam = seerr.add_user("sam", email="Sam@Home.example", permissions=MEMBER)
    local = seerr.add_user("grandma", local=True, email="gran@home.example",
                           permissions=MEMBER)
    kim = seerr.add_user("kim", jellyfin_username="KimJF", permissions=MEMBER)
    assert client.find_user(str(sam)).id == sam
    assert client.find_user("sam@home.EXAMPLE").id == sam
    assert client.find_user("SAM").id == sam
    assert client.find_user("kimjf").id == kim
    assert client.find_user("gran@home.example").id == local
    assert client.find_user("nobody") is None and client.find_user("99") is None


def test_a_display_name_names_nobody(seerr, client):
    """Seerr's Display Name is the user's own ``username``: "grandma", another member's
    email or id typed there, match no link."""
    seerr.add_user("sam", email="sam@home.example", permissions=MEMBER)
    seerr.add_user("grandma", local=True, email="gran@home.example", permissions=MEMBER)
    theo = seerr.add_user("theo", permissions=MEMBER)
    seerr.set_display_name(theo, "sam@home.example")
    assert client.find_user("grandma") is None
    assert client.find_user("sam@home.example").id == 2
    seerr.set_display_name(theo, "2")
    assert client.find_user("2").id == 2
    seerr.set_display_name(theo, "sam")
    assert client.find_user("sam").id == 2


def test_a_link_that_names_two_users_is_ambiguous(seerr, client):
    seerr.add_user("jo", jellyfin_username="jo", email="jo@a.example", permissions=MEMBER)
    seerr.add_user("jo", email="jo@b.example", permissions=MEMBER)
    error = refusal(client.find_user, "jo")
    assert error.kind == "ambiguous" and "(2, 3)" in error.message


def test_quota_says_what_is_left(seerr, client):
    sam = seerr.add_user("sam", permissions=MEMBER, movie_quota=(2, 7))
    client.request_media("movie", DUNE_TWO_TMDB, as_user=sam)
    quota = client.quota(sam, acting_as=sam)
    assert (quota.movie.limit, quota.movie.days, quota.movie.used, quota.movie.remaining,
            quota.movie.restricted) == (2, 7, 1, 1, False)
    assert (quota.tv.limit, quota.tv.remaining) == (None, None)
    assert client.quota(1).movie.limit is None      # the owner is never limited


# -- titles ---------------------------------------------------------------------------------------

def test_search_says_what_seerr_knows_of_each_title(seerr, client):
    sam = seerr.add_user("sam", permissions=MEMBER)
    client.request_media("movie", DUNE_TWO_TMDB, as_user=sam)
    found = {m.tmdb_id: m for m in client.search("dune")}
    assert (found[DUNE_TWO_TMDB].title, found[DUNE_TWO_TMDB].year) == ("Dune: Part Two", 2024)
    assert found[DUNE_TWO_TMDB].status == MediaStatus.PENDING
    assert found[DUNE_TMDB].status == MediaStatus.UNKNOWN
    assert client.search("no such title") == []
    assert [m.title for m in client.search("tmdb:841")] == ["Dune"]


def test_a_series_is_found_by_the_tvdb_id_sonarr_uses(client):
    show = client.find_series_by_tvdb(SEVERANCE_TVDB)
    assert (show.tmdb_id, show.title, show.tvdb_id) == (SEVERANCE_TMDB, "Severance",
                                                        SEVERANCE_TVDB)
    assert client.find_series_by_tvdb(1) is None


def test_details_carry_the_requests_and_the_link_to_the_library(seerr, client):
    sam = seerr.add_user("sam", permissions=MEMBER)
    filed = client.request_media("movie", DUNE_TWO_TMDB, as_user=sam)
    seerr.approve_in_web_ui(filed.id)
    seerr.set_media_status("movie", DUNE_TWO_TMDB, MediaStatus.AVAILABLE)
    film = client.movie(DUNE_TWO_TMDB)
    assert film.status == MediaStatus.AVAILABLE and film.media_url.startswith("https://")
    assert [(r.id, r.status, r.requested_by.id) for r in film.requests] == [
        (filed.id, RequestStatus.COMPLETED, sam)]
    show = client.tv(OFFICE_TMDB)
    assert show.tvdb_id == 73244 and show.season_numbers[:3] == (0, 1, 2)
    assert refusal(client.movie, 1).kind == "server"


# -- requests -------------------------------------------------------------------------------------

def test_a_request_is_filed_as_the_member_never_for_them(seerr, client):
    sam = seerr.add_user("sam", permissions=MEMBER)
    filed = client.request_media("movie", DUNE_TWO_TMDB, as_user=sam)
    assert (filed.status, filed.requested_by.id, filed.media_type, filed.tmdb_id) == (
        RequestStatus.PENDING, sam, "movie", DUNE_TWO_TMDB)
    sent = seerr.calls_to("POST", "/request")[0]
    assert sent.api_user == str(sam) and "userId" not in sent.body


def test_a_series_asks_for_every_season_left(seerr, client):
    sam = seerr.add_user("sam", permissions=MEMBER)
    seerr.set_media_status("tv", SEVERANCE_TMDB, MediaStatus.PARTIALLY_AVAILABLE,
                           seasons={1: MediaStatus.AVAILABLE})
    filed = client.request_media("tv", SEVERANCE_TMDB, as_user=sam, tvdb_id=SEVERANCE_TVDB)
    assert (filed.seasons, filed.tvdb_id) == ((2,), SEVERANCE_TVDB)
    again = client.get_request(filed.id, acting_as=sam)
    assert (again.status, again.media_status) == (RequestStatus.PENDING,
                                                  MediaStatus.PARTIALLY_AVAILABLE)


@pytest.mark.parametrize("setup, media_type, tmdb_id, kind, message", [
    ("quota", "movie", DUNE_TMDB, "quota", "Movie Quota exceeded."),
    ("duplicate", "movie", DUNE_TWO_TMDB, "duplicate", "Request for this media already exists."),
    ("blocklist", "movie", DUNE_TMDB, "blocklisted", "This media is blocklisted."),
    ("available", "tv", SEVERANCE_TMDB, "no_seasons_left", "No seasons available to request"),
    ("viewer", "movie", DUNE_TMDB, "forbidden",
     "You do not have permission to make movie requests."),
])
def test_seerrs_refusals_keep_seerrs_words(seerr, client, setup, media_type, tmdb_id, kind,
                                           message):
    sam = seerr.add_user("sam", permissions=0 if setup == "viewer" else MEMBER,
                         movie_quota=(1, 7))
    kim = seerr.add_user("kim", permissions=MEMBER)
    if setup in ("quota", "duplicate"):
        client.request_media("movie", DUNE_TWO_TMDB, as_user=kim if setup == "duplicate"
                             else sam)
    if setup == "blocklist":
        seerr.blocklist("movie", DUNE_TMDB)
    if setup == "available":
        seerr.set_media_status("tv", SEVERANCE_TMDB, MediaStatus.AVAILABLE,
                               seasons={1: MediaStatus.AVAILABLE, 2: MediaStatus.AVAILABLE})
    error = refusal(client.request_media, media_type, tmdb_id, as_user=sam)
    assert (error.kind, error.message) == (kind, message)


def test_an_admin_decides_as_their_own_user_and_a_member_may_not(seerr, client):
    sam = seerr.add_user("sam", permissions=MEMBER)
    alex = seerr.add_user("alex", permissions=MEMBER | Permission.MANAGE_REQUESTS)
    first = client.request_media("movie", DUNE_TWO_TMDB, as_user=sam)
    second = client.request_media("movie", DUNE_TMDB, as_user=sam)
    error = refusal(client.approve, first.id, as_user=sam)
    assert (error.kind, error.status) == ("forbidden", 403)
    approved = client.approve(first.id, as_user=alex)
    assert (approved.status, approved.modified_by.id) == (RequestStatus.APPROVED, alex)
    assert approved.media_status == MediaStatus.PROCESSING
    assert client.decline(second.id, as_user=alex).status == RequestStatus.DECLINED
    assert refusal(client.get_request, 999).kind == "not_found"


def test_the_request_list_filters_and_counts(seerr, client):
    sam, kim = (seerr.add_user(n, permissions=MEMBER) for n in ("sam", "kim"))
    client.request_media("movie", DUNE_TWO_TMDB, as_user=sam)
    client.request_media("movie", DUNE_TMDB, as_user=kim)
    client.request_media("tv", OFFICE_TMDB, as_user=sam, seasons=[1, 2])
    page = client.list_requests(filter="pending", take=2)
    assert (page.total, page.pages, [r.id for r in page.results]) == (3, 2, [3, 2])
    assert [r.id for r in client.list_requests(requested_by=sam).results] == [3, 1]
    assert [r.id for r in client.list_requests(acting_as=kim).results] == [2]


# -- bounded calls and errors at the edge ---------------------------------------------------

def test_a_get_is_tried_again_on_a_gateway_error_a_post_never(seerr, client, pauses):
    seerr.fail_next(2)
    assert client.status().version == "3.1.0"
    assert pauses == [0.1, 0.2]
    seerr.fail_next(3)
    assert (refusal(client.status).kind, len(pauses)) == ("server", 4)
    sam = seerr.add_user("sam", permissions=MEMBER)
    seerr.fail_next(1)
    error = refusal(client.request_media, "movie", DUNE_TMDB, as_user=sam)
    assert (error.kind, error.status) == ("server", 503)
    assert len(seerr.calls_to("POST", "/request")) == 1


def test_no_answer_is_unreachable_after_the_retries(seerr, client, pauses):
    seerr.down()
    error = refusal(client.status)
    assert error.kind == "unreachable" and "ConnectionError" in error.message
    assert len(pauses) == 2
    seerr.up()
    assert client.status().version == "3.1.0"


def test_a_slow_answer_times_out_and_a_post_may_have_happened(seerr, pauses):
    sam = seerr.add_user("sam", permissions=MEMBER)
    seerr.http.delay = 0.3
    quick = SeerrClient(seerr.url, seerr.api_key, timeout=0.1, retries=0, sleep=pauses.append)
    assert "in time" in refusal(quick.status).message
    error = refusal(quick.request_media, "movie", DUNE_TMDB, as_user=sam)
    assert error.kind == "unreachable" and "may still have done it" in error.message


def test_an_answer_that_is_not_seerrs_is_unexpected():
    page = LoopbackServer(Response("<html>Seerr</html>", mimetype="text/html")).start()
    try:
        error = refusal(SeerrClient(page.url, "k", retries=0).status)
        assert error.kind == "unexpected" and "not JSON" in error.message
    finally:
        page.stop()


def test_the_key_is_never_logged_nor_shown(seerr, caplog):
    caplog.set_level(logging.DEBUG)
    client = SeerrClient(seerr.url, seerr.api_key, retries=1, sleep=lambda _s: None)
    seerr.fail_next(1)
    client.status()
    errors = [refusal(SeerrClient(seerr.url, seerr.api_key + "x").me),
              refusal(client.get_request, 5)]
    shown = caplog.text + repr(client) + "".join(f"{e} {e.message}" for e in errors)
    assert seerr.api_key not in shown


@pytest.mark.parametrize("url, base", [
    ("http://seerr:5055", "http://seerr:5055/api/v1"),
    ("http://seerr:5055/api/v1/", "http://seerr:5055/api/v1"),
    (" https://home.example/seerr/ ", "https://home.example/seerr/api/v1"),
])
def test_the_api_base_is_found_from_the_url_an_operator_gives(url, base):
    assert api_base(url) == base
