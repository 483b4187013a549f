"""Posters by MMS ([sms] posters): attached when a reply asks the person to choose between
titles a search found, or confirms an add; at most three, http(s) only, in the order the
reply names them; never when turned off; the text is the same either way."""

import pytest

from mediabot import db
from mediabot.posters import Offered, choose_posters, web_urls
from mediabot.sender import Backoff, Sender, build_twilio_client
from tests.conftest import MEMBER, make_config
from tests.test_household import house, sent_to  # noqa: F401  (the fixture)
from tests.test_web import settle, text

TMDB = "https://image.tmdb.org/t/p/original/movie/{}/posters/65f2a8c1d4e6b.jpg"
TVDB = "https://artworks.thetvdb.com/banners/v4/series/{}/posters/65f2a8c1d4e6b.jpg"
DUNE_1984, DUNE_2021, DUNE_TWO = (TMDB.format(slug) for slug in
                                  ("dune-841", "dune-438631", "dune-part-two-693134"))
CHOOSE = "Which one: Dune (1984), Dune (2021) or Dune: Part Two?"


def turn(daemon, fake_llm, calls, reply, body="get dune"):
    fake_llm.enqueue_tool_calls(calls)
    fake_llm.enqueue_text(reply)
    text(daemon.app.test_client(), body, sender=MEMBER)
    settle(daemon)


def sent(fake_twilio):
    [message] = [m for m in fake_twilio.sent if m["to"] == MEMBER]
    return message


def test_a_question_between_titles_carries_their_posters_in_the_order_named(
        house, fake_llm, fake_twilio):
    daemon = house(sms={"posters": True})
    turn(daemon, fake_llm, [("search_media", {"query": "dune", "kind": "movie"})], CHOOSE)
    message = sent(fake_twilio)
    assert message["body"] == CHOOSE
    assert message["media_urls"] == [DUNE_1984, DUNE_2021, DUNE_TWO]
    assert message["num_media"] == "3" and message["sid"].startswith("MM")
    tool = db.Message.get(db.Message.role == "tool").content
    assert "http" not in tool and "_poster" not in tool, "the model never sees poster URLs"


def test_posters_off_by_default_send_the_same_text_alone(house, fake_llm, fake_twilio):
    daemon = house()
    turn(daemon, fake_llm, [("search_media", {"query": "dune", "kind": "movie"})], CHOOSE)
    message = sent(fake_twilio)
    assert (message["body"], message["media_urls"], message["num_media"]) == (CHOOSE, [], "0")
    assert fake_twilio.mms() == []


def test_never_more_than_three_posters(house, fake_llm, fake_twilio):
    daemon = house(sms={"posters": True})
    reply = ("Which one: The Office (2005), The Office (IN), The Office (PL), "
             "The Office (SA) or The Office (DE)?")
    turn(daemon, fake_llm, [("search_media", {"query": "the office", "kind": "series"})],
         reply, body="get the office")
    message = sent(fake_twilio)
    assert message["body"] == reply
    assert message["media_urls"] == [TVDB.format("the-office"), TVDB.format("the-office-in"),
                                     TVDB.format("the-office-pl")]


def test_a_confirmed_add_carries_the_added_titles_poster(house, stack, fake_llm, fake_twilio):
    daemon = house(sms={"posters": True})
    turn(daemon, fake_llm, [("add_movie", {"tmdb_id": 841})],
         "Added Dune (1984); I'll text you when it's ready.")
    assert stack.has("movie", 841)
    message = sent(fake_twilio)
    assert message["body"] == "Added Dune (1984); I'll text you when it's ready."
    assert message["media_urls"] == [DUNE_1984]


def test_no_posters_for_a_statement_or_a_single_hit(house, fake_llm, fake_twilio):
    daemon = house(sms={"posters": True})
    turn(daemon, fake_llm, [("search_media", {"query": "dune", "kind": "movie"})],
         "We have Dune (2021) already.")
    assert sent(fake_twilio)["media_urls"] == []


def test_an_mms_waiting_in_the_outbox_keeps_its_posters_after_a_restart(
        fake_llm, fake_twilio, tmp_path, clock):
    config = make_config(llm_url=fake_llm.url, twilio_url=fake_twilio.url,
                         db_path=str(tmp_path / "m.db"))
    db.open_database(config.database.path)
    fake_twilio.fail_next(503, times=2)
    first = Sender(build_twilio_client(config.twilio), config.twilio, clock=clock,
                   backoff=Backoff(attempts=2, base_seconds=0))
    row = first.send(MEMBER, CHOOSE, media_urls=[DUNE_1984, DUNE_2021])
    assert row.status == "pending" and fake_twilio.sent == []
    db.database.close()

    db.open_database(config.database.path)     # a new process finds the row pending
    clock.advance(minutes=5)
    second = Sender(build_twilio_client(config.twilio), config.twilio, clock=clock)
    assert second.deliver_due() == 1
    assert (sent(fake_twilio)["body"], sent(fake_twilio)["media_urls"]) == \
        (CHOOSE, [DUNE_1984, DUNE_2021])
    db.database.close()


def test_the_sender_drops_what_twilio_should_not_fetch():
    assert web_urls(["https://a/1.jpg", "file:///etc/passwd", "javascript:x", "http://b/2.jpg",
                     "https://a/1.jpg", "https://c/3.jpg", "https://d/4.jpg"]) == \
        ["https://a/1.jpg", "http://b/2.jpg", "https://c/3.jpg"]


HITS = [Offered("Dune", 2021, "https://x/2021.jpg"),
        Offered("Dune: Part Two", 2024, "https://x/two.jpg"),
        Offered("Dune", 1984, "https://x/1984.jpg"),
        Offered("Jodorowsky's Dune", 2013, None)]


@pytest.mark.parametrize("reply, posters", [
    (CHOOSE, ["https://x/1984.jpg", "https://x/2021.jpg", "https://x/two.jpg"]),
    ("Dune (1984) or Dune: Part Two?", ["https://x/1984.jpg", "https://x/two.jpg"]),
    ("Which year did you mean?", ["https://x/2021.jpg", "https://x/two.jpg",
                                  "https://x/1984.jpg"]),
    ("Dune (2021) is in the library.", []),
])
def test_choose_posters_follows_the_reply(reply, posters):
    assert choose_posters(HITS, [], reply) == posters


def test_an_add_wins_over_a_question():
    assert choose_posters(HITS, ["https://x/added.jpg"], "Anything else?") == \
        ["https://x/added.jpg"]
