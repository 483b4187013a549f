"""Seerr's approvals and notifications by text, through an in-process daemon and the fake
Seerr: requests pending in Seerr are put to the admins as APPROVE n / DENY n and carried
out as the admin's own Seerr user; Seerr's webhook (its default payload, as the fake renders
it) reaches the requester once, and the admins for failures."""

import base64

import pytest

from mediabot.store import db
from tests.fakes.arr_webhooks import radarr_download
from tests.fakes.seerr_model import MediaStatus, Notification, Permission
from tests.support.arr_hooks import basic
from tests.support.household import ADMIN, ADMIN2, MEMBER, SECRET
from tests.support.prompts import person_part
from tests.support.sent import sent_to
from tests.support.texting import settle, text

DUNE_TWO = 693134
ARRIVAL = 329865
SEVERANCE_TMDB = 95396
QUESTION = "Sam asked for Dune: Part Two (2024). Reply APPROVE 1 or DENY 1"
BEARER = {"Authorization": f"Bearer {SECRET}"}


@pytest.fixture
def home(daemon_for, seerr):
    """A daemon on the fake Seerr: Alex (admin, Seerr user "alex" with Manage Requests),
    Sam (member, Seerr user "sam"), and a second admin Jo whose Seerr user may only
    request. Returns (daemon, Seerr ids by name)."""
    def build(**seerr_options):
        ids = {"alex": seerr.add_user("alex", permissions=Permission.MANAGE_REQUESTS),
               "sam": seerr.add_user("sam", permissions=Permission.REQUEST),
               "jo": seerr.add_user("jo", permissions=Permission.REQUEST)}
        daemon = daemon_for(seerr={"url": seerr.url, "api_key": seerr.api_key,
                                   **seerr_options},
                            notifications={"webhook_secret": SECRET})
        db.User.create(phone=ADMIN2, display_name="Jo", role="admin", seerr_user="jo")
        db.User.update(seerr_user="alex").where(db.User.phone == ADMIN).execute()
        db.User.update(seerr_user="sam").where(db.User.phone == MEMBER).execute()
        return daemon, ids
    return build


def seerr_says(daemon, seerr, kind, request_id=None, headers=BEARER):
    """Seerr's webhook agent posts its default payload for ``kind`` to the daemon."""
    body = seerr.webhook_body(kind, request_id)
    return daemon.app.test_client().post("/hooks/seerr", json=body, headers=headers)


def test_a_pending_request_is_approved_by_text_as_the_admins_own_seerr_user(home, seerr,
                                                                          fake_twilio):
    daemon, ids = home()
    request_id = seerr.request_in_web_ui(ids["sam"], "movie", DUNE_TWO)
    assert seerr_says(daemon, seerr, Notification.MEDIA_PENDING, request_id).status_code == 200
    assert sent_to(fake_twilio, ADMIN) == [QUESTION]
    assert sent_to(fake_twilio, ADMIN2) == [QUESTION]
    seerr_says(daemon, seerr, Notification.MEDIA_PENDING, request_id)   # a repeat asks nobody
    assert len(fake_twilio.sent) == 2

    text(daemon.app.test_client(), "APPROVE 1", sender=ADMIN)
    settle(daemon)
    assert seerr.request_status(request_id) == 2
    [call] = seerr.calls_to("POST", f"/request/{request_id}/approve")
    assert call.api_user == str(ids["alex"]), "approved as Alex's own Seerr user"
    assert sent_to(fake_twilio, ADMIN)[-1] == ("Approved request 1: Dune: Part Two (2024) is "
                                               "added. Sam has been told.")
    approved = "Alex approved Dune: Part Two (2024): it's added, and I'll text you when it's ready."
    assert sent_to(fake_twilio, MEMBER) == [approved]

    seerr_says(daemon, seerr, Notification.MEDIA_APPROVED, request_id)  # Seerr's own post
    seerr.set_media_status("movie", DUNE_TWO, MediaStatus.AVAILABLE)
    for _ in range(3):   # Seerr's post, delivered three times
        assert seerr_says(daemon, seerr, Notification.MEDIA_AVAILABLE,
                          request_id).status_code == 200
    assert sent_to(fake_twilio, MEMBER) == [approved, "Dune: Part Two (2024) is ready to watch."]

    text(daemon.app.test_client(), "DENY 1", sender=ADMIN2)
    settle(daemon)
    assert sent_to(fake_twilio, ADMIN2)[-1] == ("Request 1 (Dune: Part Two (2024)) was already "
                                                "approved by Alex.")
    assert seerr.request_status(request_id) == 5, "Seerr was not asked again"


