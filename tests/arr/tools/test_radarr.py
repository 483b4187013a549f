"""Movie tools through arrapi against the fake Radarr, and the tools that span both."""

import pytest

from mediabot.arr.tools import describe_action, get_tool
from mediabot.trial.sim.arr_fixtures import DUNE_1984_TMDB, DUNE_TMDB, DUNE_TWO_TMDB, HAIL_MARY_TMDB
from tests.fakes.arr_stack import ArrStack
from tests.fakes.arr_stack import call_tool as call


@pytest.fixture
def stack():
    stack = ArrStack()
    yield stack
    stack.close()


def test_search_movies_by_title(stack):
    result = call(stack.context(sonarr=False), "search_media", query="dune")
    hits = result["results"]
    assert [(h["title"], h["year"], h["in_library"]) for h in hits[:2]] == [
        ("Dune", 2021, True), ("Dune", 1984, False)]
    assert hits[0]["id"] == f"m{DUNE_TMDB}" and len(hits) == 4
    assert hits[1]["id"] == "m841" and not any("kind" in hit for hit in hits), "the id says it"
    assert result["more"] == 3     # Jodorowsky's Dune, Dune Drifter, Dune World: counted


def test_search_any_interleaves_both_services(stack):
    hits = call(stack.context(), "search_media", query="dune")["results"]
    assert {hit["id"].rstrip("0123456789") for hit in hits} == {"m", "tv"} and len(hits) == 4


def test_search_any_with_one_service_down_still_answers(stack):
    stack.down("sonarr")
    result = call(stack.context(), "search_media", query="dune")
    assert result["results"][0]["id"] == f"m{DUNE_TMDB}"
    assert result["warnings"] == [f"Sonarr is not answering at {stack.servers['sonarr'].url}"]


def test_search_gives_the_status_of_downloaded_and_waiting_movies(stack):
    """"Do we have X?" is a search (library_status was folded into search_media): a movie
    the library has comes with what is on disk or what it waits for, one it lacks with
    the overview that tells it apart."""
    hits = call(stack.context(sonarr=False), "search_media", query="dune")["results"]
    dune, dune_1984, dune_two = hits[:3]
    assert dune["downloaded"] and dune["size"] == "21 GB" and dune["quality"] == "Bluray-2160p"
    assert not dune_two["downloaded"] and "Radarr is searching" in dune_two["missing"]
    assert dune_1984["overview"] and not dune_1984["in_library"]
    assert "downloaded" not in dune_1984 and "overview" not in dune


def test_search_says_what_an_unreleased_movie_waits_for(stack):
    [movie] = call(stack.context(sonarr=False), "search_media",
                   query="project hail mary")["results"]
    assert movie["missing"].startswith("in cinemas since ")
    assert "; digital release " in movie["missing"]


def test_library_status_by_its_former_name_is_a_search(stack):
    ctx = stack.context(sonarr=False)
    assert call(ctx, "library_status", query="dune", kind="any") == \
        call(ctx, "search_media", query="dune")


def test_add_movie_searches_and_records_the_request(stack):
    result = call(stack.context(sonarr=False), "add_movie", tmdb_id=DUNE_1984_TMDB)
    assert result["ok"] and result["title"] == "Dune (1984)"
    body = stack.radarr.requests_to("movie", "POST")[-1].body
    assert body["addOptions"] == {"searchForMovie": True} and body["monitored"] is True
    assert body["rootFolderPath"] == "/movies" and body["qualityProfileId"] == 1
    assert stack.recorded == [("radarr", DUNE_1984_TMDB, "Dune (1984)")]


def test_add_movie_with_a_named_profile(stack):
    call(stack.context(sonarr=False), "add_movie", tmdb_id=DUNE_1984_TMDB,
         quality_profile="ultra-hd")
    assert stack.radarr.requests_to("movie", "POST")[-1].body["qualityProfileId"] == 5


def test_add_movie_already_downloaded(stack):
    result = call(stack.context(sonarr=False), "add_media", tmdb_id=DUNE_TMDB)
    assert result == {"ok": True, "added": False,
                      "message": "Dune (2021) is already in the library and ready to watch."}
    assert stack.recorded == [] and not stack.radarr.requests_to("movie", "POST")


def test_add_movie_already_added_but_not_downloaded_notifies(stack):
    result = call(stack.context(sonarr=False), "add_media", tmdb_id=DUNE_TWO_TMDB)
    assert result == {"ok": True, "added": False, "message": (
        "Dune: Part Two (2024) is already in the library, not downloaded yet; the user will "
        "get a text when it is ready.")}
    assert stack.recorded == [("radarr", DUNE_TWO_TMDB, "Dune: Part Two (2024)")]
    assert not stack.radarr.requests_to("movie", "POST")


def test_add_unknown_movie(stack):
    result = call(stack.context(sonarr=False), "add_movie", tmdb_id=999999999)
    assert result == {"error": "no movie has TMDB id 999999999"}


def test_remove_movie_with_confirmation_text(stack):
    ctx = stack.context("admin", sonarr=False)
    args = {"kind": "movie", "id": DUNE_TMDB, "delete_files": True}
    assert describe_action(get_tool("remove_media"), ctx, args) == (
        "Remove Dune (2021) and delete its 21 GB of files?")
    assert call(ctx, "remove_media", **args)["message"] == (
        "Removed Dune (2021) and deleted its files.")
    assert stack.radarr.deleted == [{"id": 1, "title": "Dune", "deleteFiles": True}]
    args["id"] = DUNE_TWO_TMDB
    assert describe_action(get_tool("remove_media"), ctx, args) == (
        "Remove Dune: Part Two (2024)? It has no files on disk.")


