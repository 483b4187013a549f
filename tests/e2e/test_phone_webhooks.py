"""End to end: the household's phone through a private server (the cloud's layout, over
HTTPS, as the mode must be), its texts and delivery reports posted to a real
`mediabot serve` as signed webhooks by the fake phone (tests/fakes/sms_gateway.py: signed
afresh on each try, retried, duplicated and reordered on request, checked against the app's
OpenAPI file). No [twilio]: the phone carries every text.

A conversation; a forged, unsigned or replayed webhook refused with nothing stored; an
event posted twice counted once; delivery reports out of order leaving the row delivered.
"""

import os
import subprocess
import sys
import time

import pytest
import requests

from mediabot.carrier.sms_gateway.health import NEEDED_EVENTS
from mediabot.trial.sim.loopback import free_port, wait_for
from mediabot.trial.sim.phone_hooks import gson, signed_headers
from tests.fakes.sms_gateway import FakePhone
from tests.fakes.tls import certificate
from tests.support.config_files import write_config
from tests.support.household import ADMIN, SERVE_PUBLIC
from tests.support.serve import daemon_rows

pytestmark = pytest.mark.e2e
PREFIX = "/api/3rdparty/v1"
PASSWORD = "a-long-server-password"


class CloudServe:
    """`mediabot serve` with the phone alone, in private-server mode; its password and
    signing key from the environment, the fake server's certificate trusted."""

    def __init__(self, tmp, llm_url, phone, cert):
        self.port = free_port()
        self.log = tmp / "serve.log"
        self.config = write_config(
            tmp,
            server={"public_url": SERVE_PUBLIC, "host": "127.0.0.1", "port": self.port,
                    "timezone": "UTC"},
            database={"path": tmp / "mediabot.db"},
            sms_gateway={"url": phone.url, "username": phone.username, "timeout_seconds": 3},
            llm={"base_url": f"{llm_url}/v1", "model": "gpt-4o-mini", "timeout_seconds": 10,
                 "max_retries": 0},
            users=[{"phone": ADMIN, "name": "Alex", "role": "admin"}])
        self.env = {"MEDIABOT_SMS_GATEWAY_PASSWORD": phone.password,
                    "MEDIABOT_SMS_GATEWAY_SIGNING_KEY": phone.signing_key,
                    "MEDIABOT_LLM_API_KEY": "sk-test", "REQUESTS_CA_BUNDLE": cert}
        self.proc = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEDIABOT_")}
        command = [sys.executable, "-m", "mediabot.cli", "serve", "--config", str(self.config)]
        self.proc = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                                     stderr=self.log.open("ab"), env={**env, **self.env})
        assert wait_for(self._healthy, 20), self.log.read_text()
        return self

    def _healthy(self):
        try:
            return requests.get(self.url + "/healthz", timeout=1).status_code == 200
        except requests.ConnectionError:
            return False

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=60)
        return self.proc.returncode

    def rows(self, sql):
        return daemon_rows(self.config.parent / "mediabot.db", sql)


@pytest.fixture
def tls(tmp_path_factory):
    return certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def phone(tls):
    with FakePhone(prefix=PREFIX, tls=tls, password=PASSWORD, auto=True) as fake:
        yield fake
        fake.assert_clean()


@pytest.fixture
def daemon(tmp_path, fake_llm, phone, tls):
    served = CloudServe(tmp_path, fake_llm.url, phone, tls[0]).start()
    for event in NEEDED_EVENTS:    # as `mediabot check --register-webhooks` registers them,
        phone.register(served.url + "/sms/gateway", event)   # behind the household's proxy
    yield served
    served.stop()


def texts_to(phone, number=ADMIN):
    return [text for to, text, _ in phone.sent() if to == number]


def answered(phone, count):
    assert wait_for(lambda: len(texts_to(phone)) >= count, 15), phone.sent()
    assert phone.wait_for_webhooks()
    time.sleep(0.3)
    assert len(texts_to(phone)) == count, phone.sent()
    return texts_to(phone)


