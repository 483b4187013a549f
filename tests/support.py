"""Helpers the test modules share: texting the webhook, a `mediabot serve` child process,
download payloads, household constants and a config.toml writer.

Test modules import these from here, never from each other, so a test module can be renamed,
split or deleted without breaking another one. Fixtures built on them live in conftest.py.
"""

import base64
import datetime as dt
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import requests

from mediabot.conversation.engine import Answer
from mediabot.conversation.incoming import read_text
from mediabot.store import db
from mediabot.text.localtime import host_zone, local_text
from mediabot.trial.sim.loopback import free_port, wait_for

ADMIN = "+15551230001"                       # Alex, the configured admin
MEMBER = "+15551230002"                      # Sam, the configured member
PUBLIC = "https://sms.example.com"
# `mediabot serve` children get their own: serve refuses the example's placeholder
SERVE_PUBLIC = "https://sms.household.test"
URL = PUBLIC + "/sms"

ADMIN2 = "+15551230003"                      # the second admin the `house` fixture adds
THREE, HAIL_MARY_2 = 1170608, 653664          # Dune: Part Three; Dune Drifter (lookup only)
UK_OFFICE, PROPHECY = 78107, 397360

SANDBOX = "whatsapp:+14155238886"                # Twilio's shared WhatsApp sandbox sender
SECRET = "hook-secret"                        # [notifications] webhook_secret of the hook tests
SEVERANCE = 371980

START = dt.datetime(2026, 11, 22, 20, 0, 0)   # the `clock` fixture's first reading (UTC)
STAMP = re.compile(r"\[[A-Z][a-z]{2} \d{4}-\d\d-\d\d \d\d:\d\d [^\]]+\] ")


def stamped(text: str, at: dt.datetime = START, zone: dt.tzinfo | None = None) -> str:
    """A person's text as the model receives it: the local time it was received first (in
    ``zone``, else the host's zone, as a config without [server] timezone has it)."""
    return f"[{local_text(at, zone or host_zone())}] {text}"


def unstamped(content: str) -> str:
    """What the person typed, from a user message the model received on the real clock:
    the time stamp (which no test can know to the minute) must be there, and is cut off."""
    match = STAMP.match(content)
    assert match, f"no time stamp at the start of {content!r}"
    return content[match.end():]


# -- config.toml -------------------------------------------------------------------------------

def write_config(folder: Path, **sections) -> Path:
    """Write ``folder/config.toml`` from tables, in the order given, and return its path:
    ``write_config(tmp_path, server={"public_url": ...}, users=[{"phone": ...}])``. A list of
    tables becomes ``[[name]]`` entries; a Path value is written as its string."""
    path = Path(folder) / "config.toml"
    path.write_text("".join(_toml_table(name, table) for name, table in sections.items()))
    return path


def dead_servers(*, from_number="+15550001111", account_sid="AC1", auth_token="token-123456"):
    """[twilio] and [llm] tables pointing at a closed loopback port, for ``write_config``:
    `mediabot check` then reports them unreachable at once."""
    return {"twilio": {"account_sid": account_sid, "auth_token": auth_token,
                       "from_number": from_number, "api_base_url": "http://127.0.0.1:9"},
            "llm": {"base_url": "http://127.0.0.1:9/v1", "timeout_seconds": 1,
                    "max_retries": 0}}


def _toml_table(name: str, table) -> str:
    if isinstance(table, list):
        return "".join(_toml_keys(f"[[{name}]]", entry) for entry in table)
    return _toml_keys(f"[{name}]", table)


def _toml_keys(header: str, keys: dict) -> str:
    return header + "\n" + "".join(f"{key} = {_toml_value(value)}\n"
                                   for key, value in keys.items())


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    return json.dumps(str(value))


def sign(url: str, params: dict, token: str = "secret-token") -> str:
    """X-Twilio-Signature exactly as Twilio computes it."""
    from twilio.request_validator import RequestValidator

    return RequestValidator(token).compute_signature(url, params)


# -- the /sms webhook, in process ----------------------------------------------------------------

_sids = iter(range(10**6))


def params(body, sender=ADMIN, sid=None):
    return {"MessageSid": sid or f"SM{next(_sids):032d}", "AccountSid": "AC" + "0" * 32,
            "From": sender, "To": "+15550001111", "Body": body, "NumMedia": "0"}


def text(client, body, sender=ADMIN, sid=None, signature=None):
    form = params(body, sender, sid)
    headers = {"X-Twilio-Signature": signature if signature is not None else sign(URL, form)}
    return client.post("/sms", data=form, headers=headers)


def settle(daemon):
    assert daemon.worker.wait_idle(10)


