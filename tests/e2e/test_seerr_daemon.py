"""End to end with Seerr connected: a real `mediabot serve` process, the fake Seerr posting
its webhook (Seerr's default JSON payload) to the daemon over loopback, the fake Twilio.

A member's request pending in Seerr reaches the admin as APPROVE n / DENY n, the admin's
answer approves it in Seerr as the admin's own Seerr user, and Seerr's MEDIA_AVAILABLE
becomes the member's "ready" text; a web-UI request decided in the web UI withdraws the
admin's waiting text; a retried post texts once; Sonarr's webhook and Seerr's for the same
title text once; a wrong secret is refused.
"""

import sqlite3

import pytest
import requests

from mediabot.trial.sim.arr import API_KEY
from mediabot.trial.sim.loopback import wait_for
from tests.fakes.seerr_model import MediaStatus, Notification, Permission
from tests.support.arr_hooks import basic, sonarr_download
from tests.support.asking import relay
from tests.support.household import ADMIN, MEMBER, SANDBOX, SECRET
from tests.support.sent import sent_to

pytestmark = pytest.mark.e2e

DUNE_TWO, SEVERANCE_TMDB = 693134, 95396
BEARER = f"Bearer {SECRET}"


@pytest.fixture
def seerr_house(serve, seerr):
    """`mediabot serve` with [seerr] on the fake: Alex (admin, Seerr user "alex" with Manage
    Requests) and Sam (member, Seerr user "sam"), Seerr's webhook pointed at the daemon."""
    def start(admin_channel: str = "", env: dict | None = None, extra: str = ""):
        ids = {"alex": seerr.add_user("alex", permissions=Permission.MANAGE_REQUESTS),
               "sam": seerr.add_user("sam", permissions=Permission.REQUEST)}
        daemon = serve(f"""seerr_user = "alex"
{f'channel = "{admin_channel}"' if admin_channel else ''}
[[users]]
phone = "{MEMBER}"
name = "Sam"
seerr_user = "sam"
[seerr]
url = "{seerr.url}"
api_key = "{seerr.api_key}"
[notifications]
webhook_secret = "{SECRET}"
{extra}""", env=env)
        seerr.configure_webhook(daemon.url + "/hooks/seerr", authorization=BEARER)
        return daemon, ids
    return start


def posted(seerr) -> list[int]:
    assert seerr.wait_for_webhooks()
    return [d.status for d in seerr.deliveries]


def test_pending_then_approved_by_text_then_ready_by_text(seerr_house, seerr, fake_twilio,
                                                          fake_llm, stack):
    """Sam texts for a film; it is filed in Seerr as Sam and waits there. Alex is asked by
    text, answers APPROVE 1, and Seerr records Alex's own Seerr user as the one who
    approved. Seerr's library scan finds the film: Sam's "ready" comes by text."""
    daemon, ids = seerr_house(extra=f"""[radarr]
url = "{stack.servers['radarr'].url}"
api_key = "{API_KEY}"
""")
    fake_llm.enqueue_tool_calls([("add_movie", {"tmdb_id": DUNE_TWO})])
    fake_llm.set_responder(relay)
    daemon.text("get dune part two please", sender=MEMBER)
    question = "Sam asked for Dune: Part Two (2024). Reply APPROVE 1 or DENY 1"
    assert wait_for(lambda: sent_to(fake_twilio, ADMIN) == [question])
    assert wait_for(lambda: len(sent_to(fake_twilio, MEMBER)) == 1)
    [filed] = seerr.calls_to("POST", "/request")
    assert filed.api_user == str(ids["sam"]) and seerr.request_status(1) == 1
    # Twilio took the question a moment before the daemon marked it sent; an answer is one
    # only to a question Twilio had accepted (``outbox.seen_before``)
    assert wait_for(daemon.settled), "Twilio accepted the question: APPROVE 1 answers it now"

    daemon.text("APPROVE 1")
    assert wait_for(lambda: seerr.request_status(1) == 2)
    # the fake records a call once its answer is made, a moment after the state changed
    assert wait_for(lambda: seerr.calls_to("POST", "/request/1/approve"))
    [call] = seerr.calls_to("POST", "/request/1/approve")
    assert call.api_user == str(ids["alex"]), "approved as Alex's own Seerr user"
    assert wait_for(lambda: len(sent_to(fake_twilio, ADMIN)) == 2)

    seerr.set_media_status("movie", DUNE_TWO, MediaStatus.AVAILABLE)
    assert wait_for(lambda: len(sent_to(fake_twilio, MEMBER)) == 3)
    assert posted(seerr) == [200, 200, 200]   # pending, approved, available
    assert wait_for(daemon.settled)
    assert sent_to(fake_twilio, ADMIN) == [
        question, "Approved request 1: Dune: Part Two (2024) is added. Sam has been told."]
    assert sent_to(fake_twilio, MEMBER) == [
        "I asked Seerr for Dune: Part Two (2024). The request is waiting for an admin's "
        "approval there; you will get a text when it is ready.",
        "Alex approved Dune: Part Two (2024): it's added, and I'll text you when it's ready.",
        "Dune: Part Two (2024) is ready to watch."]
    assert stack.radarr.requests_to("movie", "POST") == [], \
        "Seerr, not mediabot, sends it to Radarr"


