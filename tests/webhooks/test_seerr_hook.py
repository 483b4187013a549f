"""``/hooks/seerr`` in process: Seerr's own payloads (the fake's default template) posted to
the route with its Authorization header, the real Seerr client behind it on the fake Seerr.
What Seerr's log would show (the status and the one line) and what the household is texted."""

import base64
import json

import pytest
from flask import Flask

from mediabot.seerr.notifications import SeerrNotices
from mediabot.webhooks.seerr_hook import SeerrHook
from tests.fakes.seerr_model import Notification
from tests.support.clock import START
from tests.support.household import ADMIN, SECRET
from tests.support.seerr_house import DUNE_TWO, seerr_house

BEARER = {"Authorization": f"Bearer {SECRET}"}


@pytest.fixture
def house(database, seerr):
    house = seerr_house(seerr)
    yield house
    house.client.close()


def hook(house, secret=SECRET):
    app = Flask(__name__)
    SeerrHook(secret, SeerrNotices(house.client, house.approvals, clock=lambda: START)
              ).init_app(app)
    return app.test_client()


def test_a_pending_request_is_put_to_the_admins(house):
    request = house.sam_asks_for_dune_two()
    body = house.seerr.webhook_body(Notification.MEDIA_PENDING, request)
    response = hook(house).post("/hooks/seerr", json=body, headers=BEARER)
    assert response.status_code == 200
    assert response.get_json() == {"ok": True, "result": "asked"}
    assert house.texts.to(ADMIN) == [f"Sam asked for {DUNE_TWO}. Reply APPROVE 1 or DENY 1"]


def test_basic_auth_with_the_secret_as_password_is_taken_and_a_trailing_slash(house):
    token = base64.b64encode(f"seerr:{SECRET}".encode()).decode()
    body = house.seerr.webhook_body(Notification.TEST_NOTIFICATION)
    response = hook(house).post("/hooks/seerr/", json=body,
                                headers={"Authorization": f"Basic {token}"})
    assert (response.status_code, response.get_json()["result"]) == (200, "test ok")


@pytest.mark.parametrize("authorization", [None, "Bearer wrong", f"Bearer {SECRET}x"])
def test_a_wrong_or_missing_secret_is_refused_and_nothing_is_texted(house, authorization):
    request = house.sam_asks_for_dune_two()
    body = house.seerr.webhook_body(Notification.MEDIA_PENDING, request)
    headers = {"Authorization": authorization} if authorization else {}
    response = hook(house).post("/hooks/seerr", json=body, headers=headers)
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == 'Bearer realm="mediabot"'
    assert "Authorization Header" in response.get_data(as_text=True)
    assert SECRET not in response.get_data(as_text=True)
    assert house.texts.sent == []


def test_without_a_webhook_secret_the_hook_is_off(house):
    response = hook(house, secret="").post("/hooks/seerr", json={}, headers=BEARER)
    assert response.status_code == 403
    assert "set [notifications] webhook_secret" in response.get_data(as_text=True)


@pytest.mark.parametrize("body", [b"not json", b"[]", json.dumps({"subject": "x"}).encode()])
def test_a_payload_seerr_would_not_send_is_answered_400_in_one_line(house, body):
    response = hook(house).post("/hooks/seerr", data=body, headers={
        **BEARER, "Content-Type": "application/json"})
    assert response.status_code == 400
    assert len(response.get_data(as_text=True).strip().splitlines()) == 1
    assert house.texts.sent == []


def test_a_body_too_large_is_refused(house):
    response = hook(house).post("/hooks/seerr", data=b"{" + b" " * 2_000_000 + b"}",
                                headers={**BEARER, "Content-Type": "application/json"})
    assert response.status_code == 413
    assert "KiB" in response.get_data(as_text=True)


def test_when_seerr_cannot_be_asked_who_made_the_request_the_answer_is_503(house):
    request = house.sam_asks_for_dune_two()
    house.seerr.approve_in_web_ui(request, as_user=house.ids["alex"])
    body = house.seerr.webhook_body(Notification.MEDIA_APPROVED, request)
    house.seerr.down()
    try:
        response = hook(house).post("/hooks/seerr", json=body, headers=BEARER)
    finally:
        house.seerr.up()
    assert response.status_code == 503
    assert f"could not ask Seerr about request {request}" in response.get_data(as_text=True)
    assert house.texts.sent == []
