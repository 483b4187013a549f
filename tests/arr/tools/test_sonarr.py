"""Series tools through arrapi against the fake Sonarr (v4 unless a test says v3)."""

import datetime as dt
import json
from dataclasses import replace

import pytest

from mediabot.arr.tools import AddRequest, describe_action, get_tool, run_tool
from mediabot.text.language import load
from mediabot.trial.sim.arr_fixtures import OFFICE_TVDB, OFFICE_UK_TVDB, SEVERANCE_TVDB
from tests.fakes.arr_stack import ArrStack
from tests.fakes.arr_stack import call_tool as call


@pytest.fixture
def stack():
    stack = ArrStack()
    yield stack
    stack.close()


def test_search_lists_few_compact_hits_with_library_flag(stack):
    result = call(stack.context(radarr=False), "search_media", query="the office", kind="series")
    hits = result["results"]
    assert hits[0]["title"] == "The Office" and hits[0]["in_library"] is True
    assert hits[0]["id"] == f"tv{OFFICE_TVDB}" and len(hits[0]["seasons"]) == 9   # S1 6/6 ...
    assert all(hit["id"].startswith("tv") and "kind" not in hit for hit in hits)
    assert 2 <= len(hits) <= 5 and not any(hit["in_library"] for hit in hits[1:])
    assert all(len(hit["overview"]) <= 160 for hit in hits[1:])
    assert {hit["seasons"] for hit in hits[1:]} <= {1, 2, 3}, "how many, to ask which"


def test_search_result_is_under_a_tenth_of_the_lookup(stack):
    text = run_tool(get_tool("search_media"), stack.context(radarr=False),
                    '{"query": "office"}').for_model()
    raw = stack.sonarr.requests_to("series/lookup")[-1].response_bytes
    assert len(text.encode()) < raw / 10


def test_nothing_found_is_said_plainly(stack):
    result = call(stack.context(radarr=False), "search_media", query="zzqx", kind="series")
    assert result == {"error": "nothing matches 'zzqx'"}


def test_search_backend_down_is_explained(stack):
    stack.sonarr.lookup_status = 503
    result = call(stack.context(radarr=False), "search_media", query="office")
    assert "Sonarr had a problem (503)" in result["error"]


def test_search_counts_episodes_and_says_what_is_missing(stack):
    result = call(stack.context(radarr=False), "search_media", query="severance")
    [show] = result["results"]
    assert show["in_library"] and show["episodes_on_disk"] == "13/19"
    assert show["seasons"] == ["S1 9/9", "S2 4/10"]
    assert show["missing"] == "S2: 6 aired episodes" and show["size"] == "27 GB"


def test_a_search_for_a_title_not_added_offers_matches(stack):
    result = call(stack.context(radarr=False), "library_status", query="office girls")
    assert result["results"][0]["title"] == "Office Girls"
    assert not any(hit["in_library"] for hit in result["results"])


def test_add_series_monitors_the_asked_seasons_and_searches(stack):
    result = call(stack.context(radarr=False), "add_series", tvdb_id=OFFICE_UK_TVDB, seasons=[2])
    assert result["ok"] and result["monitored_seasons"] == [2]
    body = stack.sonarr.requests_to("series", "POST")[-1].body
    assert body["addOptions"]["searchForMissingEpisodes"] is True
    assert [s["monitored"] for s in body["seasons"]] == [False, True]
    assert body["rootFolderPath"] == "/tv" and body["qualityProfileId"] == 1
    assert stack.recorded == [("sonarr", OFFICE_UK_TVDB, "The Office (UK, 2001)")]


@pytest.mark.parametrize("seasons, monitored", [("all", [True, True]), ("latest", [False, True]),
                                                ("future", [False, True])])
def test_add_series_season_choices(stack, seasons, monitored):
    call(stack.context(radarr=False), "add_series", tvdb_id=OFFICE_UK_TVDB, seasons=seasons)
    added = stack.sonarr.library[-1]
    assert [s["monitored"] for s in added["seasons"]] == monitored


