"""Weekly quotas through the daemon ([requests] movies_per_week, seasons_per_week): under, at
and over, a new week, admins exempt; a quota counts adds (and adds waiting for an admin),
never a "tell me when it's ready" (since issue 31 an add of a title the library has, which
asks no admin either), and an add after one is counted with its own date and seasons, on
every path that adds."""

import pytest

from mediabot.arr.wanted import record_request
from mediabot.store import db
from mediabot.trial.sim.arr_fixtures import DUNE_TWO_TMDB
from tests.support.asking import ask_for, last_tool_result
from tests.support.household import ADMIN, HAIL_MARY_2, MEMBER, PROPHECY, THREE, UK_OFFICE
from tests.support.texting import settle, text

# path: ([requests] settings, the add, the second add the quota refuses, seasons counted)
ADDS = {
    "movie": ({"movies_per_week": 1}, ("movie", THREE, {}), HAIL_MARY_2, 1),
    "approved movie": ({"movies_per_week": 1, "approval": "members"}, ("movie", THREE, {}),
                       HAIL_MARY_2, 1),
    "season list": ({"seasons_per_week": 1}, ("series", UK_OFFICE, {"seasons": [1]}),
                    PROPHECY, 1),
    "whole series": ({"seasons_per_week": 2}, ("series", UK_OFFICE, {"seasons": "all"}),
                     PROPHECY, 2),
}


def add(daemon, fake_llm, kind: str, external_id: int, extra: dict) -> None:
    tool, key = ("add_movie", "tmdb_id") if kind == "movie" else ("add_series", "tvdb_id")
    ask_for(daemon, fake_llm, tool, {key: external_id, **extra})


@pytest.mark.parametrize("path", list(ADDS))
@pytest.mark.parametrize("notify_first", [False, True], ids=["without notify_me",
                                                             "after notify_me"])
def test_an_add_counts_toward_the_quota_with_its_own_date_and_seasons(
        house, stack, fake_llm, clock, path, notify_first):
    settings, (kind, external_id, extra), second, seasons = ADDS[path]
    daemon = house(**settings)
    if notify_first:      # "tell me when it's ready" for a title not added, on Sunday: what
        # notify_me recorded before issue 31 folded it into add_media (rows in a database)
        record_request(db.User.get(phone=MEMBER).id, "radarr" if kind == "movie" else "sonarr",
                       external_id, "asked to be told", clock())
    clock.advance(days=1)                                   # Monday: a new week
    add(daemon, fake_llm, kind, external_id, extra)
    if settings.get("approval"):
        text(daemon.app.test_client(), "APPROVE 1", sender=ADMIN)
        settle(daemon)
    assert stack.has(kind, external_id)
    row = db.Request.get(db.Request.external_id == external_id)
    assert (row.added_at, row.seasons) == (clock(), seasons if kind == "series" else 0)

    add(daemon, fake_llm, kind, second, {})
    assert not stack.has(kind, second), "the first add used up the week"
    unit = "movie" if kind == "movie" else "season"
    assert last_tool_result(MEMBER)["error"].startswith(
        f"over the weekly limit: Sam has asked for {seasons} {unit}{'s' if seasons > 1 else ''}"
        " this week")


TOLD = {"ok": True, "added": False, "message": "Dune: Part Two (2024) is already in the "
        "library, not downloaded yet; the user will get a text when it is ready."}


@pytest.mark.parametrize("call", [("add_media", {"tmdb_id": DUNE_TWO_TMDB}),
                                  ("notify_me", {"kind": "movie", "id": DUNE_TWO_TMDB})],
                         ids=["add_media", "notify_me, as stored"])
def test_notify_me_never_uses_up_the_week(house, stack, fake_llm, call):
    """"Tell me when Dune: Part Two is ready" (in the library, downloading) is not a movie:
    an add of it registers the asker and counts nothing."""
    daemon = house(movies_per_week=1)
    ask_for(daemon, fake_llm, *call)
    assert last_tool_result(MEMBER) == TOLD
    add(daemon, fake_llm, "movie", THREE, {})
    assert stack.has("movie", THREE), "the week's movie was still free"
    assert "Added Dune: Part Three" in last_tool_result(MEMBER)["message"]


def test_an_add_of_a_title_the_library_has_asks_no_admin(house, stack, fake_llm):
    """With approval for members, "tell me when Dune: Part Two is ready" is not held for an
    admin: nothing is added, so there is nothing to approve."""
    daemon = house(movies_per_week=1, approval="members")
    ask_for(daemon, fake_llm, "add_media", {"tmdb_id": DUNE_TWO_TMDB})
    assert last_tool_result(MEMBER) == TOLD
    assert db.Approval.select().count() == 0
    assert [(r.external_id, r.added_at) for r in db.Request.select()] == [(DUNE_TWO_TMDB, None)]


def test_notify_me_after_an_add_keeps_the_add_counted(house, stack, fake_llm):
    """Asking to be told about a title added this week does not make that add free."""
    daemon = house(movies_per_week=1)
    add(daemon, fake_llm, "movie", THREE, {})
    ask_for(daemon, fake_llm, "notify_me", {"kind": "movie", "id": THREE})
    add(daemon, fake_llm, "movie", HAIL_MARY_2, {})
    assert not stack.has("movie", HAIL_MARY_2)
    assert "over the weekly limit" in last_tool_result(MEMBER)["error"]


# -- seasons are a set (issue 27, point 5) ----------------------------------------------------

