"""search_again, the tool (``arr/tools/catalog.py``), against the fake Sonarr and Radarr: why a
library title is missing or stuck, from their own status, and a new search through their
command API only when it can help."""

from mediabot.arr.searches import SearchLimit
from mediabot.trial.sim.arr_fixtures import ARRIVAL_TMDB, SEVERANCE_TVDB
from tests.fakes.arr_stack import call_tool


def test_missing_episodes_not_queued_get_a_season_search(stack):
    stack.sonarr.queue = []     # the downloads failed and were removed
    result = call_tool(stack.context(), "search_again", kind="series", id=SEVERANCE_TVDB)
    assert result == {"searched": True, "message": "Severance (2022): season 2: 6 aired "
                      "episodes with no release found yet. Asked Sonarr to search for it "
                      "again."}
    [command] = stack.sonarr.commands
    assert (command["name"], command["body"]["seriesId"], command["body"]["seasonNumber"]) == \
        ("SeasonSearch", 2, 2)


def test_nothing_missing_and_not_in_the_library(stack):
    ctx = stack.context()
    assert call_tool(ctx, "search_again", kind="series", id=73244)["message"] == (
        "The Office (2005): every aired episode is downloaded. Not searched again: nothing "
        "is missing.")
    assert call_tool(ctx, "search_again", kind="movie", id=841) == {
        "error": "Dune (1984) is not in the library"}


def test_a_search_radarr_could_not_start_does_not_use_up_the_window(stack, database, clock):
    ctx = stack.context()
    ctx.searches = SearchLimit(6, clock)
    stack.radarr.command_status = 503
    assert call_tool(ctx, "search_again", kind="movie", id=ARRIVAL_TMDB) == {
        "error": "Radarr had a problem (503); its search service may be down, try again later"}
    stack.radarr.command_status = None
    assert call_tool(ctx, "search_again", kind="movie", id=ARRIVAL_TMDB)["searched"] is True