def test_add_series_with_a_season_that_does_not_exist(stack):
    result = call(stack.context(radarr=False), "add_series", tvdb_id=OFFICE_UK_TVDB, seasons=[7])
    assert result == {"error": "The Office (UK) has no season 7; its seasons are 1-2"}
    assert not stack.sonarr.requests_to("series", "POST")


def test_add_series_uses_the_configured_profile_and_rejects_unknown_ones(stack):
    ctx = stack.context(radarr=False, quality_profile="HD-1080p")
    call(ctx, "add_series", tvdb_id=OFFICE_UK_TVDB)
    assert stack.sonarr.requests_to("series", "POST")[-1].body["qualityProfileId"] == 4
    result = call(ctx, "add_series", tvdb_id=SEVERANCE_TVDB + 1, quality_profile="HD-4K")
    assert "no series has TVDB id" in result["error"]
    result = call(ctx, "add_series", tvdb_id=438781, quality_profile="HD-4K")
    assert result["error"] == ("Sonarr has no quality profile 'HD-4K'; it has: Any, SD, "
                               "HD-720p, HD-1080p, Ultra-HD, HD - 720p/1080p")


def test_add_series_with_a_missing_root_folder(stack):
    result = call(stack.context(radarr=False, root_folder="/data/tv"), "add_series",
                  tvdb_id=OFFICE_UK_TVDB)
    assert result["error"] == ("Sonarr has no root folder '/data/tv'; it has: /tv "
                               "(fix [sonarr] root_folder)")


def test_add_series_when_the_root_folder_is_unmounted(stack):
    stack.sonarr.root_folders[0]["accessible"] = False
    result = call(stack.context(radarr=False), "add_series", tvdb_id=OFFICE_UK_TVDB)
    assert result["error"] == "Sonarr refused: Root folder '/tv' does not exist"
    assert stack.recorded == []


def test_adding_a_complete_series_again(stack):
    result = call(stack.context(radarr=False), "add_media", tvdb_id=OFFICE_TVDB)
    assert result == {"ok": True, "added": False,
                      "message": "The Office (2005) is already in the library and ready to "
                                 "watch."}
    assert stack.recorded == [] and not stack.sonarr.requests_to("series", "POST")


def test_adding_an_incomplete_series_again_still_notifies(stack):
    result = call(stack.context(radarr=False), "add_media", tvdb_id=SEVERANCE_TVDB)
    assert result["message"] == ("Severance (2022) is already in the library, not downloaded "
                                 "yet; the user will get a text when it is ready.")
    assert stack.recorded == [("sonarr", SEVERANCE_TVDB, "Severance (2022)")]
    assert not stack.sonarr.requests_to("series", "POST")


def test_adding_a_series_that_has_every_aired_episode_tells_of_the_next_ones(stack):
    """A series still airing with nothing missing: the asker hears when new episodes land
    (what notify_me did for it)."""
    severance = next(s for s in stack.sonarr.library if s["tvdbId"] == SEVERANCE_TVDB)
    stats = severance["statistics"]
    stats["episodeFileCount"] = stats["episodeCount"]
    result = call(stack.context(radarr=False), "add_media", tvdb_id=SEVERANCE_TVDB)
    assert result["message"] == ("Severance (2022) is already in the library with every aired "
                                 "episode; the user will get a text when new episodes arrive.")
    assert stack.recorded == [("sonarr", SEVERANCE_TVDB, "Severance (2022)")]


def test_sonarr_v3_sends_the_first_language_profile(stack):
    v3 = ArrStack(sonarr_version="3.0.10.1567")
    try:
        result = call(v3.context(radarr=False), "add_series", tvdb_id=OFFICE_UK_TVDB)
        assert result["ok"]
        assert v3.sonarr.requests_to("series", "POST")[-1].body["languageProfileId"] == 1
        assert v3.sonarr.requests_to("languageprofile")
    finally:
        v3.close()


def test_sonarr_v4_asks_for_no_language_profile(stack):
    assert call(stack.context(radarr=False), "add_series", tvdb_id=OFFICE_UK_TVDB)["ok"]
    assert not stack.sonarr.requests_to("languageprofile")


