"""Requests through Seerr, end to end: a member texts the daemon (fake Twilio, a fake model
that passes the tool's sentence on), the add is filed in the fake Seerr as the member's own
Seerr user, and the member reads what Seerr decided. Every call mediabot makes to Seerr is
checked against Seerr's OpenAPI spec by the fake (``assert_clean`` after each test)."""

import pytest

from mediabot.answering.faults import RetryPolicy
from mediabot.config import parse_config
from mediabot.daemon import Daemon
from mediabot.mailbox.delivery import Backoff
from mediabot.store import db
from mediabot.trial.sim.arr import API_KEY
from mediabot.trial.sim.arr_fixtures import (
    ARRIVAL_TMDB,
    DUNE_1984_TMDB,
    DUNE_TWO_TMDB,
    SEVERANCE_TVDB,
)
from tests.fakes.seerr_model import MediaStatus, Permission, RequestStatus
from tests.support.asking import last_tool_result, relay
from tests.support.household import ADMIN, MEMBER
from tests.support.sent import sent_to
from tests.support.texting import settle, text

DUNE_TWO = "Dune: Part Two (2024)"
POST_REQUEST = ("POST", "/request")


@pytest.fixture
def seerr_house(fake_llm, fake_twilio, stack, seerr, tmp_path, clock):
    """Build in-process daemons on the fake arrs and the fake Seerr; Sam (the member) is
    linked by ``member_link`` (None: not linked), Alex (the admin) by "alex"."""
    made = []

    def build(*, member_link="sam", member_language="", requests=None):
        member = {"phone": MEMBER, "name": "Sam", "role": "member"}
        if member_link is not None:
            member["seerr_user"] = member_link
        if member_language:
            member["language"] = member_language
        raw = {
            "server": {"public_url": "https://sms.example.com", "timezone": "UTC"},
            "database": {"path": str(tmp_path / "m.db")},
            "twilio": {"account_sid": "AC" + "0" * 32, "auth_token": "secret-token",
                       "from_number": "+15550001111", "api_base_url": fake_twilio.url},
            "llm": {"base_url": fake_llm.url + "/v1", "api_key": "sk-test",
                    "timeout_seconds": 5, "max_retries": 0},
            "sonarr": {"url": stack.servers["sonarr"].url, "api_key": API_KEY},
            "radarr": {"url": stack.servers["radarr"].url, "api_key": API_KEY},
            "seerr": {"url": seerr.url, "api_key": seerr.api_key, "timeout_seconds": 5},
            "requests": requests or {},
            "users": [{"phone": ADMIN, "name": "Alex", "role": "admin", "seerr_user": "alex"},
                      member],
        }
        daemon = Daemon(parse_config(raw, environ={}), clock=clock,
                        backoff=Backoff(attempts=2, base_seconds=0.01), burst_seconds=0,
                        retry=RetryPolicy(attempts=4, base_seconds=0.05, max_seconds=0.2))
        made.append(daemon)
        return daemon
    yield build
    for daemon in made:
        daemon.worker.shutdown(5)
    db.database.close()


def ask(daemon, fake_llm, tool, arguments, sender=MEMBER):
    """The person texts; the model calls ``tool`` and passes its sentence on."""
    fake_llm.enqueue_tool_calls([(tool, arguments)])
    fake_llm.set_responder(relay)
    text(daemon.app.test_client(), "get it please", sender=sender)
    settle(daemon)
    return sent_to_member(daemon)


def sent_to_member(daemon):
    return db.Outbox.select().where(db.Outbox.to_number == MEMBER).order_by(
        db.Outbox.id.desc()).first().body