def test_an_admin_without_manage_requests_is_told_and_the_request_keeps_waiting(
        home, seerr, fake_twilio):
    daemon, ids = home()
    request_id = seerr.request_in_web_ui(ids["sam"], "movie", DUNE_TWO)
    seerr_says(daemon, seerr, Notification.MEDIA_PENDING, request_id)
    text(daemon.app.test_client(), "APPROVE 1", sender=ADMIN2)
    settle(daemon)
    assert sent_to(fake_twilio, ADMIN2)[-1] == (
        "Seerr refused: your Seerr user needs the Manage Requests permission to decide request "
        "1 (Dune: Part Two (2024)). An admin can grant it in Seerr's Users settings.")
    assert seerr.request_status(request_id) == 1
    text(daemon.app.test_client(), "DENY 1", sender=ADMIN)
    settle(daemon)
    assert seerr.request_status(request_id) == 3
    assert sent_to(fake_twilio, MEMBER) == ["Alex didn't approve Dune: Part Two (2024), so it "
                                            "wasn't added."]
    seerr_says(daemon, seerr, Notification.MEDIA_DECLINED, request_id)
    assert len(sent_to(fake_twilio, MEMBER)) == 1, "Seerr's own post of it texts nobody again"


def test_an_admin_not_linked_to_seerr_is_told_how_to_be(home, seerr, fake_twilio):
    daemon, ids = home()
    db.User.update(seerr_user=None).where(db.User.phone == ADMIN).execute()
    request_id = seerr.request_in_web_ui(ids["sam"], "movie", DUNE_TWO)
    seerr_says(daemon, seerr, Notification.MEDIA_PENDING, request_id)
    text(daemon.app.test_client(), "APPROVE 1", sender=ADMIN)
    settle(daemon)
    assert sent_to(fake_twilio, ADMIN)[-1] == (
        "Your number is not linked to a Seerr user, so request 1 can't be decided by text. The "
        "operator can link you (seerr_user in [[users]]).")
    assert seerr.request_status(request_id) == 1


def test_decided_in_the_web_ui_first_nobody_decides_it_again(home, seerr, fake_twilio):
    daemon, ids = home()
    request_id = seerr.request_in_web_ui(ids["sam"], "movie", DUNE_TWO)
    daemon.scheduler.get_job("seerr-pending").func()   # the sweep: no webhook configured
    assert sent_to(fake_twilio, ADMIN) == [QUESTION]
    seerr.decline_in_web_ui(request_id, as_user=ids["alex"])
    daemon.scheduler.get_job("seerr-pending").func()   # the sweep sees it decided
    assert db.SeerrApproval.get().status == "denied"
    text(daemon.app.test_client(), "APPROVE 1", sender=ADMIN2)
    settle(daemon)
    assert sent_to(fake_twilio, ADMIN2)[-1] == ("Request 1 (Dune: Part Two (2024)) was already "
                                                "denied by Alex."), "by whom, as Seerr says"
    assert seerr.request_status(request_id) == 3
    assert seerr.calls_to("POST", f"/request/{request_id}/approve") == []


def test_a_failed_request_reaches_the_member_and_every_admin_once(home, seerr, fake_twilio):
    daemon, ids = home()
    request_id = seerr.request_in_web_ui(ids["sam"], "movie", ARRIVAL)
    seerr.approve_in_web_ui(request_id, as_user=ids["alex"])
    seerr.fail_request(request_id)
    for _ in range(2):
        seerr_says(daemon, seerr, Notification.MEDIA_FAILED, request_id)
    assert sent_to(fake_twilio, MEMBER) == [
        "Arrival (2016) could not be requested: Seerr couldn't pass it on to Radarr or "
        "Sonarr. The admins have been told."]
    admin_text = ("Seerr couldn't pass Sam's request for Arrival (2016) on to Radarr or Sonarr "
                  f"(Seerr request {request_id} failed). Retry it in Seerr.")
    assert sent_to(fake_twilio, ADMIN) == [admin_text]
    assert sent_to(fake_twilio, ADMIN2) == [admin_text]


