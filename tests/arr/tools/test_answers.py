"""Each tool's rule for answering the person itself (``Tool.direct``, ``arr/tools/answers``):
the text where the result is the whole answer, in the person's language and within the
characters the text may take; None where the model must word it. The results are shaped as
the tools return them (``download_queue``, ``upcoming``, ``search_media``)."""

import pytest

from mediabot.arr.tools import ToolContext, ToolResult, direct_answer, get_tool
from mediabot.arr.tools.answers import queue_answer, status_answer, upcoming_answer
from mediabot.text.language import load

EN, DE = load("en"), load("de")
SEVERANCE = {"title": "Severance", "progress": "63%", "time_left": "12 min",
             "status": "downloading", "episodes": "S02E05"}
STALLED = {"title": "Severance", "progress": "0%", "time_left": "1 h 35 min",
           "status": "warning", "episodes": "S02E06",
           "warning": "The download is stalled with no connections"}
DUNE_TWO = {"title": "Dune: Part Two (2024)", "progress": "63%", "time_left": "2 h 15 min",
            "status": "downloading"}
QUEUE = {"downloads": [SEVERANCE, STALLED, DUNE_TWO], "total": 3}
WEEK = {"days": 7,
        "episodes": [{"series": "Slow Horses", "episode": "S05E04", "title": "Chapter 4",
                      "airs": "Thu 2026-12-03 23:10 UTC", "downloaded": False}],
        "movies": [{"title": "Project Hail Mary (2026)", "release": "digital",
                    "date": "Fri 2026-12-04", "downloaded": False}]}
SLOW_HORSES = {"id": "tv392256", "title": "Slow Horses", "year": 2022,
               "in_library": True, "monitored": True, "status": "continuing",
               "episodes_on_disk": "27/30", "size": "38 GB",
               "seasons": ["S1 6/6", "S2 6/6", "S3 6/6", "S4 6/6", "S5 3/6"],
               "missing": "nothing", "next_episode_airs": "Thu 2026-12-03 23:10 UTC"}
SEVERANCE_STATUS = {**SLOW_HORSES, "title": "Severance", "id": "tv371980",
                    "episodes_on_disk": "13/19", "missing": "S2: 6 aired episodes"}
DUNE = {"id": "m438631", "title": "Dune", "year": 2021, "in_library": True,
        "monitored": True, "downloaded": True, "size": "21 GB", "quality": "Bluray-2160p"}
DUNE_1984 = {"id": "m841", "title": "Dune", "year": 1984,
             "overview": "In the year 10,191 ...", "in_library": False}


def test_the_queue_is_answered_with_each_download_its_progress_and_time_left():
    assert queue_answer(QUEUE, {}, EN, 480) == (
        "3 downloads: Severance S02E05 63%, 12 min left; Severance S02E06 stuck at 0%: The "
        "download is stalled with no connections; Dune: Part Two (2024) 63%, 2 h 15 min left.")


def test_an_empty_queue_says_so_in_the_persons_language():
    empty = {"downloads": [], "total": 0, "message": "nothing is downloading"}
    assert queue_answer(empty, {}, EN, 480) == "Nothing is downloading right now."
    assert queue_answer(empty, {}, DE, 480) == "Gerade wird nichts heruntergeladen."


def test_the_queue_in_german_keeps_the_titles_and_the_servers_words():
    assert queue_answer({"downloads": [SEVERANCE, STALLED], "total": 2}, {}, DE, 480) == (
        "2 Downloads: Severance S02E05 63%, noch 12 min; Severance S02E06 hängt bei 0%: The "
        "download is stalled with no connections.")


def test_what_does_not_fit_the_text_is_counted_not_cut():
    text = queue_answer({"downloads": [SEVERANCE, STALLED, DUNE_TWO], "total": 9}, {}, EN, 120)
    assert text == "9 downloads: Severance S02E05 63%, 12 min left; and 8 more."
    assert len(text) <= 120


def test_a_queue_status_other_than_downloading_is_named_in_the_language():
    paused = {**DUNE_TWO, "status": "paused"}
    assert queue_answer({"downloads": [paused], "total": 1}, {}, DE, 480) == \
        "1 Download: Dune: Part Two (2024): pausiert."


def test_a_server_that_did_not_answer_leaves_the_queue_to_the_model():
    assert queue_answer({**QUEUE, "warnings": ["Radarr is not answering"]}, {}, EN, 480) is None
    assert queue_answer({"error": "neither Sonarr nor Radarr is set up"}, {}, EN, 480) is None


