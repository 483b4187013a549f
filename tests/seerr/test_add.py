"""Adds through Seerr, in process: the real client files a request in the fake Seerr as the
member's own Seerr user, and the member reads one sentence of what Seerr decided. Nothing is
ever filed in someone else's name, and what cannot be answered is a ToolError with nothing
filed."""

import pytest

from mediabot.arr.tools.base import Service, ToolContext, ToolError
from mediabot.seerr.add import SeerrLink, seerr_seasons
from mediabot.seerr.api import SeerrClient, SeerrMedia
from mediabot.trial.sim.arr_fixtures import ARRIVAL_TMDB, DUNE_TWO_TMDB, SEVERANCE_TVDB
from tests.fakes.seerr_model import MediaStatus, Permission, RequestStatus

DUNE_TWO = "Dune: Part Two (2024)"
FILE = ("POST", "/request")


class Wanted:
    """What the member will be texted about when it lands (``record_request``)."""

    def __init__(self):
        self.titles: list[tuple[Service, int, str]] = []

    def __call__(self, service, external_id, title, *, seasons=0, added=False):
        self.titles.append((service, external_id, title))


@pytest.fixture
def client(seerr):
    client = SeerrClient(seerr.url, seerr.api_key, timeout=5, retries=0)
    yield client
    client.close()


def asking(client, link="sam", **options):
    wanted = Wanted()
    return ToolContext(sonarr=None, radarr=None, user_id=2, record_request=wanted,
                       seerr=SeerrLink(client, link, **options)), wanted


def test_a_request_is_filed_as_the_member_and_waits_for_an_admin(seerr, client):
    sam = seerr.add_user("sam", permissions=Permission.REQUEST)
    ctx, wanted = asking(client)
    result = ctx.seerr.request_movie(ctx, DUNE_TWO_TMDB)
    assert result["message"] == (
        f"I asked Seerr for {DUNE_TWO}. The request is waiting for an admin's approval "
        "there; you will get a text when it is ready.")
    [filed] = seerr.calls_to(*FILE)
    assert filed.api_user == str(sam)
    assert seerr.request_status(result["request"]) == RequestStatus.PENDING
    assert wanted.titles == [(Service.RADARR, DUNE_TWO_TMDB, DUNE_TWO)]


def test_a_member_seerr_auto_approves_is_told_it_was_approved(seerr, client):
    seerr.add_user("sam", permissions=Permission.REQUEST | Permission.AUTO_APPROVE)
    ctx, _ = asking(client)
    result = ctx.seerr.request_movie(ctx, DUNE_TWO_TMDB)
    assert result["status"] == "approved"
    assert result["message"] == (f"I asked Seerr for {DUNE_TWO} and it was approved; you will "
                                 "get a text when it is ready.")


def test_without_a_link_nothing_is_filed_and_the_admins_hear_of_it(seerr, client):
    hints = []
    ctx, wanted = asking(client, link=None, hint_admins=hints.append)
    result = ctx.seerr.request_movie(ctx, DUNE_TWO_TMDB)
    assert result["message"] == ("Your number is not linked to a Seerr account yet, so I "
                                 "cannot request it for you. Ask an admin to link it.")
    assert result["requested"] is False
    assert seerr.calls_to(*FILE) == []
    assert hints == [DUNE_TWO]
    assert wanted.titles == []


def test_an_admin_with_a_link_seerr_does_not_know_is_told_how_to_fix_it(seerr, client):
    ctx, _ = asking(client, link="nobody-here", admin=True)
    message = ctx.seerr.request_movie(ctx, DUNE_TWO_TMDB)["message"]
    assert message.startswith("Your number is linked to a Seerr account that Seerr does not "
                              "know")
    assert message.endswith("(Set seerr_user for this number in [[users]], then restart "
                            "mediabot; mediabot check lists every link.)")
    assert seerr.calls_to(*FILE) == []