def monitored(stack, tvdb_id: int) -> list[int]:
    return [s["seasonNumber"] for s in stack.item("series", tvdb_id)["seasons"]
            if s["monitored"] and s["seasonNumber"] > 0]


def test_a_season_asked_for_twice_is_one_season(serve, stack, fake_llm, fake_twilio):
    """The model repeats a season ([1, 1]): it is one season, added, monitored and counted
    once, so a weekly limit of one is not refused as "2 seasons", and the week is used up."""
    from mediabot.trial.sim.loopback import wait_for
    from tests.support.asking import relay
    from tests.support.sent import sent_to

    daemon = serve(f'\n[[users]]\nphone = "{MEMBER}"\nname = "Sam"\nrole = "member"\n'
                   + stack.toml() + "[requests]\nseasons_per_week = 1\n")
    fake_llm.set_responder(relay)
    fake_llm.enqueue_tool_calls([("add_series", {"tvdb_id": UK_OFFICE, "seasons": [1, 1]})])
    daemon.text("get season 1 of the british office", sender=MEMBER)
    assert wait_for(lambda: len(sent_to(fake_twilio, MEMBER)) == 1, 15)
    assert sent_to(fake_twilio, MEMBER) == [
        "Added The Office (UK, 2001); Sonarr is searching for it. The user will get a text "
        "when it is ready."]
    assert monitored(stack, UK_OFFICE) == [1]

    fake_llm.enqueue_tool_calls([("add_series", {"tvdb_id": PROPHECY, "seasons": [1]})])
    daemon.text("and season 1 of dune prophecy", sender=MEMBER)
    assert wait_for(lambda: len(sent_to(fake_twilio, MEMBER)) == 2, 15)
    assert sent_to(fake_twilio, MEMBER)[1].startswith(
        "Sorry: over the weekly limit: Sam has asked for 1 season this week and the household "
        "limit is 1; the next is possible from ")
    assert not stack.has("series", PROPHECY)


def test_a_repeated_season_waits_for_approval_as_a_set_and_is_counted_once(house, stack,
                                                                          fake_llm):
    """[2, 1, 2] under a limit of two seasons: one request for seasons 1 and 2, which the
    quota counts as two while it waits and after the admin approves it."""
    daemon = house(approval="members", seasons_per_week=2)
    ask_for(daemon, fake_llm, "add_series", {"tvdb_id": UK_OFFICE, "seasons": [2, 1, 2]})
    assert last_tool_result(MEMBER)["waiting_for_approval"] is True
    waiting = db.Approval.get_by_id(1)
    assert waiting.seasons == 2 and '"seasons": [1, 2]' in waiting.arguments
    text(daemon.app.test_client(), "APPROVE 1", sender=ADMIN)
    settle(daemon)
    assert monitored(stack, UK_OFFICE) == [1, 2]
    assert db.Request.get(db.Request.external_id == UK_OFFICE).seasons == 2


@pytest.mark.parametrize("before, allowed", [(0, True), (1, True), (2, False)])
def test_movie_quota_under_at_and_over(house, stack, fake_llm, before, allowed, clock):
    daemon = house(movies_per_week=2)
    member = db.User.get(phone=MEMBER)
    for n in range(before):
        record_request(member.id, "radarr", 100 + n, f"M{n}", clock(), added=True)
    ask_for(daemon, fake_llm, "add_movie", {"tmdb_id": THREE})
    assert stack.has("movie", THREE) == allowed
    result = last_tool_result(MEMBER)
    if not allowed:
        # The tests' clock is Sunday 22 November 2026: the next week starts on Monday 23rd.
        assert result["error"] == ("over the weekly limit: Sam has asked for 2 movies this "
                                   "week and the household limit is 2; the next is possible "
                                   "from Monday 23 November")


def test_quota_frees_up_in_a_new_week_and_admins_are_exempt(house, stack, fake_llm, clock):
    daemon = house(movies_per_week=1, seasons_per_week=2)
    ask_for(daemon, fake_llm, "add_series", {"tvdb_id": UK_OFFICE, "seasons": "all"})
    assert stack.has("series", UK_OFFICE), "two seasons: at the limit"
    ask_for(daemon, fake_llm, "add_series", {"tvdb_id": PROPHECY, "seasons": "all"})
    assert not stack.has("series", PROPHECY)
    assert "has asked for 2 seasons this week" in last_tool_result(MEMBER)["error"]
    ask_for(daemon, fake_llm, "add_series", {"tvdb_id": PROPHECY}, sender=ADMIN)
    assert stack.has("series", PROPHECY), "admins are exempt"
    ask_for(daemon, fake_llm, "add_movie", {"tmdb_id": THREE})
    ask_for(daemon, fake_llm, "add_movie", {"tmdb_id": HAIL_MARY_2})
    assert not stack.has("movie", HAIL_MARY_2)
    clock.advance(days=1)                      # Sunday -> Monday: a new week
    ask_for(daemon, fake_llm, "add_movie", {"tmdb_id": HAIL_MARY_2})
    assert stack.has("movie", HAIL_MARY_2)


def test_waiting_requests_count_toward_the_quota(house, stack, fake_llm):
    daemon = house(approval="members", movies_per_week=1)
    ask_for(daemon, fake_llm, "add_movie", {"tmdb_id": THREE})
    ask_for(daemon, fake_llm, "add_movie", {"tmdb_id": HAIL_MARY_2})
    assert db.Approval.select().count() == 1
    assert "over the weekly limit" in last_tool_result(MEMBER)["error"]