def test_radarr_and_seerr_announce_the_same_film_once_whichever_comes_first(home, seerr,
                                                                            fake_twilio):
    daemon, ids = home()
    first = seerr.request_in_web_ui(ids["sam"], "movie", DUNE_TWO)
    seerr.approve_in_web_ui(first, as_user=ids["alex"])
    seerr_says(daemon, seerr, Notification.MEDIA_APPROVED, first)
    response = daemon.app.test_client().post("/hooks/radarr", json=radarr_download(DUNE_TWO),
                                             headers=basic(SECRET, user="radarr"))
    assert response.status_code == 200
    seerr.set_media_status("movie", DUNE_TWO, MediaStatus.AVAILABLE)
    assert seerr_says(daemon, seerr, Notification.MEDIA_AVAILABLE,
                      first).get_json()["result"] == "already told"
    ready = [t for t in sent_to(fake_twilio, MEMBER) if "ready to watch" in t]
    assert ready == ["Dune: Part Two is ready to watch."]

    second = seerr.request_in_web_ui(ids["sam"], "movie", ARRIVAL, )
    seerr.approve_in_web_ui(second, as_user=ids["alex"])
    seerr.set_media_status("movie", ARRIVAL, MediaStatus.AVAILABLE)
    seerr_says(daemon, seerr, Notification.MEDIA_AVAILABLE, second)
    daemon.app.test_client().post("/hooks/radarr", json=radarr_download(ARRIVAL, "Arrival"),
                                  headers=basic(SECRET, user="radarr"))
    ready = [t for t in sent_to(fake_twilio, MEMBER) if "ready to watch" in t]
    assert ready[1:] == ["Arrival (2016) is ready to watch."]


def test_partly_available_tells_the_seasons_asked_for(home, seerr, fake_twilio):
    """Seerr has no "partly available" notification: a request for season 1 of a longer
    show completes as MEDIA_AVAILABLE with the media PARTIALLY_AVAILABLE."""
    daemon, ids = home()
    request_id = seerr.request_in_web_ui(ids["sam"], "tv", SEVERANCE_TMDB, seasons=[1])
    seerr.approve_in_web_ui(request_id, as_user=ids["alex"])
    seerr.set_media_status("tv", SEVERANCE_TMDB, MediaStatus.PARTIALLY_AVAILABLE,
                           seasons={1: MediaStatus.AVAILABLE})
    assert seerr.webhook_body(Notification.MEDIA_AVAILABLE, request_id)["media"]["status"] \
        == "PARTIALLY_AVAILABLE"
    seerr_says(daemon, seerr, Notification.MEDIA_AVAILABLE, request_id)
    assert sent_to(fake_twilio, MEMBER) == ["Severance (2022): season 1 is ready to watch."]


def test_the_ready_text_carries_seerrs_link_when_the_operator_allows_it(home, seerr,
                                                                       fake_twilio):
    daemon, ids = home(link_to_library=True)
    request_id = seerr.request_in_web_ui(ids["sam"], "movie", DUNE_TWO)
    seerr.approve_in_web_ui(request_id, as_user=ids["alex"])
    seerr.set_media_status("movie", DUNE_TWO, MediaStatus.AVAILABLE)
    seerr_says(daemon, seerr, Notification.MEDIA_AVAILABLE, request_id)
    [ready] = sent_to(fake_twilio, MEMBER)
    assert ready.startswith("Dune: Part Two (2024) is ready to watch. https://app.plex.tv/"
                            "desktop#!/server/")


def test_the_hook_takes_bearer_or_basic_and_refuses_anything_else(home, seerr, fake_twilio):
    daemon, _ = home()
    client = daemon.app.test_client()
    body = seerr.webhook_body(Notification.TEST_NOTIFICATION)
    assert client.post("/hooks/seerr", json=body, headers=BEARER).get_json()["result"] == \
        "test ok"
    assert client.post("/hooks/seerr", json=body,
                       headers=basic(SECRET, user="seerr")).status_code == 200
    for headers in ({}, {"Authorization": "Bearer wrong"}, basic("wrong"),
                    {"Authorization": SECRET}):
        response = client.post("/hooks/seerr", json=body, headers=headers)
        assert response.status_code == 401
        assert SECRET not in response.get_data(as_text=True)
    broken = client.post("/hooks/seerr", data=b"{not json", headers=BEARER)
    assert broken.status_code == 400 and broken.get_data(as_text=True).startswith(
        "the body is not JSON")
    unnamed = client.post("/hooks/seerr", json={"notification_type": "MEDIA_AVAILABLE",
                                                "request": None}, headers=BEARER)
    assert unnamed.status_code == 400 and "request_id" in unnamed.get_data(as_text=True)
    assert fake_twilio.sent == []