def test_what_is_already_available_is_not_filed(seerr, client):
    seerr.add_user("sam", permissions=Permission.REQUEST)
    seerr.set_media_status("movie", DUNE_TWO_TMDB, MediaStatus.AVAILABLE)
    ctx, _ = asking(client)
    assert ctx.seerr.request_movie(ctx, DUNE_TWO_TMDB)["message"] == \
        f"{DUNE_TWO} is already available to watch."
    assert seerr.calls_to(*FILE) == []


def test_over_quota_the_member_is_told_what_is_left(seerr, client):
    seerr.add_user("sam", permissions=Permission.REQUEST, movie_quota=(1, 7))
    ctx, _ = asking(client)
    ctx.seerr.request_movie(ctx, ARRIVAL_TMDB)
    assert ctx.seerr.request_movie(ctx, DUNE_TWO_TMDB)["message"] == (
        f"Seerr did not file {DUNE_TWO}: you may request 1 film every 7 days, and you have "
        "0 left.")


def test_already_requested_by_someone_else_names_them_and_remembers_the_asker(seerr, client):
    theo = seerr.add_user("theo", permissions=Permission.REQUEST)
    seerr.add_user("sam", permissions=Permission.REQUEST)
    seerr.request_in_web_ui(theo, "movie", DUNE_TWO_TMDB)
    ctx, wanted = asking(client)
    assert ctx.seerr.request_movie(ctx, DUNE_TWO_TMDB)["message"] == (
        f"{DUNE_TWO} was already requested in Seerr by theo; you will get a text when it is "
        "ready.")
    assert wanted.titles == [(Service.RADARR, DUNE_TWO_TMDB, DUNE_TWO)]


def test_a_title_seerr_cannot_look_up_is_a_tool_error_and_nothing_is_filed(seerr, client):
    """Seerr answers 500 "Unable to retrieve movie." for a TMDB id TMDB does not know."""
    seerr.add_user("sam", permissions=Permission.REQUEST)
    ctx, _ = asking(client)
    with pytest.raises(ToolError, match=r"\(Unable to retrieve movie\.\); nothing was "
                                        "requested"):
        ctx.seerr.request_movie(ctx, 999999999)
    assert seerr.calls_to(*FILE) == []


def test_seerr_down_is_a_tool_error_and_nothing_is_filed(seerr, client):
    seerr.add_user("sam", permissions=Permission.REQUEST)
    ctx, wanted = asking(client)
    seerr.down()
    try:
        with pytest.raises(ToolError, match="Seerr is not answering right now; nothing was "
                                            "requested"):
            ctx.seerr.request_movie(ctx, DUNE_TWO_TMDB)
    finally:
        seerr.up()
    assert seerr.calls_to(*FILE) == []
    assert wanted.titles == []


def test_a_series_is_filed_by_its_tmdb_id_with_the_newest_season(seerr, client):
    seerr.add_user("sam", permissions=Permission.REQUEST)
    ctx, wanted = asking(client)
    result = ctx.seerr.request_series(ctx, SEVERANCE_TVDB, "latest")
    [filed] = seerr.calls_to(*FILE)
    assert filed.body["mediaType"] == "tv"
    assert filed.body["seasons"] == [max(n for n in
                                         client.find_series_by_tvdb(SEVERANCE_TVDB)
                                         .season_numbers)]
    assert result["requested"] is True
    assert wanted.titles[0][:2] == (Service.SONARR, SEVERANCE_TVDB)


@pytest.mark.parametrize(("asked", "seasons", "expected"), [
    ("all", (0, 1, 2), "all"),
    ("latest", (0, 1, 2), [2]),
    ("future", (1, 2, 3), [3]),
    ("latest", (0,), "all"),          # only specials: nothing newer to pick
    ([2, 1, 2], (1, 2), [1, 2]),
])
def test_seerr_seasons(asked, seasons, expected):
    media = SeerrMedia(media_type="tv", tmdb_id=1, tvdb_id=2, title="Severance", year=2022,
                       season_numbers=seasons)
    assert seerr_seasons(asked, media) == expected