def test_remove_asks_with_size_then_deletes(stack):
    ctx = stack.context("admin", radarr=False)
    args = {"kind": "series", "id": OFFICE_TVDB, "delete_files": True}
    question = describe_action(get_tool("remove_media"), ctx, json.dumps(args))
    assert question == "Remove The Office (2005) and delete its 62 GB of files?"
    assert stack.sonarr.deleted == []
    assert call(ctx, "remove_media", **args) == {
        "ok": True, "message": "Removed The Office (2005) and deleted its files."}
    assert stack.sonarr.deleted == [{"id": 1, "title": "The Office", "deleteFiles": True}]


def test_remove_keeping_files_and_of_something_not_added(stack):
    ctx = stack.context("admin", radarr=False)
    tool = get_tool("remove_media")
    assert describe_action(tool, ctx, {"kind": "series", "id": OFFICE_TVDB}) == (
        "Remove The Office (2005) from the library, keeping its files?")
    result = call(ctx, "remove_media", kind="series", id=OFFICE_UK_TVDB)
    assert result == {"error": "The Office (UK, 2001) is not in the library"}


def test_queue_names_series_and_episodes_and_groups_season_packs(stack):
    result = call(stack.context(radarr=False), "download_queue")
    first, stalled, pack = result["downloads"]
    assert first == {"title": "Severance", "progress": "63%", "time_left": "12 min",
                     "status": "downloading", "episodes": "S02E05"}
    assert stalled["warning"] == "The download is stalled with no connections"
    assert pack["episodes"] == "S02E07-E10" and result["total"] == 3


def test_upcoming_lists_episodes_airing(stack):
    result = call(stack.context(radarr=False), "upcoming", days=7)
    [episode] = result["episodes"]
    assert episode["series"] == "Slow Horses" and episode["episode"] == "S05E04"
    assert call(stack.context(radarr=False), "upcoming", days=1)["episodes"] == []


def test_notify_me_by_its_former_name_records_the_request(stack):
    result = call(stack.context(radarr=False), "notify_me", kind="series", id=SEVERANCE_TVDB)
    assert result["ok"] and stack.recorded == [("sonarr", SEVERANCE_TVDB, "Severance (2022)")]
    result = call(stack.context(radarr=False), "notify_me", kind="series", id=OFFICE_TVDB)
    assert "ready to watch" in result["message"] and len(stack.recorded) == 1


def test_sonarr_v3_search_and_add_is_three_requests_once_settings_are_cached():
    """Root folders, quality and language profiles are read once a process, not per add."""
    stack = ArrStack(sonarr_version="3.0.10.1567")
    try:
        client = stack.client("sonarr")
        ctx = stack.context(radarr=False, sonarr=client)
        call(ctx, "add_series", tvdb_id=397360, seasons="latest")      # Dune: Prophecy
        first = [r.path.removeprefix("/api/v3/") for r in stack.sonarr.requests]
        assert first.count("rootfolder") == first.count("qualityprofile") \
            == first.count("languageprofile") == 1
        stack.sonarr.requests.clear()
        call(ctx, "search_media", query="office", kind="series")
        result = call(ctx, "add_series", tvdb_id=OFFICE_UK_TVDB, seasons=[1, 2])
        assert result["monitored_seasons"] == [1, 2]
        assert [(r.method, r.path.removeprefix("/api/v3/")) for r in stack.sonarr.requests] \
            == [("GET", "series/lookup"), ("GET", "series/1"),   # The Office (2005), owned
                ("GET", "series/lookup"), ("POST", "series")]
        assert stack.sonarr.requests[-1].body["languageProfileId"] == 1
    finally:
        stack.close()


def test_search_hands_its_posters_beside_the_result_never_in_it(stack):
    result = run_tool(get_tool("search_media"), stack.context(radarr=False),
                      {"query": "the office", "kind": "series"})
    assert [title for title, _, _ in result.offered] == \
        [hit["title"] for hit in result.data["results"]]
    title, year, poster = result.offered[0]
    assert (title, year) == ("The Office", 2005) and poster.startswith("https://")
    assert "https://" not in result.for_model() and result.error is None