def test_basic_auth_in_iso_8859_1_as_sonarr_sends_it(home, seerr):
    daemon, _ = home()
    token = base64.b64encode(b"seerr:" + SECRET.encode("iso-8859-1")).decode()
    body = seerr.webhook_body(Notification.TEST_NOTIFICATION)
    assert daemon.app.test_client().post(
        "/hooks/seerr", json=body, headers={"Authorization": f"Basic {token}"}).status_code == 200


def test_each_admin_is_asked_in_their_language_and_an_unlinked_requester_by_seerr_name(
        home, seerr, fake_twilio):
    daemon, _ = home()
    db.User.update(language="es").where(db.User.phone == ADMIN2).execute()
    kim = seerr.add_user("kim", permissions=Permission.REQUEST)   # nobody's link
    request_id = seerr.request_in_web_ui(kim, "movie", DUNE_TWO)
    seerr_says(daemon, seerr, Notification.MEDIA_PENDING, request_id)
    assert sent_to(fake_twilio, ADMIN) == ["A Seerr user, kim, asked for Dune: Part Two (2024). "
                                           "Reply APPROVE 1 or DENY 1"]
    assert sent_to(fake_twilio, ADMIN2) == ["Un usuario de Seerr, kim, pidio Dune: Part Two "
                                            "(2024). Responde APROBAR 1 o RECHAZAR 1"]
    text(daemon.app.test_client(), "APPROVE 1", sender=ADMIN)
    settle(daemon)
    assert sent_to(fake_twilio, ADMIN)[-1] == "Approved request 1 (Dune: Part Two (2024)) in Seerr."
    assert seerr.request_status(request_id) == 2
    assert sent_to(fake_twilio, MEMBER) == [], "kim is nobody here: nobody else is told"


def test_with_seerr_down_the_hook_says_503_and_texts_nobody(home, seerr, fake_twilio):
    daemon, ids = home()
    request_id = seerr.request_in_web_ui(ids["sam"], "movie", DUNE_TWO)
    body = seerr.webhook_body(Notification.MEDIA_APPROVED, request_id)
    seerr.down()
    try:
        response = daemon.app.test_client().post("/hooks/seerr", json=body, headers=BEARER)
    finally:
        seerr.up()
    assert response.status_code == 503
    assert response.get_data(as_text=True).startswith("could not ask Seerr about request 1")
    assert seerr.api_key not in response.get_data(as_text=True)
    assert fake_twilio.sent == []


def test_an_auto_approved_request_is_remembered_for_radarrs_ready_text(home, seerr,
                                                                      fake_twilio):
    """Sam may auto-approve: nobody is asked, Sam is not texted about the approval, and
    Radarr's own webhook later tells Sam (the request made in Seerr is known here)."""
    daemon, ids = home()
    seerr.user(ids["sam"]).permissions |= Permission.AUTO_APPROVE
    request_id = seerr.request_in_web_ui(ids["sam"], "movie", DUNE_TWO)
    assert seerr.request_status(request_id) == 2
    seerr_says(daemon, seerr, Notification.MEDIA_AUTO_APPROVED, request_id)
    assert fake_twilio.sent == []
    daemon.app.test_client().post("/hooks/radarr", json=radarr_download(DUNE_TWO),
                                  headers=basic(SECRET, user="radarr"))
    assert sent_to(fake_twilio, MEMBER) == ["Dune: Part Two is ready to watch."]


def test_an_admin_asking_the_model_hears_what_waits_in_seerr(home, seerr, fake_llm):
    daemon, ids = home()
    request_id = seerr.request_in_web_ui(ids["sam"], "movie", DUNE_TWO)
    seerr_says(daemon, seerr, Notification.MEDIA_PENDING, request_id)
    fake_llm.enqueue_text("Sam's Dune: Part Two waits: text APPROVE 1 or DENY 1.")
    text(daemon.app.test_client(), "anything waiting for me?", sender=ADMIN)
    settle(daemon)
    waiting = person_part(fake_llm.requests[-1])   # an admin's part of the prompt (issue 31)
    assert "Requests waiting for approval in Seerr: #1 Sam: Dune: Part Two (2024)." in waiting