def test_a_web_ui_request_approved_in_the_web_ui_withdraws_the_admins_text(
        seerr_house, seerr, fake_twilio, fake_llm):
    """Alex gets notices on WhatsApp and has not written there, so the approval text waits
    for Alex; the request is approved in Seerr's web UI meanwhile. When Alex writes, the
    text is not sent (nothing is left to decide), and Sam's "ready" comes by text."""
    daemon, ids = seerr_house(admin_channel="whatsapp", env={
        "MEDIABOT_TWILIO_WHATSAPP_FROM": SANDBOX,
        "MEDIABOT_TWILIO_WHATSAPP_OUTSIDE_WINDOW": "wait"})
    request_id = seerr.request_in_web_ui(ids["sam"], "movie", DUNE_TWO)
    assert seerr.wait_for_webhooks() and wait_for(lambda: held_approvals(daemon) == 1)
    seerr.approve_in_web_ui(request_id, as_user=ids["alex"])
    seerr.set_media_status("movie", DUNE_TWO, MediaStatus.AVAILABLE)
    assert posted(seerr) == [200, 200, 200]
    assert wait_for(lambda: "Dune: Part Two (2024) is ready to watch." in
                    sent_to(fake_twilio, MEMBER))

    fake_twilio.open_window(ADMIN)
    fake_llm.enqueue_text("All quiet.")
    daemon.text("anything new?", sender="whatsapp:" + ADMIN)
    assert wait_for(lambda: sent_to(fake_twilio, "whatsapp:" + ADMIN) == ["All quiet."])
    assert wait_for(daemon.settled)
    assert outbox(daemon, "SELECT status, error FROM outbox WHERE dedupe_key LIKE "
                          "'approval:%'") == [("cancelled", "withdrawn: the request was "
                                                            "decided before it could go")]
    assert sent_to(fake_twilio, "whatsapp:" + ADMIN) == ["All quiet."]


def test_a_seerr_post_retried_twice_texts_once(seerr_house, seerr, fake_twilio):
    daemon, ids = seerr_house()
    request_id = seerr.request_in_web_ui(ids["sam"], "movie", DUNE_TWO)
    seerr.approve_in_web_ui(request_id, as_user=ids["alex"])
    seerr.set_media_status("movie", DUNE_TWO, MediaStatus.AVAILABLE)
    assert posted(seerr) == [200, 200, 200]
    body = seerr.webhook_body(Notification.MEDIA_AVAILABLE, request_id)
    for _ in range(2):   # Seerr's post again, as a proxy or a second approval would send it
        response = requests.post(daemon.url + "/hooks/seerr", json=body,
                                 headers={"Authorization": BEARER}, timeout=10)
        assert response.status_code == 200
    assert wait_for(daemon.settled)
    ready = [t for t in sent_to(fake_twilio, MEMBER) if "ready to watch" in t]
    assert ready == ["Dune: Part Two (2024) is ready to watch."]


def test_sonarrs_hook_and_seerrs_for_the_same_series_text_once(seerr_house, seerr,
                                                              fake_twilio):
    daemon, ids = seerr_house()
    request_id = seerr.request_in_web_ui(ids["sam"], "tv", SEVERANCE_TMDB, seasons=[1])
    seerr.approve_in_web_ui(request_id, as_user=ids["alex"])
    assert posted(seerr) == [200, 200]
    assert wait_for(daemon.settled)
    episodes = [(1, n) for n in range(1, 10)]
    response = requests.post(daemon.url + "/hooks/sonarr",
                             json=sonarr_download(episodes),
                             headers=basic(SECRET), timeout=10)
    assert response.status_code == 200, response.text
    seerr.set_media_status("tv", SEVERANCE_TMDB, MediaStatus.AVAILABLE,
                           seasons={1: MediaStatus.AVAILABLE})
    assert posted(seerr) == [200, 200, 200]
    assert daemon.stop() == 0   # the episodes gathering are sent at shutdown
    assert sent_to(fake_twilio, MEMBER) == [
        "Alex approved Severance (2022): it's added, and I'll text you when it's ready.",
        "Severance: S01E01-E09 are ready."]


def test_a_wrong_secret_is_refused_with_401(seerr_house, seerr, fake_twilio):
    daemon, ids = seerr_house()
    body = seerr.webhook_body(Notification.TEST_NOTIFICATION)
    for header in ("Bearer not-the-secret", "", "Basic Zm9vOmJhcg=="):
        response = requests.post(daemon.url + "/hooks/seerr", json=body,
                                 headers={"Authorization": header}, timeout=10)
        assert response.status_code == 401
    seerr.configure_webhook(daemon.url + "/hooks/seerr", authorization="Bearer wrong")
    seerr.request_in_web_ui(ids["sam"], "movie", DUNE_TWO)
    assert posted(seerr) == [401]
    assert wait_for(daemon.settled) and fake_twilio.sent == []


def outbox(daemon, query: str) -> list[tuple]:
    connection = sqlite3.connect(daemon.config.parent / "mediabot.db", timeout=5)
    try:
        return connection.execute(query).fetchall()
    finally:
        connection.close()


def held_approvals(daemon) -> int:
    return len(outbox(daemon, "SELECT id FROM outbox WHERE dedupe_key LIKE 'approval:%' "
                              "AND status = 'pending'"))
