"""What Seerr knows of a search's hits, beside each hit, for the model: read from the fake
Seerr by the real client, so "do we have it?" and "is it coming?" are answered without a
second request."""

from mediabot.seerr.api import SeerrClient
from mediabot.seerr.view import annotate
from mediabot.trial.sim.arr_fixtures import ARRIVAL_TMDB, DUNE_TWO_TMDB, SEVERANCE_TVDB
from tests.fakes.seerr_model import MediaStatus, Permission


def client_of(seerr):
    return SeerrClient(seerr.url, seerr.api_key, timeout=5, retries=0)


def test_each_hit_seerr_knows_gets_its_status_and_who_asked(seerr):
    sam = seerr.add_user("sam", permissions=Permission.REQUEST)
    seerr.request_in_web_ui(sam, "movie", DUNE_TWO_TMDB)
    seerr.set_media_status("movie", ARRIVAL_TMDB, MediaStatus.AVAILABLE)
    hits = [{"id": f"m{DUNE_TWO_TMDB}", "title": "Dune: Part Two"},
            {"id": f"m{ARRIVAL_TMDB}", "title": "Arrival"}]
    assert annotate(client_of(seerr), "dune", hits) == []
    assert hits[0]["seerr"] == "requested, waiting for approval in Seerr; requested by sam"
    hits = [{"id": f"m{ARRIVAL_TMDB}", "title": "Arrival"}]
    annotate(client_of(seerr), "arrival", hits)
    assert hits[0]["seerr"] == "available to watch"


def test_a_hit_seerr_has_no_record_of_gets_no_line(seerr):
    hits = [{"id": f"tv{SEVERANCE_TVDB}", "title": "Severance"}]
    assert annotate(client_of(seerr), "severance", hits) == []
    assert "seerr" not in hits[0]


def test_a_seerr_that_does_not_answer_leaves_a_warning_and_the_hits_as_they_were(seerr):
    hits = [{"id": f"m{DUNE_TWO_TMDB}", "title": "Dune: Part Two"}]
    client = client_of(seerr)
    seerr.down()
    try:
        [warning] = annotate(client, "dune", hits)
    finally:
        seerr.up()
    assert warning.startswith("Seerr did not answer (")
    assert warning.endswith("so what it knows is missing")
    assert hits == [{"id": f"m{DUNE_TWO_TMDB}", "title": "Dune: Part Two"}]