def test_an_answer_while_seerr_is_down_keeps_the_request_waiting(home, seerr, fake_twilio):
    daemon, ids = home()
    request_id = seerr.request_in_web_ui(ids["sam"], "movie", DUNE_TWO)
    seerr_says(daemon, seerr, Notification.MEDIA_PENDING, request_id)
    seerr.down()
    try:
        text(daemon.app.test_client(), "APPROVE 1", sender=ADMIN)
        settle(daemon)
    finally:
        seerr.up()
    assert sent_to(fake_twilio, ADMIN)[-1] == ("Seerr did not answer, so request 1 (Dune: Part "
                                               "Two (2024)) is still waiting. Try again in a "
                                               "while.")
    text(daemon.app.test_client(), "APPROVE 1", sender=ADMIN)
    settle(daemon)
    assert seerr.request_status(request_id) == 2
    assert sent_to(fake_twilio, ADMIN)[-1].startswith("Approved request 1:")


def test_approved_by_text_with_only_radarrs_hook_sam_hears_it_is_ready(home, seerr,
                                                                       fake_twilio):
    """No Seerr webhook: the sweep finds Sam's web-UI request, Alex approves it by text and
    Sam is told he will hear when it is ready; Radarr's import is what tells him."""
    daemon, ids = home()
    seerr.request_in_web_ui(ids["sam"], "movie", DUNE_TWO)
    daemon.scheduler.get_job("seerr-pending").func()
    text(daemon.app.test_client(), "APPROVE 1", sender=ADMIN)
    settle(daemon)
    promised = "Alex approved Dune: Part Two (2024): it's added, and I'll text you when it's ready."
    assert sent_to(fake_twilio, MEMBER) == [promised]
    response = daemon.app.test_client().post("/hooks/radarr", json=radarr_download(DUNE_TWO),
                                             headers=basic(SECRET, user="radarr"))
    assert response.status_code == 200
    assert sent_to(fake_twilio, MEMBER) == [promised, "Dune: Part Two is ready to watch."]


def test_a_4k_request_is_marked_4k_in_the_admins_text(home, seerr, fake_twilio):
    daemon, ids = home()
    seerr.user(ids["sam"]).permissions |= Permission.REQUEST_4K
    request_id = seerr.request_in_web_ui(ids["sam"], "movie", DUNE_TWO, is_4k=True)
    seerr_says(daemon, seerr, Notification.MEDIA_PENDING, request_id)
    assert sent_to(fake_twilio, ADMIN) == [
        "Sam asked for Dune: Part Two (2024) in 4K. Reply APPROVE 1 or DENY 1"]


def test_a_failure_of_an_admins_own_request_texts_that_admin_once(home, seerr, fake_twilio):
    daemon, ids = home()
    seerr.user(ids["alex"]).permissions |= Permission.REQUEST
    request_id = seerr.request_in_web_ui(ids["alex"], "movie", ARRIVAL)   # auto-approved
    seerr.fail_request(request_id)
    seerr_says(daemon, seerr, Notification.MEDIA_FAILED, request_id)
    assert sent_to(fake_twilio, ADMIN) == [
        "Seerr couldn't pass Alex's request for Arrival (2016) on to Radarr or Sonarr (Seerr "
        "request 1 failed). Retry it in Seerr."]


def test_a_link_once_resolved_is_kept_whatever_names_change_later(home, seerr, fake_twilio):
    """Sam's link "sam" resolved to his Seerr id on his first request; Theo then takes
    "sam" as his Display Name: Theo's request is a stranger's, Sam's stays Sam's."""
    daemon, ids = home()
    first = seerr.request_in_web_ui(ids["sam"], "movie", DUNE_TWO)
    seerr_says(daemon, seerr, Notification.MEDIA_PENDING, first)
    assert db.User.get(db.User.phone == MEMBER).seerr_id == ids["sam"]
    theo = seerr.add_user("theo", permissions=Permission.REQUEST)
    seerr.set_display_name(theo, "sam")
    second = seerr.request_in_web_ui(theo, "movie", ARRIVAL)
    seerr_says(daemon, seerr, Notification.MEDIA_PENDING, second)
    assert sent_to(fake_twilio, ADMIN) == [
        QUESTION, "A Seerr user, sam, asked for Arrival (2016). Reply APPROVE 2 or DENY 2"]