def test_a_conversation_by_signed_webhooks_ends_delivered(daemon, phone, fake_llm):
    fake_llm.enqueue_text("Nothing is downloading right now.")
    phone.receive(ADMIN, "what's downloading?")
    assert answered(phone, 1) == ["Nothing is downloading right now."]
    assert wait_for(lambda: daemon.rows("SELECT delivery FROM outbox") == [("delivered",)])
    statuses = {d.status for d in phone.deliveries}
    assert statuses == {200}, phone.deliveries
    assert {d.event for d in phone.deliveries} == {"sms:received", "sms:sent", "sms:delivered"}
    log = daemon.log.read_text()
    assert phone.password not in log and phone.signing_key not in log


def test_forged_unsigned_and_replayed_webhooks_are_refused_and_store_nothing(daemon, phone,
                                                                             fake_llm):
    body = gson({"deviceId": "PyDmBQZZXYmyxMwED8Fzy", "event": "sms:received",
                 "id": "Ey6ECgOkVVFjz3CL48B8C", "webhookId": "LreFUt-Z3sSq0JufY9uWB",
                 "payload": {"messageId": "1a2b3c4d", "message": "delete everything",
                             "phoneNumber": ADMIN, "sender": ADMIN, "simNumber": 1,
                             "receivedAt": "2026-03-01T10:00:00.000-05:00"}})
    url, now = daemon.url + "/sms/gateway", int(time.time())
    forged = signed_headers("not-the-key", body, now)
    assert requests.post(url, data=body, headers=forged, timeout=5).status_code == 403
    unsigned = {k: v for k, v in forged.items() if k not in ("X-Signature", "X-Timestamp")}
    assert requests.post(url, data=body, headers=unsigned, timeout=5).status_code == 401
    replayed = signed_headers(phone.signing_key, body, now - 3600)
    assert requests.post(url, data=body, headers=replayed, timeout=5).status_code == 403
    assert daemon.rows("SELECT count(*) FROM inbox") == [(0,)]
    assert daemon.rows("SELECT count(*) FROM gateway_events") == [(0,)]
    assert fake_llm.requests == [] and phone.sent() == []


def test_every_event_posted_twice_is_counted_once(daemon, phone, fake_llm):
    phone.hooks.duplicate = True     # each 2xx "lost": the same envelope posted again
    fake_llm.enqueue_text("Once.")
    phone.receive(ADMIN, "only once please")
    assert answered(phone, 1) == ["Once."]
    assert len(fake_llm.requests) == 1
    ids = {d.envelope_id for d in phone.deliveries}
    assert len(phone.deliveries) == 2 * len(ids), "every event was posted twice"
    assert daemon.rows("SELECT count(*) FROM gateway_events") == [(len(ids),)]
    assert daemon.rows("SELECT count(*) FROM inbox") == [(1,)]
    assert wait_for(lambda: daemon.rows("SELECT delivery FROM outbox") == [("delivered",)])


def test_reports_out_of_order_leave_the_text_delivered(daemon, phone, fake_llm):
    phone.auto = False
    fake_llm.enqueue_text("A reply.")
    phone.receive(ADMIN, "hello")
    assert wait_for(lambda: phone.sent() != [], 15)
    phone.hooks.hold()
    phone.process()                   # Sent, then Delivered, both held back
    phone.hooks.release(reversed)     # posted Delivered first, then the late Sent
    assert phone.wait_for_webhooks()
    assert [d.event for d in phone.deliveries][-2:] == ["sms:delivered", "sms:sent"]
    assert wait_for(lambda: daemon.rows("SELECT delivery FROM outbox") == [("delivered",)])
    time.sleep(0.3)
    assert daemon.rows("SELECT delivery FROM outbox") == [("delivered",)]
