"""search_again through the daemon: why a library title is missing or stuck, in Sonarr's and
Radarr's own words, and a new search at most once per title in [requests]
search_again_hours, whoever asks and across a restart."""

from mediabot.trial.sim.arr import API_KEY
from mediabot.trial.sim.arr_fixtures import ARRIVAL_TMDB, HAIL_MARY_TMDB, SEVERANCE_TVDB
from tests.support.asking import ask_why
from tests.support.household import ADMIN, MEMBER
from tests.support.sent import sent_to

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
