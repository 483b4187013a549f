"""End to end: the household's Android phone as the only carrier, in Local mode.

A real `mediabot serve` runs with `[sms_gateway]` alone (no `[twilio]`, no public URL),
pointed at the fake phone on loopback (tests/fakes/sms_gateway.py, checked against the
app's OpenAPI file on every call). Texts reach the phone (``phone.receive``); mediabot reads
its inbox, answers through it, and what the household sees is what the phone sent.
"""

import datetime as dt
import os
import random
import statistics
import subprocess
import sys
import threading
import time

import pytest
import requests

from mediabot.trial.sim.arr_fixtures import DUNE_TWO_TMDB, OFFICE_TVDB
from mediabot.trial.sim.loopback import wait_for
from tests.fakes.arr_webhooks import radarr_download
from tests.fakes.sms_gateway import FakePhone
from tests.support.arr_hooks import basic
from tests.support.asking import relay
from tests.support.config_files import write_config
from tests.support.household import ADMIN, SECRET
from tests.support.serve import Serve

QUESTION = "Remove The Office (2005) and delete its 62 GB of files? Reply Y to confirm or N"
REMOVE_OFFICE = [("remove_media", {"kind": "series", "id": OFFICE_TVDB, "delete_files": True})]


class PhoneServe(Serve):
    """`mediabot serve` on the phone alone: the config holds no [twilio] and no public URL,
    and the phone's password comes from the environment."""

    def __init__(self, tmp, llm_url, phone, extra="", poll_seconds=0.2):
        super().__init__(tmp, llm_url, "", "")
        self.config = write_config(
            tmp,
            server={"host": "127.0.0.1", "port": self.port, "timezone": "UTC"},
            database={"path": tmp / "mediabot.db"},
            sms_gateway={"url": phone.url, "username": phone.username,
                         "poll_seconds": poll_seconds, "timeout_seconds": 2},
            llm={"base_url": f"{llm_url}/v1", "model": "gpt-4o-mini", "timeout_seconds": 10,
                 "max_retries": 0},
            notifications={"webhook_secret": SECRET},
            users=[{"phone": ADMIN, "name": "Alex", "role": "admin"}])
        self.config.write_text(self.config.read_text() + extra)
        self.env = {"MEDIABOT_SMS_GATEWAY_PASSWORD": phone.password}

    def start(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEDIABOT_")}
        env.update({"MEDIABOT_LLM_API_KEY": "sk-test", **self.env})
        command = [sys.executable, "-m", "mediabot.cli", "serve", "--config", str(self.config)]
        self.proc = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                                     stderr=self.log.open("ab"), env=env)
        assert wait_for(self._healthy, 20), self.log.read_text()
        return self

    def cli(self, *args):
        """A command the operator runs beside the daemon, with the daemon's environment."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEDIABOT_")}
        return subprocess.run([sys.executable, "-m", "mediabot.cli", *args, "--config",
                               str(self.config)], capture_output=True, text=True, timeout=60,
                              check=True, env={**env, **self.env}).stdout


@pytest.fixture
def phone():
    with FakePhone(auto=True) as fake:
        yield fake
        fake.assert_clean()


@pytest.fixture
def on_phone(tmp_path, fake_llm, phone):
    """Start `mediabot serve` on the phone; killed after the test."""
    made = []

    def start(extra="", poll_seconds=0.2):
        served = PhoneServe(tmp_path, fake_llm.url, phone, extra, poll_seconds)
        made.append(served)
        return served.start()
    yield start
    for served in made:
        served.stop(9)


def texts_to(phone, number=ADMIN):
    return [text for to, text, _ in phone.sent() if to == number]


def answered(phone, count, number=ADMIN):
    """The texts the phone sent ``number``, once there are ``count`` and no more follow."""
    assert wait_for(lambda: len(texts_to(phone, number)) >= count, 15), phone.sent()
    time.sleep(0.6)    # a few more reads of the inbox: nothing more may follow
    assert len(texts_to(phone, number)) == count, phone.sent()
    return texts_to(phone, number)


def test_a_conversation_goes_through_the_phone_with_no_twilio_and_no_public_url(
        on_phone, phone, fake_llm):
    daemon = on_phone()
    fake_llm.enqueue_text("Nothing is downloading right now.")
    phone.receive(ADMIN, "what's downloading?")
    assert answered(phone, 1) == ["Nothing is downloading right now."]
    assert wait_for(lambda: daemon.rows("SELECT delivery FROM outbox") == [("delivered",)])
    assert requests.post(daemon.url + "/sms", data={"From": ADMIN, "Body": "hi"},
                         timeout=5).status_code == 404, "no Twilio: /sms takes nothing"
    sent = phone.calls_to("POST", "/messages")[0].body
    assert sent["phoneNumbers"] == [ADMIN], "E.164 with its +"
    log = daemon.log.read_text()
    assert phone.password not in log
    assert "Alex" in daemon.cli("users", "list")
    shown = daemon.cli("history", "show", ADMIN)
    assert "what's downloading?" in shown and "Nothing is downloading right now." in shown


def test_a_removal_runs_on_the_y_that_answers_its_question(on_phone, phone, fake_llm, stack):
    on_phone("\n" + stack.toml())
    fake_llm.enqueue_tool_calls(REMOVE_OFFICE)
    phone.receive(ADMIN, "delete The Office")
    assert answered(phone, 1)[0].startswith(QUESTION)
    assert any(s["tvdbId"] == OFFICE_TVDB for s in stack.sonarr.library)
    phone.receive(ADMIN, "Y")
    assert answered(phone, 2)[1] == "Removed The Office (2005) and deleted its files."
    assert not any(s["tvdbId"] == OFFICE_TVDB for s in stack.sonarr.library)


def test_a_ready_notice_goes_out_through_the_phone(on_phone, phone, fake_llm, stack):
    daemon = on_phone("\n" + stack.toml())
    fake_llm.enqueue_tool_calls([("add_media", {"tmdb_id": DUNE_TWO_TMDB})])
    fake_llm.set_responder(relay)
    phone.receive(ADMIN, "get dune part two")
    answered(phone, 1)
    response = requests.post(daemon.url + "/hooks/radarr", json=radarr_download(DUNE_TWO_TMDB),
                             headers=basic(SECRET), timeout=10)
    assert response.status_code == 200, response.text
    assert answered(phone, 2)[1] == "Dune: Part Two is ready to watch."


def test_stop_silences_and_start_brings_them_back(on_phone, phone, fake_llm):
    """A personal SIM's network answers no STOP: mediabot confirms it, once, and then
    sends nothing until a START, which it confirms too."""
    daemon = on_phone()
    phone.receive(ADMIN, "STOP")
    assert wait_for(lambda: daemon.rows("SELECT opted_out FROM users") == [(1,)])
    stopped = "You won't get any more texts from me. Send START to get them again."
    assert answered(phone, 1) == [stopped]
    phone.receive(ADMIN, "are you there?")
    assert wait_for(daemon.settled)
    time.sleep(0.6)
    assert texts_to(phone) == [stopped], "nothing follows a STOP"
    assert fake_llm.requests == []
    phone.receive(ADMIN, "START")
    assert wait_for(lambda: daemon.rows("SELECT opted_out FROM users") == [(0,)])
    fake_llm.enqueue_text("Here I am.")
    phone.receive(ADMIN, "hello again")
    assert answered(phone, 3) == [stopped, "Welcome back: you'll get my texts again.",
                                  "Here I am."]


def test_a_burst_read_in_one_poll_is_answered_as_one_turn(on_phone, phone, fake_llm):
    on_phone(poll_seconds=1.0)
    fake_llm.enqueue_text("Both answered at once.")
    with phone._lock:      # three texts reach the phone between two reads
        for words in ("is dune", "part two", "downloading yet?"):
            phone.receive(ADMIN, words)
    assert answered(phone, 1) == ["Both answered at once."]
    asked = fake_llm.requests[0]["messages"][-1]["content"]
    assert all(words in asked for words in ("is dune", "part two", "downloading yet?"))


def test_a_text_the_phone_took_while_mediabot_was_down_is_answered_once(on_phone, phone,
                                                                        fake_llm):
    daemon = on_phone()
    fake_llm.enqueue_text("First.")
    phone.receive(ADMIN, "first")
    answered(phone, 1)
    assert daemon.stop() == 0
    phone.receive(ADMIN, "sent while mediabot was down")
    fake_llm.enqueue_text("Answered after the restart.")
    daemon.start()
    assert answered(phone, 2) == ["First.", "Answered after the restart."]
    assert daemon.stop() == 0
    daemon.start()
    time.sleep(1.0)
    assert len(texts_to(phone)) == 2, "a restart answers nothing twice"


def test_a_text_listed_twice_is_answered_once(on_phone, phone, fake_llm):
    """The app's row id is a content hash: an inbox refresh can list one SMS under two
    rows. mediabot keys it by what makes the SMS itself."""
    daemon = on_phone()
    fake_llm.enqueue_text("Once.")
    with phone._lock:
        phone.receive(ADMIN, "only once please")
        copy = dict(phone.state.inbox[-1], id="text:12345")
        phone.state.inbox.append(copy)
    assert answered(phone, 1) == ["Once."]
    assert daemon.rows("SELECT count(*) FROM inbox") == [(1,)]


def test_a_reply_waits_while_the_phone_is_away_and_goes_when_it_is_back(on_phone, phone,
                                                                        fake_llm):
    daemon = on_phone()
    fake_llm.enqueue_delay(1.0)
    fake_llm.enqueue_text("Sent once the phone was back.")
    phone.receive(ADMIN, "are you there?")
    assert wait_for(lambda: len(fake_llm.requests) == 1)
    phone.down()
    threading.Timer(2.0, phone.up).start()
    assert answered(phone, 1) == ["Sent once the phone was back."]
    rows = daemon.rows("SELECT status, attempts FROM outbox")
    assert rows[0][0] == "sent" and rows[0][1] >= 2, rows
    assert "could not be reached" in daemon.log.read_text()


def _reading_delays(phone, daemon, count, poll_seconds):
    """Seconds from a text reaching the phone to mediabot recording it, per text; each text
    comes at a random moment of a poll's period, as a household's do."""
    delays, chance = [], random.Random(36)
    for n in range(count):
        time.sleep(chance.uniform(0, poll_seconds))
        reached = dt.datetime.now(dt.UTC).replace(tzinfo=None)
        phone.receive("+15550009999", f"text {n}")       # no user: recorded, not answered
        assert wait_for(lambda n=n: daemon.rows("SELECT count(*) FROM inbox")[0][0] > n, 15)
        (taken,) = daemon.rows("SELECT received_at FROM inbox ORDER BY id DESC LIMIT 1")[0]
        delays.append((dt.datetime.fromisoformat(taken) - reached).total_seconds())
    return delays


def test_a_text_is_read_within_a_poll_of_reaching_the_phone(on_phone, phone):
    daemon = on_phone(poll_seconds=0.2)
    delays = _reading_delays(phone, daemon, 20, 0.2)
    print(f"\nLocal mode, poll_seconds=0.2: median {statistics.median(delays):.3f} s, "
          f"max {max(delays):.3f} s over {len(delays)} texts")
    assert statistics.median(delays) < 0.6
