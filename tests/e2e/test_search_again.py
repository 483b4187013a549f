"""search_again: why a library title is missing or stuck, from Sonarr/Radarr's own status,
and a new search (their command API) at most once per title in [requests]
search_again_hours, whoever asks and across a restart."""

import pytest

from mediabot.arr.searches import SearchLimit
from mediabot.trial.sim.arr import API_KEY
from mediabot.trial.sim.arr_fixtures import ARRIVAL_TMDB, HAIL_MARY_TMDB, SEVERANCE_TVDB
from tests.fakes.arr_stack import call_tool
from tests.support import ADMIN, MEMBER, ask_why, sent_to

SEARCHED = ("Arrival (2016): no release found yet (out since 2017-03-14, physical). "
            "Asked Radarr to search for it again.")


def test_a_stalled_download_is_explained_in_sonarrs_words_and_not_searched(
        house, stack, fake_llm, fake_twilio):
    daemon = house()
    reply = ask_why(daemon, fake_llm, "series", SEVERANCE_TVDB)
    assert reply == ("Severance (2022): S02E05 downloading, 63%, 12 min left; S02E06 stuck at "
                     "0%: The download is stalled with no connections; S02E07-E10 downloading, "
                     "81%, 48 min left. Not searched again: what is missing is already in the "
                     "download queue.")
    assert sent_to(fake_twilio, MEMBER) == [reply]
    assert stack.sonarr.commands == []


def test_a_missing_movie_is_searched_once_per_window_whoever_asks(house, stack, fake_llm,
                                                                   fake_twilio, clock):
    daemon = house(search_again_hours=6)
    assert ask_why(daemon, fake_llm, "movie", ARRIVAL_TMDB) == SEARCHED
    [command] = stack.radarr.commands
    assert (command["name"], command["body"]["movieIds"], command["status"]) == \
        ("MoviesSearch", [4], "queued")

    clock.advance(hours=2)
    again = ask_why(daemon, fake_llm, "movie", ARRIVAL_TMDB, sender=ADMIN)
    assert again == ("Arrival (2016): no release found yet (out since 2017-03-14, physical). "
                     "It was searched for again recently; it can be searched again from "
                     "Mon 2026-11-23 02:00 UTC.")
    assert len(stack.radarr.commands) == 1, "the second ask reached no indexer"

    clock.advance(hours=4)
    assert ask_why(daemon, fake_llm, "movie", ARRIVAL_TMDB, sender=ADMIN) == SEARCHED
    assert len(stack.radarr.commands) == 2


def test_the_limit_holds_across_a_restart(house, daemon_for, stack, fake_llm, fake_twilio):
    first = house()
    ask_why(first, fake_llm, "movie", ARRIVAL_TMDB)
    first.stop()
    second = daemon_for(   # the same database file, a new process's worth of objects
        sonarr={"url": stack.servers["sonarr"].url, "api_key": API_KEY},
        radarr={"url": stack.servers["radarr"].url, "api_key": API_KEY})
    assert "can be searched again from" in ask_why(second, fake_llm, "movie", ARRIVAL_TMDB)
    assert len(stack.radarr.commands) == 1


def test_waiting_for_the_release_date_searches_nothing(house, stack, fake_llm):
    daemon = house()
    assert ask_why(daemon, fake_llm, "movie", HAIL_MARY_TMDB) == (
        "Project Hail Mary (2026): waiting for its release date (digital release Wed "
        "2026-11-25). Not searched again: there is nothing to find before then.")
    assert stack.radarr.commands == []


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


@pytest.mark.parametrize("hours, later, allowed", [(6, 5, False), (6, 6, True), (0, 0, True)])
def test_search_limit_per_title(database, clock, hours, later, allowed):
    limit = SearchLimit(hours, clock)
    assert limit.claim("radarr", 1) is None
    assert limit.claim("sonarr", 1) is None, "each service's ids are their own"
    clock.advance(hours=later)
    assert (SearchLimit(hours, clock).claim("radarr", 1) is None) == allowed