def wait_until(predicate, timeout=3.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


# -- SMS and WhatsApp as Twilio carries them ---------------------------------------------------

def by_whatsapp(daemon, fake_twilio, body, sender=MEMBER):
    """The person writes on WhatsApp: Twilio opens its 24-hour window, then posts the webhook."""
    fake_twilio.open_window(sender)
    response = text(daemon.app.test_client(), body, sender="whatsapp:" + sender)
    assert response.status_code == 200, response.get_data(as_text=True)
    settle(daemon)


def by_sms(daemon, fake_twilio, body, sender=MEMBER):
    """The person texts by SMS: Twilio reads its own opt-out words (STOP, START) first, then
    posts the webhook."""
    fake_twilio.received_sms(sender, body)
    response = text(daemon.app.test_client(), body, sender=sender)
    assert response.status_code == 200, response.get_data(as_text=True)
    settle(daemon)


def radarr_says(daemon, payload) -> None:
    """Radarr posts ``payload`` to the daemon's webhook (the `household` fixture's secret)."""
    response = daemon.app.test_client().post("/hooks/radarr", json=payload,
                                             headers=basic(SECRET, user="radarr"))
    assert response.status_code == 200, response.get_data(as_text=True)


def delivered(fake_twilio) -> list[tuple[str, str]]:
    """(To, Body) of every message Twilio accepted, in order: "whatsapp:+1..." or "+1..."."""
    return [(m["to"], m["body"]) for m in fake_twilio.sent]


def refused(fake_twilio) -> int:
    """How many sends Twilio refused."""
    posts = [r for r in fake_twilio.requests if r["path"].endswith("/Messages.json")]
    return len(posts) - len(fake_twilio.sent)


# -- a household on the fake arrs (the `house` fixture) ----------------------------------------

def ask_for(daemon, fake_llm, tool, arguments, sender=MEMBER, answer="Asked."):
    fake_llm.enqueue_tool_calls([(tool, arguments)])
    fake_llm.enqueue_text(answer)
    text(daemon.app.test_client(), "get it please", sender=sender)
    settle(daemon)


def sent_to(fake_twilio, phone):
    return [m["body"] for m in fake_twilio.sent if m["to"] == phone]


def sent_to_last(daemon, phone):
    return db.Outbox.select().where(db.Outbox.to_number == phone).order_by(
        db.Outbox.id.desc()).first().body


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


# -- download webhooks ---------------------------------------------------------------------------

def basic(password, user="sonarr"):
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def sonarr_download(episodes, upgrade=False, download_id="D4E5F6"):
    """Shaped like Sonarr's WebhookImportPayload."""
    return {
        "eventType": "Download", "instanceName": "Sonarr", "applicationUrl": "",
        "series": {"id": 3, "title": "Severance", "titleSlug": "severance",
                   "path": "/tv/Severance", "tvdbId": SEVERANCE, "tvMazeId": 44933,
                   "imdbId": "tt11280740", "type": "standard", "year": 2022},
        "episodes": [{"id": 100 + n, "episodeNumber": n, "seasonNumber": s,
                      "title": f"Episode {n}", "airDate": "2025-01-17",
                      "airDateUtc": "2025-01-17T02:00:00Z", "seriesId": 3}
                     for s, n in episodes],
        "episodeFile": {"id": 77, "relativePath": "Season 02/Severance - S02E01.mkv",
                        "quality": "WEBDL-1080p", "qualityVersion": 1, "size": 2_000_000_000},
        "isUpgrade": upgrade, "downloadClient": "qBittorrent", "downloadId": download_id,
    }


# -- the worker with a recording engine ----------------------------------------------------------

class RecordingEngine:
    """An engine that records each turn's text and can hold a turn open."""

    def __init__(self):
        self.turns: list[tuple[int, str]] = []
        self.read = []   # each turn's Incoming, as the worker handed it over
        self.release = threading.Event()
        self.release.set()
        self.running = 0
        self.running_per_user: dict[int, int] = {}
        self.max_running_per_user: dict[int, int] = {}
        self._lock = threading.Lock()

    def answer(self, incoming):
        user_id, text = incoming.user.id, incoming.text
        with self._lock:
            self.running += 1
            now = self.running_per_user[user_id] = self.running_per_user.get(user_id, 0) + 1
            self.max_running_per_user[user_id] = max(now, self.max_running_per_user.get(user_id, 0))
        self.release.wait(5)
        with self._lock:
            self.turns.append((user_id, text))
            self.read.append(incoming)
            self.running -= 1
            self.running_per_user[user_id] -= 1
        return Answer(None, incoming.user)  # nothing to send

    def after_turn(self, answer):
        pass


def answered(engine, user_id, text):
    """One text read as the terminal reads it: the engine's Answer, for ``after_turn``."""
    return engine.answer(read_text(db.User.get_by_id(user_id), text))


def queue(user_id, body):
    row = db.Inbox.create(message_sid=f"SM{time.monotonic_ns()}", user=user_id,
                          from_number="+15550000000", body=body)
    return row


# -- `mediabot serve` as a child process -----------------------------------------------------------

class Serve:
    """One `mediabot serve` child process with its config file and database."""

    def __init__(self, tmp: Path, llm_url: str, twilio_url: str, extra: str = ""):
        self.port = free_port()
        self.log = tmp / "serve.log"
        self.config = write_config(
            tmp,
            server={"public_url": SERVE_PUBLIC, "host": "127.0.0.1", "port": self.port},
            database={"path": tmp / "mediabot.db"},
            twilio={"account_sid": "AC" + "0" * 32, "from_number": "+15550001111",
                    "api_base_url": twilio_url, "timeout_seconds": 3},
            llm={"base_url": f"{llm_url}/v1", "model": "gpt-4o-mini", "timeout_seconds": 10,
                 "max_retries": 0},
            users=[{"phone": ADMIN, "name": "Alex", "role": "admin"}])
        self.config.write_text(self.config.read_text() + extra)
        self.proc = None
        self.env: dict[str, str] = {}        # extra environment, e.g. MEDIABOT_* overrides
        self.launcher = lambda command: command   # e.g. wrap it in `unshare -m ...`
        self._sids = iter(range(10**6))

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        env = {**os.environ, "MEDIABOT_TWILIO_AUTH_TOKEN": "secret-token",
               "MEDIABOT_LLM_API_KEY": "sk-test", **self.env}
        command = [sys.executable, "-m", "mediabot.cli", "serve", "--config", str(self.config)]
        self.proc = subprocess.Popen(self.launcher(command), stdout=subprocess.DEVNULL,
                                     stderr=self.log.open("ab"), env=env)
        assert wait_for(self._healthy, 20), self.log.read_text()
        return self

    def settled(self) -> bool:
        """Every text handled and every reply sent or given up, as the daemon's own database
        says: from here nothing more happens, so a test asserts at once instead of sleeping."""
        connection = sqlite3.connect(self.config.parent / "mediabot.db", timeout=5)
        try:
            busy = connection.execute(
                "SELECT (SELECT count(*) FROM inbox WHERE status IN ('queued', 'processing'))"
                " + (SELECT count(*) FROM outbox WHERE status = 'pending')").fetchone()[0]
        finally:
            connection.close()
        return busy == 0

    def _healthy(self):
        try:
            return requests.get(self.url + "/healthz", timeout=1).status_code == 200
        except requests.ConnectionError:
            return False

    def text(self, body, sender=ADMIN, sid=None, signature=None):
        form = {"MessageSid": sid or f"SM{os.getpid():08d}{next(self._sids):024d}",
                "AccountSid": "AC" + "0" * 32, "From": sender, "To": "+15550001111",
                "Body": body, "NumMedia": "0"}
        headers = {"X-Twilio-Signature": sign(SERVE_PUBLIC + "/sms", form)
                   if signature is None else signature}
        return requests.post(self.url + "/sms", data=form, headers=headers, timeout=5)

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=60)
        return self.proc.returncode


