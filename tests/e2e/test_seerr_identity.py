"""Who is who in Seerr, end to end: a real `mediabot serve` process, the fake Seerr posting
its webhook (Seerr's default JSON payload) to it, the fake Twilio.

A Seerr user who types a member's link (their email, or their id) as his own Display Name
passes for nobody: the admins read "A Seerr user, ..." and the member hears nothing of his
requests. An APPROVE for a request cancelled in Seerr says it is gone and closes it; one that
Seerr refuses as already decided says by whom. A member told "you will get a text when it is
ready" after Seerr said someone else had asked is texted when it is, once, whichever hooks
are connected.
"""

from pathlib import Path

import pytest
import requests

from mediabot.trial.sim.arr import API_KEY
from mediabot.trial.sim.loopback import wait_for
from tests.e2e.test_seerr_daemon import BEARER, outbox, posted
from tests.fakes.arr_webhooks import radarr_download
from tests.fakes.seerr_model import MediaStatus, Permission
from tests.support.arr_hooks import basic
from tests.support.asking import relay
from tests.support.household import ADMIN, MEMBER, SECRET
from tests.support.sent import sent_to

pytestmark = pytest.mark.e2e

DUNE_TWO, ARRIVAL = 693134, 329865
SAM_EMAIL = "sam@home.example"
SHIPPED = Path(__file__).parents[2] / "docs" / "seerr-webhook.json"


@pytest.fixture
def household(serve, seerr):
    """`mediabot serve` on the fake Seerr: Alex (admin, Seerr user "alex" with Manage
    Requests), Sam (member, linked as ``link(sam_id)``), and Theo, a Plex friend with a Seerr
    account who is nobody here. Seerr's webhook points at the daemon."""
    def start(link=lambda sam: SAM_EMAIL, extra=""):
        ids = {"alex": seerr.add_user("alex", permissions=Permission.MANAGE_REQUESTS),
               "sam": seerr.add_user("sam", email=SAM_EMAIL, permissions=Permission.REQUEST),
               "theo": seerr.add_user("theo", permissions=Permission.REQUEST)}
        daemon = serve(f"""seerr_user = "alex"
[[users]]
phone = "{MEMBER}"
name = "Sam"
seerr_user = "{link(ids['sam'])}"
[seerr]
url = "{seerr.url}"
api_key = "{seerr.api_key}"
[notifications]
webhook_secret = "{SECRET}"
{extra}""")
        seerr.configure_webhook(daemon.url + "/hooks/seerr", authorization=BEARER)
        return daemon, ids
    return start


@pytest.mark.parametrize("link", [lambda sam: SAM_EMAIL, str],
                         ids=["email link", "id link"])
def test_a_display_name_set_to_a_members_link_passes_for_nobody(household, seerr,
                                                               fake_twilio, link):
    daemon, ids = household(link)
    impostor = link(ids["sam"])
    seerr.set_display_name(ids["theo"], impostor)
    request_id = seerr.request_in_web_ui(ids["theo"], "movie", ARRIVAL)
    assert posted(seerr) == [200]
    shown = impostor if impostor.isdigit() else f"#{ids['theo']}"   # an email is no name
    question = f"A Seerr user, {shown}, asked for Arrival (2016). Reply APPROVE 1 or DENY 1"
    assert wait_for(lambda: sent_to(fake_twilio, ADMIN) == [question])
    assert wait_for(daemon.settled)

    daemon.text("DENY 1")
    assert wait_for(lambda: seerr.request_status(request_id) == 3)
    assert wait_for(lambda: len(sent_to(fake_twilio, ADMIN)) == 2)
    assert posted(seerr) == [200, 200]   # pending, declined
    assert wait_for(daemon.settled)
    assert sent_to(fake_twilio, ADMIN)[-1] == "Denied request 1 (Arrival (2016)) in Seerr."
    assert sent_to(fake_twilio, MEMBER) == [], "Sam asked for nothing and hears nothing"
    assert outbox(daemon, "SELECT requester_id FROM seerr_approvals") == [(None,)]


def test_sams_own_request_still_reaches_the_admins_as_sams(household, seerr, fake_twilio):
    """The link still works for its owner, by email, while Theo calls himself Sam's email."""
    _daemon, ids = household()
    seerr.set_display_name(ids["theo"], SAM_EMAIL)
    seerr.request_in_web_ui(ids["sam"], "movie", ARRIVAL)
    assert posted(seerr) == [200]
    assert wait_for(lambda: sent_to(fake_twilio, ADMIN) == [
        "Sam asked for Arrival (2016). Reply APPROVE 1 or DENY 1"])


