"""A household on the fake arrs asking for things: the model scripted to call a tool, what the tool
answered, a request recorded and its download finished."""

import datetime as dt
import json

from mediabot.arr.wanted import record_request
from mediabot.store import db
from mediabot.trial.sim.arr_fixtures import OFFICE_TVDB
from tests.fakes import arr_webhooks as arr
from tests.support.arr_hooks import radarr_says
from tests.support.household import MEMBER
from tests.support.sent import sent_to_last
from tests.support.texting import settle, text


def dune_two_is_ready(daemon, clock) -> None:
    record_request(db.User.get(phone=MEMBER).id, "radarr", arr.DUNE_TWO_TMDB,
                   "Dune: Part Two", clock())
    radarr_says(daemon, arr.radarr_download())


def approval_question() -> str:
    year = dt.date.today().year + 1
    return f"Sam asked for Dune: Part Three ({year}). Reply APPROVE 1 or DENY 1"


def ask_for(daemon, fake_llm, tool, arguments, sender=MEMBER, answer="Asked."):
    fake_llm.enqueue_tool_calls([(tool, arguments)])
    fake_llm.enqueue_text(answer)
    text(daemon.app.test_client(), "get it please", sender=sender)
    settle(daemon)


def last_tool_result(user_phone):
    row = (db.Message.select().join(db.User).where(db.User.phone == user_phone,
                                                   db.Message.role == "tool")
           .order_by(db.Message.id.desc()).first())
    return json.loads(row.content)


def relay(body: dict) -> str:
    """A model that passes the tool's sentence on, as a good one would."""
    result = json.loads(body["messages"][-1]["content"])
    return result.get("message") or f"Sorry: {result['error']}"


def ask_why(daemon, fake_llm, kind, external_id, sender=MEMBER):
    fake_llm.enqueue_tool_calls([("search_again", {"kind": kind, "id": external_id})])
    fake_llm.set_responder(relay)
    text(daemon.app.test_client(), "why isn't it downloading? look again", sender=sender)
    settle(daemon)
    return sent_to_last(daemon, sender)


def office_in_library(stack):
    return any(s["tvdbId"] == OFFICE_TVDB for s in stack.sonarr.library)


def requested(phone, service, external_id, title, clock):
    record_request(db.User.get(phone=phone).id, service, external_id, title, clock())
