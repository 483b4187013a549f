"""Posters by MMS ([sms] posters) through the daemon: attached when a reply asks the person to
choose between titles a search found, or confirms an add; at most three, public https
only, in the order the reply names them; never when turned off; the text is the same
either way."""

import json

from mediabot.store import db
from tests.support.household import MEMBER
from tests.support.posters import CHOOSE, DUNE_1984, DUNE_2021, DUNE_TWO, PRIVATE_POSTERS, TVDB
from tests.support.sent import only_message_to_sam
from tests.support.texting import settle, text


def turn(daemon, fake_llm, calls, reply, body="get dune"):
    fake_llm.enqueue_tool_calls(calls)
    fake_llm.enqueue_text(reply)
    text(daemon.app.test_client(), body, sender=MEMBER)
    settle(daemon)


def test_a_question_between_titles_carries_their_posters_in_the_order_named(
        house, fake_llm, fake_twilio):
    daemon = house(sms={"posters": True})
    turn(daemon, fake_llm, [("search_media", {"query": "dune", "kind": "movie"})], CHOOSE)
    message = only_message_to_sam(fake_twilio)
    assert message["body"] == CHOOSE
    assert message["media_urls"] == [DUNE_1984, DUNE_2021, DUNE_TWO]
    assert message["num_media"] == "3" and message["sid"].startswith("MM")
    tool = db.Message.get(db.Message.role == "tool").content
    assert "http" not in tool and "_poster" not in tool, "the model never sees poster URLs"


def test_posters_off_by_default_send_the_same_text_alone(house, fake_llm, fake_twilio):
    daemon = house()
    turn(daemon, fake_llm, [("search_media", {"query": "dune", "kind": "movie"})], CHOOSE)
    message = only_message_to_sam(fake_twilio)
    assert (message["body"], message["media_urls"], message["num_media"]) == (CHOOSE, [], "0")
    assert fake_twilio.mms() == []


def test_never_more_than_three_posters(house, fake_llm, fake_twilio):
    daemon = house(sms={"posters": True})
    reply = ("Which one: The Office (2005), The Office (IN), The Office (PL), "
             "The Office (SA) or The Office (DE)?")
    turn(daemon, fake_llm, [("search_media", {"query": "the office", "kind": "series"})],
         reply, body="get the office")
    message = only_message_to_sam(fake_twilio)
    assert message["body"] == reply
    assert message["media_urls"] == [TVDB.format("the-office"), TVDB.format("the-office-in"),
                                     TVDB.format("the-office-pl")]


def test_a_confirmed_add_carries_the_added_titles_poster(house, stack, fake_llm, fake_twilio):
    daemon = house(sms={"posters": True})
    turn(daemon, fake_llm, [("add_movie", {"tmdb_id": 841})],
         "Added Dune (1984); I'll text you when it's ready.")
    assert stack.has("movie", 841)
    message = only_message_to_sam(fake_twilio)
    assert message["body"] == "Added Dune (1984); I'll text you when it's ready."
    assert message["media_urls"] == [DUNE_1984]


def test_no_posters_for_a_statement_or_a_single_hit(house, fake_llm, fake_twilio):
    daemon = house(sms={"posters": True})
    turn(daemon, fake_llm, [("search_media", {"query": "dune", "kind": "movie"})],
         "We have Dune (2021) already.")
    assert only_message_to_sam(fake_twilio)["media_urls"] == []


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
    message = only_message_to_sam(fake_twilio)
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
    message = only_message_to_sam(fake_twilio)
    assert (message["body"], message["media_urls"], message["num_media"]) == (CHOOSE, [], "0")
