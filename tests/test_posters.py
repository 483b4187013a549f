"""Posters by MMS ([sms] posters): attached when a reply asks the person to choose between
titles a search found, or confirms an add; at most three, http(s) only, in the order the
reply names them; never when turned off; the text is the same either way."""

import json

import pytest

from mediabot.conversation.posters import Offered, choose_posters
from mediabot.mailbox.delivery import Backoff, Sender
from mediabot.mailbox.twilio_client import build_twilio_client
from mediabot.store import db, migrations
from mediabot.text.public_url import web_urls
from tests.conftest import MEMBER, make_config
from tests.support import settle, text

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
    migrations.open_database(config.database.path)
    fake_twilio.fail_next(503, times=2)
    first = Sender(build_twilio_client(config.twilio), config.twilio, clock=clock,
                   backoff=Backoff(attempts=2, base_seconds=0))
    row = first.send(MEMBER, CHOOSE, media_urls=[DUNE_1984, DUNE_2021])
    assert row.status == "pending" and fake_twilio.sent == []
    db.database.close()

    migrations.open_database(config.database.path)     # a new process finds the row pending
    clock.advance(minutes=5)
    second = Sender(build_twilio_client(config.twilio), config.twilio, clock=clock)
    assert second.deliver_due() == 1
    assert (sent(fake_twilio)["body"], sent(fake_twilio)["media_urls"]) == \
        (CHOOSE, [DUNE_1984, DUNE_2021])
    db.database.close()


def test_the_sender_drops_what_twilio_should_not_fetch():
    assert web_urls(["https://a.example.com/1.jpg", "file:///etc/passwd", "javascript:x",
                     "http://b.example.com/2.jpg", "https://a.example.com/1.jpg",
                     "https://c.example.com/3.jpg", "https://d.example.com/4.jpg",
                     "https://e.example.com/5.jpg"]) == \
        ["https://a.example.com/1.jpg", "https://c.example.com/3.jpg",
         "https://d.example.com/4.jpg"]


X = "https://img.example.com/"
HITS = [Offered("Dune", 2021, X + "2021.jpg"),
        Offered("Dune: Part Two", 2024, X + "two.jpg"),
        Offered("Dune", 1984, X + "1984.jpg"),
        Offered("Jodorowsky's Dune", 2013, None)]


@pytest.mark.parametrize("reply, posters", [
    (CHOOSE, [X + "1984.jpg", X + "2021.jpg", X + "two.jpg"]),
    ("Dune (1984) or Dune: Part Two?", [X + "1984.jpg", X + "two.jpg"]),
    ("Which year did you mean?", [X + "2021.jpg", X + "two.jpg", X + "1984.jpg"]),
    ("Dune (2021) is in the library.", []),
])
def test_choose_posters_follows_the_reply(reply, posters):
    assert choose_posters(HITS, [], reply) == posters


def test_an_add_wins_over_a_question():
    assert choose_posters(HITS, [X + "added.jpg"], "Anything else?") == [X + "added.jpg"]


PRIVATE_POSTERS = [
    "http://admin:hunter2@192.168.1.20:7878/MediaCover/2/poster.jpg",
    "http://127.0.0.1:8989/api/v3/MediaCover/2/poster.jpg?lastWrite=63859",
    "https://admin:hunter2@image.tmdb.org/t/p/original/poster.jpg",
    "http://image.tmdb.org/t/p/original/poster.jpg",
    "https://127.0.0.1/MediaCover/2/poster.jpg", "https://[::1]/p.jpg",
    "https://[::ffff:10.0.0.5]/p.jpg", "https://10.1.2.3/p.jpg", "https://172.16.0.9/p.jpg",
    "https://169.254.10.1/p.jpg", "https://100.64.0.7/p.jpg", "https://240.0.0.1/p.jpg",
    "https://[fe80::1]/p.jpg", "https://[fd00::5]/p.jpg", "https://nas/p.jpg",
    "https://localhost/p.jpg", "https://radarr.local/p.jpg", "https://qbit.lan/p.jpg",
    "https://nas.home.arpa/p.jpg", "https://radarr.internal/p.jpg", "https://2130706433/p.jpg",
    "https://0x7f.1/p.jpg", "https://image.tmdb.org:port/p.jpg", "/MediaCover/2/poster.jpg",
    "https://image.tmdb.org/p 1.jpg", None, 7,
]


@pytest.mark.parametrize("url", PRIVATE_POSTERS)
def test_a_poster_twilio_cannot_fetch_or_that_carries_a_password_is_dropped(url):
    assert web_urls([url]) == []


@pytest.mark.parametrize("url", [DUNE_1984, TVDB.format("severance"), "https://8.8.8.8/p.jpg",
                                 "https://[2606:4700::1111]/p.jpg"])
def test_a_public_https_poster_is_kept(url):
    assert web_urls([url]) == [url]


def _poster_image(remote: str | None, url: str) -> dict:
    return {"coverType": "poster", "url": url, **({"remoteUrl": remote} if remote else {})}


def test_only_public_https_posters_reach_twilio_and_the_catalogues_copy_is_preferred(
        house, stack, fake_llm, fake_twilio):
    """Through the daemon: Dune (1984)'s poster sits on the house's server behind a
    password, Dune (2021)'s is plain http with only a loopback MediaCover path beside it;
    Dune: Part Two has the catalogue's public https copy beside its own server's path."""
    movies = {m["tmdbId"]: m for m in stack.radarr.library + stack.radarr.catalog}
    movies[841]["images"] = [_poster_image(PRIVATE_POSTERS[0], PRIVATE_POSTERS[1])]
    movies[438631]["images"] = [_poster_image(PRIVATE_POSTERS[3], PRIVATE_POSTERS[1])]
    movies[693134]["images"] = [_poster_image(None, "https://192.168.1.20/poster.jpg"),
                                _poster_image(DUNE_TWO, "/MediaCover/3/poster.jpg")]
    for tmdb_id in (841, 438631, 693134):
        movies[tmdb_id].pop("remotePoster")
    daemon = house(sms={"posters": True})
    turn(daemon, fake_llm, [("search_media", {"query": "dune", "kind": "movie"})], CHOOSE)
    message = sent(fake_twilio)
    assert (message["body"], message["media_urls"]) == (CHOOSE, [DUNE_TWO])
    assert "hunter2" not in str(fake_twilio.sent)
    media = [json.loads(row.media or "[]") for row in db.Outbox.select()]
    assert media == [[DUNE_TWO]], "nothing private waits in the outbox either"


def test_without_any_public_poster_the_question_goes_as_plain_sms(house, stack, fake_llm,
                                                                 fake_twilio):
    for movie in stack.radarr.library + stack.radarr.catalog:
        movie["images"] = [_poster_image(None, PRIVATE_POSTERS[1])]
        movie.pop("remotePoster", None)
    daemon = house(sms={"posters": True})
    turn(daemon, fake_llm, [("search_media", {"query": "dune", "kind": "movie"})], CHOOSE)
    message = sent(fake_twilio)
    assert (message["body"], message["media_urls"], message["num_media"]) == (CHOOSE, [], "0")
