"""The services a turn is built from (``conversation/services.py``): which tools the model is
offered and what its system prompt says when Sonarr, Radarr or both are not set up."""

import json

from mediabot.store import db
from mediabot.trial.sim.arr import API_KEY
from mediabot.trial.sim.arr_fixtures import DUNE_TMDB, OFFICE_TVDB
from tests.support.household import ADMIN, MEMBER
from tests.support.prompts import offered, person_part, system_of


def test_without_sonarr_the_model_is_told_and_a_series_call_says_why(engine_for, fake_llm,
                                                                     stack):
    engine = engine_for(arr=False, radarr={"url": stack.servers["radarr"].url,
                                           "api_key": API_KEY, "timeout_seconds": 2})
    sam = db.User.get(phone=MEMBER).id
    fake_llm.enqueue_tool_calls([("add_series", {"tvdb_id": OFFICE_TVDB}),
                                 ("remove_media", {"kind": "movie", "id": DUNE_TMDB})])
    fake_llm.enqueue_text("Sonarr isn't set up here, so I can't add shows.")
    engine.handle(sam, "get The Office")
    first = fake_llm.requests[0]
    assert "add_media" in offered(first) and "add_series" not in offered(first)
    assert "Sonarr is not set up" in system_of(first)
    assert "add_series" not in system_of(first)
    assert "remove_media, admins only" in system_of(first), "one system text for everyone"
    assert "member, not an admin" in person_part(first)
    errors = [json.loads(m["content"])["error"] for m in fake_llm.requests[1]["messages"]
              if m["role"] == "tool"]
    assert "Sonarr" in errors[0] and "not set up" in errors[0]
    assert "only for admins" in errors[1]


def test_with_neither_service_the_model_knows_it_has_no_tools(engine_for, fake_llm):
    engine = engine_for(arr=False)
    fake_llm.enqueue_text("Nothing is set up yet.")
    engine.handle(db.User.get(phone=ADMIN).id, "get Dune")
    request = fake_llm.requests[0]
    assert "tools" not in request
    assert "no tools" in system_of(request) and "search_media" not in system_of(request)