# -- Twilio's delivery reports -----------------------------------------------------------------

STATUS_URL = "https://sms.example.com/sms/status"


def report(client, sid, state, error_code=None, url=STATUS_URL, signature=None, to=None):
    """Post Twilio's signed delivery report for message ``sid`` to /sms/status."""
    to = to or ADMIN2
    form = {"MessageSid": sid, "SmsSid": sid, "MessageStatus": state, "SmsStatus": state,
            "AccountSid": "AC" + "0" * 32, "From": "+15550001111", "To": to,
            "ApiVersion": "2010-04-01"}
    if error_code is not None:
        form["ErrorCode"] = str(error_code)
    headers = {"X-Twilio-Signature": sign(url, form) if signature is None else signature}
    return client.post("/sms/status", data=form, headers=headers)


def person_part(request: dict) -> str:
    """The person's part of a prompt the model received (their name, role, language, what
    waits for an admin: a bracketed user message and its acknowledgement right after the
    system message, issue 31), or "" when it has none."""
    from mediabot.conversation.prompt.build import PERSON_ACK

    rest = [m for m in request["messages"] if m["role"] != "system"]
    if rest[1:2] != [{"role": "assistant", "content": PERSON_ACK}]:
        return ""
    text = rest[0].get("content") or ""
    return "" if STAMP.match(text) else text


def conversation(request: dict) -> list[dict]:
    """The messages after the system message and the person's part."""
    rest = [m for m in request["messages"] if m["role"] != "system"]
    return rest[2:] if person_part(request) else rest