def test_what_is_coming_lists_episodes_and_releases():
    assert upcoming_answer(WEEK, {"days": 7}, EN, 480) == (
        "Coming in the next 7 days: Slow Horses S05E04, Thu 2026-12-03 23:10 UTC; Project "
        "Hail Mary (2026) digital release Fri 2026-12-04.")
    assert upcoming_answer({"days": 7, "episodes": [], "movies": []}, {"days": 7}, EN, 480) \
        == "Nothing new in the next 7 days."
    assert upcoming_answer({**WEEK, "warnings": ["Sonarr is not answering"]}, {"days": 7},
                           EN, 480) is None


def test_what_is_coming_counts_beyond_what_the_tool_listed():
    text = upcoming_answer({**WEEK, "episodes_total": 12}, {"days": 14}, EN, 480)
    assert text.endswith("digital release Fri 2026-12-04; and 11 more.")


@pytest.mark.parametrize("asked, query, hit, expected", [
    ("do we have slow horses?", "slow horses", SLOW_HORSES,
     "Slow Horses (2022) is in the library with every aired episode (27 of 30 episodes, "
     "38 GB). The next episode airs Thu 2026-12-03 23:10 UTC."),
    ("is it all downloaded?", "slow horses", SLOW_HORSES,
     "Slow Horses (2022) is in the library with every aired episode (27 of 30 episodes, "
     "38 GB). The next episode airs Thu 2026-12-03 23:10 UTC."),
    ("Do we have Dune?", "Dune", DUNE, "Dune (2021) is in the library and ready to watch "
                                       "(21 GB)."),
    ("is dune (2021) downloaded?", "dune 2021", DUNE,
     "Dune (2021) is in the library and ready to watch (21 GB)."),
    # a title the server gave no id keeps its kind beside it
    ("Do we have Dune?", "Dune", {**{k: v for k, v in DUNE.items() if k != "id"},
                                  "kind": "movie"},
     "Dune (2021) is in the library and ready to watch (21 GB)."),
])
def test_the_status_of_the_one_library_title_named_is_the_answer(asked, query, hit, expected):
    assert status_answer({"results": [hit]}, {"query": query}, EN, 480, asked) == expected


def test_a_status_question_in_the_persons_language_is_answered_in_it():
    assert status_answer({"results": [DUNE]}, {"query": "dune"}, DE, 480,
                         "Haben wir Dune schon?") == \
        "Dune (2021) ist in der Bibliothek und bereit zum Anschauen (21 GB)."


@pytest.mark.parametrize("why, data, query, asked", [
    ("several match", {"results": [DUNE, DUNE_1984]}, "dune", "do we have dune?"),
    ("more matched than shown", {"results": [DUNE], "more": 3}, "dune", "do we have dune?"),
    ("not in the library", {"results": [DUNE_1984]}, "dune", "do we have dune?"),
    ("episodes missing", {"results": [SEVERANCE_STATUS]}, "severance",
     "do we have severance?"),
    ("not downloaded", {"results": [{**DUNE, "downloaded": False,
                                     "missing": "not released yet"}]}, "dune",
     "do we have dune?"),
    ("not the title asked for", {"results": [SLOW_HORSES]}, "that spy show",
     "do we have that spy show?"),
    ("a server did not answer", {"results": [DUNE], "warnings": ["Sonarr is down"]}, "dune",
     "do we have dune?"),
    ("a question the status does not answer", {"results": [SLOW_HORSES]}, "slow horses",
     "is slow horses any good?"),
    ("nothing matched", {"error": "nothing matches 'zorblax'"}, "zorblax",
     "do we have zorblax?"),
])
def test_a_status_that_needs_words_is_left_to_the_model(why, data, query, asked):
    assert status_answer(data, {"query": query}, EN, 480, asked) is None, why


def test_the_tools_that_need_words_have_no_rule():
    rules = {name: get_tool(name).direct for name in
             ("search_media", "add_media", "remove_media", "download_queue", "upcoming",
              "search_again")}
    assert {name for name, rule in rules.items() if rule is not None} == {
        "search_media", "download_queue", "upcoming"}


def test_the_registry_gives_no_answer_for_an_error_and_scrubs_what_it_gives():
    ctx = ToolContext(sonarr=None, radarr=None, language=EN)
    queue = get_tool("download_queue")
    failed = ToolResult({"error": "Sonarr is not answering"})
    assert direct_answer(queue, ctx, "{}", failed, 480, "what's downloading?") is None
    leaky = {"downloads": [{**STALLED, "warning": "http://admin:hunter2@nzb.lan/api failed"}],
             "total": 1}
    text = direct_answer(queue, ctx, "{}", ToolResult(leaky, scrub=lambda t: t.replace(
        "hunter2", "***")), 480, "what's downloading?")
    assert text is not None and "hunter2" not in text and "***" in text
    assert direct_answer(queue, ctx, "not json", ToolResult(QUEUE), 480, "queue?") is None