def test_approve_for_a_request_cancelled_in_seerr_says_it_is_gone(household, seerr,
                                                                  fake_twilio):
    daemon, ids = household()
    request_id = seerr.request_in_web_ui(ids["sam"], "movie", DUNE_TWO)
    assert posted(seerr) == [200]
    assert wait_for(lambda: len(sent_to(fake_twilio, ADMIN)) == 1)
    assert wait_for(daemon.settled)
    seerr.cancel_in_web_ui(request_id)   # Seerr sends no notification for a cancel

    daemon.text("APPROVE 1")
    gone = ("Request 1 (Dune: Part Two (2024)) is no longer in Seerr: it was cancelled or "
            "removed there, so there is nothing to decide.")
    assert wait_for(lambda: sent_to(fake_twilio, ADMIN)[1:] == [gone])
    assert outbox(daemon, "SELECT status FROM seerr_approvals") == [("denied",)], "closed"
    assert seerr.calls_to("POST", f"/request/{request_id}/approve") == []
    assert sent_to(fake_twilio, MEMBER) == []


def test_approve_that_seerr_refuses_as_already_decided_says_by_whom(household, seerr,
                                                                    fake_twilio):
    """Seerr answers the approval 409: the owner declined it in the web UI a moment
    before. Alex is told it was decided, and by whom Seerr says."""
    daemon, ids = household()
    request_id = seerr.request_in_web_ui(ids["sam"], "movie", DUNE_TWO)
    assert posted(seerr) == [200]
    assert wait_for(lambda: len(sent_to(fake_twilio, ADMIN)) == 1)
    assert wait_for(daemon.settled)
    seerr.refuse_next("POST", f"/request/{request_id}/approve", 409,
                      "Request has already been declined.",
                      meanwhile=lambda: seerr.decline_in_web_ui(request_id, as_user=1))

    daemon.text("APPROVE 1")
    assert wait_for(lambda: sent_to(fake_twilio, ADMIN)[1:] == [
        "Request 1 (Dune: Part Two (2024)) was already denied by a Seerr user, owner."])
    assert seerr.request_status(request_id) == 3, "the owner's decision stands"
    assert outbox(daemon, "SELECT status FROM seerr_approvals") == [("denied",)]
    assert wait_for(lambda: sent_to(fake_twilio, MEMBER) == [   # Seerr's MEDIA_DECLINED
        "A Seerr user, owner, didn't approve Dune: Part Two (2024), so it wasn't added."])


def test_a_member_told_someone_else_asked_hears_when_it_is_ready(household, seerr,
                                                                 fake_twilio, fake_llm,
                                                                 stack):
    """Theo asked for the film in Seerr's web UI; Sam's text meets Seerr's 409 and Sam is
    told he will hear when it is ready. Only Seerr's webhook reports it ready (for Theo's
    request): Sam is texted, once, even when Radarr's import comes too."""
    daemon, ids = household(extra=f"""[radarr]
url = "{stack.servers['radarr'].url}"
api_key = "{API_KEY}"
""")
    request_id = seerr.request_in_web_ui(ids["theo"], "movie", DUNE_TWO)
    fake_llm.enqueue_tool_calls([("add_movie", {"tmdb_id": DUNE_TWO})])
    fake_llm.set_responder(relay)
    daemon.text("get dune part two please", sender=MEMBER)
    promised = ("Dune: Part Two (2024) was already requested in Seerr by a Seerr user, theo; "
                "you will get a text when it is ready.")
    assert wait_for(lambda: sent_to(fake_twilio, MEMBER) == [promised])

    seerr.approve_in_web_ui(request_id, as_user=ids["alex"])
    seerr.set_media_status("movie", DUNE_TWO, MediaStatus.AVAILABLE)
    assert posted(seerr) == [200, 200, 200]   # theo's pending, approved, available
    ready = "Dune: Part Two (2024) is ready to watch."
    assert wait_for(lambda: sent_to(fake_twilio, MEMBER) == [promised, ready])
    response = requests.post(daemon.url + "/hooks/radarr", json=radarr_download(DUNE_TWO),
                             headers=basic(SECRET), timeout=10)
    assert response.status_code == 200, response.text
    assert wait_for(daemon.settled)
    assert sent_to(fake_twilio, MEMBER) == [promised, ready], "once, whoever tells first"


def test_the_shipped_payload_template_works_as_seerrs_default_does(household, seerr,
                                                                   fake_twilio):
    """The operator pasted docs/seerr-webhook.json as Seerr's JSON Payload: Sam's 4K
    request from the web UI reaches Alex marked 4K, and Alex's DENY reaches Sam."""
    daemon, ids = household()
    seerr.configure_webhook(daemon.url + "/hooks/seerr", authorization=BEARER,
                            template=SHIPPED.read_text(encoding="utf-8"))
    seerr.user(ids["sam"]).permissions |= Permission.REQUEST_4K
    request_id = seerr.request_in_web_ui(ids["sam"], "movie", DUNE_TWO, is_4k=True)
    assert posted(seerr) == [200]
    assert wait_for(lambda: sent_to(fake_twilio, ADMIN) == [
        "Sam asked for Dune: Part Two (2024) in 4K. Reply APPROVE 1 or DENY 1"])
    assert wait_for(daemon.settled)
    daemon.text("DENY 1")
    assert wait_for(lambda: seerr.request_status(request_id) == 3)
    assert wait_for(lambda: sent_to(fake_twilio, MEMBER) == [
        "Alex didn't approve Dune: Part Two (2024), so it wasn't added."])
    assert posted(seerr) == [200, 200]