def test_a_members_request_is_filed_as_them_and_waits_for_approval_in_seerr(
        seerr_house, seerr, stack, fake_llm):
    sam = seerr.add_user("sam", permissions=Permission.REQUEST)
    seerr.add_user("alex", permissions=Permission.ADMIN)
    daemon = seerr_house(requests={"approval": "members", "movies_per_week": 1})

    said = ask(daemon, fake_llm, "add_movie", {"tmdb_id": DUNE_1984_TMDB})

    assert said == ("I asked Seerr for Dune (1984). The request is waiting for an admin's "
                    "approval there; you will get a text when it is ready.")
    filed = seerr.calls_to(*POST_REQUEST)
    assert [call.api_user for call in filed] == [str(sam)], "filed as Sam, not the owner"
    assert "userId" not in filed[0].body
    assert seerr.request_status(1) == RequestStatus.PENDING
    assert not stack.has("movie", DUNE_1984_TMDB), "nothing goes to Radarr around Seerr"
    assert db.Approval.select().count() == 0, "[requests] approval does not apply to Seerr"
    assert db.Request.get(db.Request.external_id == DUNE_1984_TMDB).user.phone == MEMBER

    said = ask(daemon, fake_llm, "add_movie", {"tmdb_id": DUNE_TWO_TMDB})
    assert said.startswith(f"I asked Seerr for {DUNE_TWO}."), \
        "[requests] movies_per_week does not apply to Seerr requests either"


def test_a_member_whom_seerr_auto_approves_is_told_it_is_on_its_way(seerr_house, seerr,
                                                                   fake_llm):
    seerr.add_user("sam", permissions=Permission.REQUEST | Permission.AUTO_APPROVE)
    daemon = seerr_house()
    said = ask(daemon, fake_llm, "add_series", {"tvdb_id": SEVERANCE_TVDB, "seasons": [1]})
    assert said == ("I asked Seerr for Severance (2022) and it was approved; you will get a "
                    "text when it is ready.")
    assert seerr.request_status(1) == RequestStatus.APPROVED


def test_over_quota_seerr_refuses_and_the_member_hears_what_is_left(seerr_house, seerr,
                                                                   fake_llm):
    sam = seerr.add_user("sam", permissions=Permission.REQUEST, movie_quota=(1, 7))
    seerr.request_in_web_ui(sam, "movie", ARRIVAL_TMDB)
    daemon = seerr_house()

    said = ask(daemon, fake_llm, "add_movie", {"tmdb_id": DUNE_TWO_TMDB})

    assert said == (f"Seerr did not file {DUNE_TWO}: you may request 1 film every 7 days, "
                    "and you have 0 left.")
    assert len(seerr.calls_to(*POST_REQUEST)) == 1, "asked once, refused, nothing retried"
    assert last_tool_result(MEMBER)["requested"] is False


def test_a_title_someone_already_requested_names_them(seerr_house, seerr, fake_llm):
    """Jo is a Seerr user of no household member: named as Seerr names them, marked as
    not of the household."""
    seerr.add_user("sam", permissions=Permission.REQUEST)
    jo = seerr.add_user("Jo", permissions=Permission.REQUEST)
    seerr.request_in_web_ui(jo, "movie", DUNE_TWO_TMDB)
    daemon = seerr_house()

    said = ask(daemon, fake_llm, "add_movie", {"tmdb_id": DUNE_TWO_TMDB})

    assert said == (f"{DUNE_TWO} was already requested in Seerr by a Seerr user, Jo; you "
                    "will get a text when it is ready.")
    assert db.Request.get(db.Request.external_id == DUNE_TWO_TMDB).user.phone == MEMBER, \
        "Sam hears when it lands all the same"


def test_search_results_say_what_seerr_knows(seerr_house, seerr, fake_llm):
    seerr.add_user("sam", permissions=Permission.REQUEST)
    jo = seerr.add_user("Jo", permissions=Permission.REQUEST)
    seerr.request_in_web_ui(jo, "movie", DUNE_TWO_TMDB)
    daemon = seerr_house()

    ask(daemon, fake_llm, "search_media", {"query": "Dune", "kind": "movie"})

    hits = {hit["id"]: hit for hit in last_tool_result(MEMBER)["results"]}
    assert hits[f"m{DUNE_TWO_TMDB}"]["seerr"] == ("requested, waiting for approval in Seerr; "
                                            "requested by Jo")
    assert not seerr.calls_to(*POST_REQUEST), "looking files nothing"


