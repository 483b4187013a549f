"""The JSON payload mediabot ships for Seerr's webhook (docs/seerr-webhook.json) and Seerr's
default template read alike: every notification, rendered by the fake Seerr as Seerr's
webhook agent renders a template, is the same notification to mediabot."""

import json
from pathlib import Path

import pytest

from mediabot.seerr.api.payload import read_notification
from tests.fakes.seerr import FakeSeerr
from tests.fakes.seerr_model import Notification, Permission
from tests.fakes.seerr_webhook import DEFAULT_TEMPLATE, render

SHIPPED = Path(__file__).parents[3] / "docs" / "seerr-webhook.json"
KINDS = [Notification.MEDIA_PENDING, Notification.MEDIA_APPROVED,
         Notification.MEDIA_AUTO_APPROVED, Notification.MEDIA_AVAILABLE,
         Notification.MEDIA_DECLINED, Notification.MEDIA_FAILED]


@pytest.fixture(scope="module")
def requests_in_seerr():
    seerr = FakeSeerr()
    sam = seerr.add_user("sam", permissions=Permission.REQUEST | Permission.REQUEST_4K)
    film = seerr.request_in_web_ui(sam, "movie", 693134, is_4k=True)
    series = seerr.request_in_web_ui(sam, "tv", 95396, seasons=[1])
    return seerr, [seerr.state.requests[film], seerr.state.requests[series]]


def test_the_shipped_template_is_json_in_seerrs_template_form():
    template = json.loads(SHIPPED.read_text(encoding="utf-8"))
    assert template["notification_type"] == "{{notification_type}}"
    assert template["{{request}}"] == {"request_id": "{{request_id}}"}


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_the_shipped_template_and_seerrs_default_say_the_same(requests_in_seerr, kind):
    seerr, made = requests_in_seerr
    shipped = SHIPPED.read_text(encoding="utf-8")
    for request in made:
        payload = seerr.hooks.payload(kind, request)
        ours = read_notification(json.dumps(render(shipped, kind, payload)).encode())
        default = read_notification(json.dumps(render(DEFAULT_TEMPLATE, kind,
                                                       payload)).encode())
        assert ours == default
        assert ours.request_id == request.id and ours.kind.value == kind.name
    test = seerr.hooks.payload(Notification.TEST_NOTIFICATION, None)
    body = json.dumps(render(shipped, Notification.TEST_NOTIFICATION, test)).encode()
    assert read_notification(body).kind == "TEST_NOTIFICATION"


def test_the_4k_request_reads_as_4k_from_either(requests_in_seerr):
    seerr, (film, _series) = requests_in_seerr
    payload = seerr.hooks.payload(Notification.MEDIA_PENDING, film)
    for template in (SHIPPED.read_text(encoding="utf-8"), DEFAULT_TEMPLATE):
        assert read_notification(json.dumps(render(template, Notification.MEDIA_PENDING,
                                                   payload)).encode()).is_4k