def test_queue_across_both_services(stack):
    result = call(stack.context(), "download_queue")
    assert result["total"] == 4 and len(result["downloads"]) == 4
    assert result["downloads"][-1] == {"title": "Dune: Part Two (2024)", "progress": "63%",
                                       "time_left": "2 h 15 min", "status": "downloading"}


def test_empty_queue(stack):
    stack.radarr.queue = []
    assert call(stack.context(sonarr=False), "download_queue") == {
        "downloads": [], "total": 0, "message": "nothing is downloading"}


def test_upcoming_says_which_release(stack):
    result = call(stack.context(), "upcoming")
    assert [m["release"] for m in result["movies"]] == ["digital"]
    assert result["movies"][0]["title"] == "Project Hail Mary (2026)"
    assert result["episodes"][0]["episode"] == "S05E04"
    assert "physical" in [m["release"] for m in call(stack.context(), "upcoming",
                                                     days=60)["movies"]]


def test_notify_me_by_its_former_name_is_an_add_that_tells_the_asker(stack):
    """notify_me was folded into add_media: a stored or copied notify_me call registers the
    asker for a title the library has, and adds nothing."""
    result = call(stack.context(sonarr=False), "notify_me", kind="movie", id=HAIL_MARY_TMDB)
    assert result["message"] == ("Project Hail Mary (2026) is already in the library, not "
                                 "downloaded yet; the user will get a text when it is ready.")
    assert stack.recorded == [("radarr", HAIL_MARY_TMDB, "Project Hail Mary (2026)")]
    assert not stack.radarr.requests_to("movie", "POST")


def test_an_add_the_library_has_without_a_way_to_text_back_promises_nothing(stack):
    ctx = stack.context(sonarr=False)
    ctx.record_request = None
    assert call(ctx, "add_media", tmdb_id=DUNE_TWO_TMDB)["message"] == (
        "Dune: Part Two (2024) is already in the library.")


def test_series_tools_without_sonarr(stack):
    result = call(stack.context(sonarr=False), "notify_me", kind="series", id=1)
    assert result == {"error": "Sonarr is not set up on this server"}


def routes(fake) -> list[tuple[str, str]]:
    return [(r.method, r.path.removeprefix("/api/v3/")) for r in fake.requests]


def test_search_and_add_read_each_setting_once_in_a_fresh_process(stack):
    ctx = stack.context(sonarr=False)
    call(ctx, "search_media", query="dune", kind="movie")
    assert call(ctx, "add_movie", tmdb_id=DUNE_1984_TMDB)["ok"]
    assert routes(stack.radarr) == [   # the search reads the two Dunes the library has
        ("GET", "system/status"), ("GET", "movie/lookup"), ("GET", "movie/1"),
        ("GET", "movie/2"), ("GET", "movie/lookup"), ("GET", "rootfolder"),
        ("GET", "qualityprofile"), ("POST", "movie")]


def test_search_and_add_is_three_requests_once_settings_are_cached(stack):
    """The cached root folders and profiles serve later adds: lookup, lookup, POST."""
    client = stack.client("radarr")
    ctx = stack.context(sonarr=False, radarr=client)
    call(ctx, "add_movie", tmdb_id=1170608)          # another movie earlier in the day
    stack.radarr.requests.clear()
    call(ctx, "search_media", query="dune 1984", kind="movie")   # none of it in the library
    result = call(ctx, "add_movie", tmdb_id=DUNE_1984_TMDB)
    assert result["title"] == "Dune (1984)" and result["searching"]
    assert routes(stack.radarr) == [("GET", "movie/lookup"), ("GET", "movie/lookup"),
                                    ("POST", "movie")]
    posted = stack.radarr.requests[-1].body
    assert (posted["rootFolderPath"], posted["qualityProfileId"]) == ("/movies", 1)
    assert posted["addOptions"] == {"searchForMovie": True} and posted["monitored"]


def test_a_profile_created_after_caching_is_found_with_one_refetch(stack):
    client = stack.client("radarr")
    ctx = stack.context(sonarr=False, radarr=client)
    call(ctx, "add_movie", tmdb_id=1170608)
    stack.radarr.quality_profiles.append({**stack.radarr.quality_profiles[0], "id": 99,
                                          "name": "Kids"})
    stack.radarr.requests.clear()
    assert call(ctx, "add_movie", tmdb_id=DUNE_1984_TMDB, quality_profile="kids")["ok"]
    assert routes(stack.radarr) == [("GET", "movie/lookup"), ("GET", "qualityprofile"),
                                    ("POST", "movie")]
    assert stack.radarr.requests[-1].body["qualityProfileId"] == 99


def test_an_unknown_profile_still_lists_the_real_ones(stack):
    client = stack.client("radarr")
    ctx = stack.context(sonarr=False, radarr=client)
    call(ctx, "add_movie", tmdb_id=1170608)
    result = call(ctx, "add_movie", tmdb_id=DUNE_1984_TMDB, quality_profile="8K")
    assert result["error"].startswith("Radarr has no quality profile '8K'; it has: Any, SD")
    assert stack.radarr.requests_to("movie", "POST")[-1].body["tmdbId"] == 1170608