def test_an_add_hands_its_poster_beside_the_result(stack):
    result = run_tool(get_tool("add_series"), stack.context(radarr=False),
                      {"tvdb_id": OFFICE_UK_TVDB, "seasons": [2]})
    assert result.message.startswith("Added The Office (UK, 2001);")
    assert len(result.added) == 1 and result.added[0].startswith("https://")
    assert "https://" not in result.for_model()


def test_the_gate_is_asked_with_one_add_request_naming_what_the_rules_count(stack):
    asked = []
    def gate(request):
        asked.append(request)
        return {"ok": True, "waiting_for_approval": True, "request": 1}
    ctx = stack.context(radarr=False)
    ctx.gate = gate
    result = run_tool(get_tool("add_series"), ctx, {"tvdb_id": OFFICE_UK_TVDB})
    assert asked == [AddRequest("sonarr", OFFICE_UK_TVDB, "The Office (UK, 2001)",
                                "add_media", {"id": f"tv{OFFICE_UK_TVDB}", "seasons": "all"}, 2)]
    assert result.data == {"ok": True, "waiting_for_approval": True, "request": 1}
    assert not stack.sonarr.requests_to("series", method="POST")


@pytest.mark.parametrize("seasons, distinct", [
    ([1, 1], [1]), ([2, 1, 2], [1, 2]), ([3], [3]), ("all", "all"), ("latest", "latest")])
def test_seasons_are_a_set(seasons, distinct):
    from mediabot.arr.tools.sonarr import season_set

    assert season_set(seasons) == distinct


@pytest.mark.parametrize("seasons, counted", [([1, 1], 1), ([2, 1, 2], 2), ([1, 2], 2),
                                              ("all", 9), ("latest", 1)])
def test_a_season_named_twice_is_counted_once(seasons, counted):
    from mediabot.arr.tools.catalog import seasons_counted

    assert seasons_counted(seasons, 9) == counted


def test_a_season_named_twice_is_asked_added_and_monitored_once(stack):
    """Issue 27: the model repeats season 2; the rules are asked about one season, with the
    arguments an approval would run again as a set, and Sonarr is sent season 2 once."""
    asked = []
    ctx = stack.context(radarr=False)
    ctx.gate = asked.append   # None: the add runs now
    result = call(ctx, "add_series", tvdb_id=OFFICE_UK_TVDB, seasons=[2, 2, 2])
    assert asked == [AddRequest("sonarr", OFFICE_UK_TVDB, "The Office (UK, 2001)",
                                "add_media", {"id": f"tv{OFFICE_UK_TVDB}", "seasons": [2]}, 1)]
    assert result["monitored_seasons"] == [2]
    body = stack.sonarr.requests_to("series", "POST")[-1].body
    assert [s["monitored"] for s in body["seasons"]] == [False, True]


def test_a_spanish_households_tool_results_carry_spanish_dates_and_sizes():
    """The asker's language reaches the tools (ToolContext.language): the air dates, the
    release dates and the removal question's size are in its locale; the rest stays
    English for the model. The fakes' dates follow ``now``, pinned here."""
    stack = ArrStack(now=dt.datetime(2026, 11, 25, 2, 8, tzinfo=dt.UTC))
    try:
        _spanish_results(replace(stack.context("admin"), language=load("es")))
    finally:
        stack.close()


def _spanish_results(ctx):
    result = call(ctx, "upcoming", days=30)
    assert [e["airs"] for e in result["episodes"]] == [
        "vie, 27 nov 2026 02:08 UTC", "vie, 4 dic 2026 02:08 UTC", "vie, 11 dic 2026 02:08 UTC"]
    assert result["movies"][0]["date"] == "sáb, 28 nov 2026"
    [movie] = call(ctx, "search_media", query="project hail mary")["results"]
    assert movie["missing"] == "in cinemas since 16 oct 2026; digital release 28 nov 2026"
    args = {"kind": "series", "id": OFFICE_TVDB, "delete_files": True}
    assert describe_action(get_tool("remove_media"), ctx, args) == (
        "¿Quito The Office (2005) y borro sus 62 GB de archivos?")