def test_an_unlinked_member_is_told_and_nothing_is_filed_for_them(seerr_house, seerr,
                                                                  fake_llm, fake_twilio):
    seerr.add_user("sam", permissions=Permission.REQUEST)
    daemon = seerr_house(member_link=None)

    said = ask(daemon, fake_llm, "add_movie", {"tmdb_id": DUNE_TWO_TMDB})

    assert said == ("Your number is not linked to a Seerr account yet, so I cannot request "
                    "it for you. Ask an admin to link it.")
    assert not seerr.calls_to(*POST_REQUEST), "never filed as the owner instead"
    hint = (f"Sam asked for {DUNE_TWO}, but their number has no working link to a Seerr "
            f"user, so nothing was requested. Set seerr_user for {MEMBER} in [[users]]; "
            "mediabot check lists every link.")
    assert sent_to(fake_twilio, ADMIN) == [hint]

    ask(daemon, fake_llm, "add_movie", {"tmdb_id": ARRIVAL_TMDB})
    assert sent_to(fake_twilio, ADMIN) == [hint], "the admin is told once, not at every ask"


def test_a_link_that_matches_nobody_is_told_too(seerr_house, seerr, fake_llm):
    daemon = seerr_house(member_link="nobody@example.com")
    said = ask(daemon, fake_llm, "add_movie", {"tmdb_id": DUNE_TWO_TMDB})
    assert said == ("Your number is linked to a Seerr account that Seerr does not know, so "
                    "I cannot request it for you. Ask an admin to fix the link.")
    assert not seerr.calls_to(*POST_REQUEST)


def test_the_pending_text_is_in_the_members_language(seerr_house, seerr, fake_llm):
    seerr.add_user("sam", permissions=Permission.REQUEST)
    daemon = seerr_house(member_language="es")
    said = ask(daemon, fake_llm, "add_movie", {"tmdb_id": DUNE_TWO_TMDB})
    assert said.startswith(f"He pedido {DUNE_TWO} a Seerr.")


def test_seerr_down_files_nothing_and_no_secret_reaches_a_text_or_the_log(
        seerr_house, seerr, fake_llm, stack, caplog):
    seerr.add_user("sam", permissions=Permission.REQUEST)
    daemon = seerr_house()
    seerr.down()
    said = ask(daemon, fake_llm, "add_movie", {"tmdb_id": DUNE_1984_TMDB})
    seerr.up()
    assert said == ("Sorry: Seerr is not answering right now; nothing was requested. Try "
                    "again in a while")
    assert not stack.has("movie", DUNE_1984_TMDB), "no fallback to Radarr either"
    texts = [row.body for row in db.Outbox.select()]
    assert seerr.api_key not in caplog.text + "".join(texts)


def test_a_series_asked_for_its_latest_season_asks_seerr_for_that_season(seerr_house, seerr,
                                                                        fake_llm):
    seerr.add_user("sam", permissions=Permission.REQUEST)
    daemon = seerr_house()
    ask(daemon, fake_llm, "add_series", {"tvdb_id": SEVERANCE_TVDB, "seasons": "latest"})
    body = seerr.calls_to(*POST_REQUEST)[0].body
    assert (body["mediaType"], body["seasons"], body["tvdbId"]) == ("tv", [2], SEVERANCE_TVDB)


def test_text_me_when_a_movie_radarr_is_fetching_is_ready_files_nothing(seerr_house, seerr,
                                                                         fake_llm):
    """Issue 31 folded notify_me into add_media: "text me when Dune: Part Two is ready",
    which Radarr already has and nobody asked Seerr for (Seerr shows it processing), files
    no request an admin would have to approve; Sam hears when it lands."""
    seerr.add_user("sam", permissions=Permission.REQUEST)
    seerr.set_media_status("movie", DUNE_TWO_TMDB, MediaStatus.PROCESSING)
    daemon = seerr_house()

    said = ask(daemon, fake_llm, "add_media", {"tmdb_id": DUNE_TWO_TMDB})

    assert said == f"{DUNE_TWO} is already on its way; you will get a text when it is ready."
    assert not seerr.calls_to(*POST_REQUEST)
    assert db.Request.get(db.Request.external_id == DUNE_TWO_TMDB).user.phone == MEMBER
