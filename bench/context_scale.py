"""Does a whole turn's database work cost the same with a year of traffic as with none?

Two databases are built side by side: a small one and one at scale (``--messages`` rows of
history shared by four users, plus an inbox and an outbox of a year of turns, timestamps
spread over the year). Then, interleaving the two in every round (smallest first in even
rounds, largest first in odd ones) so that machine noise hits both alike, it runs real
turns: the webhook's intake records a message, and the real ``Worker.process_user`` runs
it through the real ``Engine`` (rate limit, keywords, history read and prompt build,
every message saved, the reply queued in the outbox and delivered, statuses). Only the
network is left out: the model and Twilio are in-process stand-ins that answer at once,
so what is timed is the turn's own work, nearly all of it database work.

Also measured at scale: retention pruning of ``--prune`` old messages, reported as the
longest single batch (how long the webhook's insert can wait behind it).

Prints JSON: per size the median turn time over all rounds, the per-round medians, the
replies that did not go out (any: a failing turn was timed, and the run is not ok), and
``ratio`` = largest / smallest (target <= 1.5).

    .venv/bin/python bench/context_scale.py [--messages 1000000] [--rounds 5] [--turns 40]
"""

import argparse
import datetime as dt
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mediabot.answering.worker import Worker
from mediabot.app import build_engine
from mediabot.carrier.base import Carriers
from mediabot.carrier.twilio.carrier import TwilioCarrier
from mediabot.config import load_config
from mediabot.mailbox.delivery import Sender
from mediabot.mailbox.inbox import Inbound, Intake
from mediabot.scheduler import prune_history
from mediabot.store import db, migrations
from mediabot.store.users import ensure_config_users

TARGET_RATIO = 1.5
USERS = ["+15551230000", "+15551230001", "+15551230002", "+15551230003"]
CHUNK = 20_000
CALLS = json.dumps([{"id": "call_1", "type": "function",
                     "function": {"name": "search_media", "arguments": '{"query": "dune"}'}}])


class Model:
    """Stands in for the OpenAI client: answers every chat completion at once."""

    def __init__(self):
        self.chat = SimpleNamespace(completions=self)

    def create(self, **kwargs):
        message = SimpleNamespace(content="Dune (2021) is in the library.", tool_calls=None)
        return SimpleNamespace(choices=[SimpleNamespace(message=message)],
                               usage=SimpleNamespace(prompt_tokens=400))


class Twilio:
    """Stands in for the Twilio REST client: every message is accepted."""

    def __init__(self):
        self.messages = self
        self.sent = 0

    def create(self, **kwargs):
        self.sent += 1
        return SimpleNamespace(sid=f"SM{self.sent:032d}", status="queued")


def write_config(tmp: Path, db_path: Path) -> Path:
    path = tmp / f"{db_path.stem}.toml"
    users = "".join(f'[[users]]\nphone = "{phone}"\nname = "User {i}"\n'
                    for i, phone in enumerate(USERS))
    path.write_text(f"""
[server]
public_url = "https://sms.bench.test"
[database]
path = "{db_path}"
[twilio]
account_sid = "AC{'0' * 32}"
auth_token = "secret-token"
from_number = "+15550001111"
[llm]
base_url = "http://127.0.0.1:9/v1"
[sms]
rate_limit_per_hour = 1000000
{users}""")
    return path


def populate(messages: int, now: dt.datetime) -> None:
    """``messages`` rows of history over a year (user, tool call, tool result, answer), and
    one inbox row and one outbox reply per four messages: a year of turns."""
    connection = db.database.connection()
    users = [row[0] for row in connection.execute("SELECT id FROM users ORDER BY id")]
    year = 365 * 86400
    rng = random.Random(1)
    for start in range(0, messages, CHUNK):
        history, inbox, outbox = [], [], []
        for n in range(start, min(start + CHUNK, messages)):
            user = users[n % len(users)]
            when = now - dt.timedelta(seconds=year * (1 - n / messages) + 3600)
            kind = (n // len(users)) % 4
            if kind == 0:
                history.append((user, "user", f"can you get dune? ({n})", None, None, None, when))
                sid = f"SMold{n:027d}"
                inbox.append((sid, user, USERS[n % len(USERS)], f"dune ({n})", when, "done"))
                outbox.append((user, USERS[n % len(USERS)], "Dune is in the library.", "sent",
                               f"SMout{n:027d}", 1, when, when))
            elif kind == 1:
                history.append((user, "assistant", None, CALLS, None, None, when))
            elif kind == 2:
                history.append((user, "tool", '[{"title": "Dune", "year": 2021}]', None,
                                "call_1", "search_media", when))
            else:
                history.append((user, "assistant", "Dune (2021) is in the library.", None,
                                None, None, when + dt.timedelta(seconds=rng.random())))
        with db.database.atomic():
            connection.executemany(
                "INSERT INTO messages (user_id, role, content, tool_calls, tool_call_id, name, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)", history)
            connection.executemany(
                "INSERT INTO inbox (message_sid, user_id, from_number, body, received_at, "
                "status) VALUES (?, ?, ?, ?, ?, ?)", inbox)
            ids = [row[0] for row in connection.execute(
                "SELECT id FROM inbox ORDER BY id DESC LIMIT ?", (len(inbox),))][::-1]
            connection.executemany(
                "INSERT INTO outbox (user_id, to_number, body, status, twilio_sid, attempts, "
                "next_attempt_at, created_at, inbox_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [row + (inbox_id,) for row, inbox_id in zip(outbox, ids, strict=True)])


class Site:
    """One database file with its config, engine, sender and worker."""

    def __init__(self, tmp: Path, name: str, messages: int, drop_indexes: bool = False):
        self.path = tmp / f"{name}.db"
        self.config = load_config(write_config(tmp, self.path))
        self.messages = messages
        self.sids = iter(range(10**9))
        self.open()
        started = time.perf_counter()
        populate(messages, db.utcnow())
        self.populate_seconds = round(time.perf_counter() - started, 1)
        if drop_indexes:      # the schema before m003, to show what the indexes are for
            db.database.execute_sql("DROP INDEX outbox_user_created")
            db.database.execute_sql("DROP INDEX messages_created_at")
        self.counts = {table: db.database.execute_sql(f"SELECT COUNT(*) FROM {table}")
                       .fetchone()[0] for table in ("messages", "inbox", "outbox")}
        self.last_old_reply = db.database.execute_sql("SELECT MAX(id) FROM outbox").fetchone()[0]
        self.close()

    def open(self) -> None:
        migrations.open_database(str(self.path))
        ensure_config_users(self.config.users)
        engine = build_engine(self.config)
        engine.services.model.client  # noqa: B018 - built here, not timed
        engine.services.model._client = Model()
        self.twilio = Twilio()
        twilio = TwilioCarrier(self.twilio, self.config.twilio)
        self.sender = Sender(Carriers(sms=twilio, whatsapp=twilio), self.config.twilio)
        self.worker = Worker(engine, self.sender, self.config.sms)
        self.worker.ack_priority_seconds = 0
        self.intake = Intake(db.database)
        self.user_id = db.User.get(phone=USERS[0]).id

    def close(self) -> None:
        self.worker.shutdown(5)
        db.database.close()

    def unsent(self) -> int:
        """The bench's own replies that did not go out: a turn that failed was timed."""
        return db.database.execute_sql("SELECT COUNT(*) FROM outbox WHERE id > ? AND "
                                       "status != 'sent'", (self.last_old_reply or 0,)
                                       ).fetchone()[0]

    def turn(self) -> float:
        """One text from the user, recorded and answered; seconds taken."""
        started = time.perf_counter()
        self.intake.record(Inbound(f"SMnew{self.path.stem}{next(self.sids):020d}", USERS[0],
                                   "what's downloading?", db.utcnow()))
        self.worker.process_user(self.user_id)
        return time.perf_counter() - started


def longest_prune_batch(site: Site, old: int) -> dict:
    """Age ``old`` of the oldest messages past retention and prune them as the hourly job
    does; the longest batch is how long the webhook's insert can wait behind it."""
    site.open()
    now = db.utcnow()
    db.database.execute_sql(
        "UPDATE messages SET created_at = ? WHERE id IN (SELECT id FROM messages ORDER BY id "
        "LIMIT ?)", (now - dt.timedelta(days=400), old))
    marks = [time.perf_counter()]

    def pause(seconds):
        marks.append(time.perf_counter())
        time.sleep(seconds)
        marks.append(time.perf_counter())

    started = time.perf_counter()
    removed = prune_history(now, 365, sleep=pause)
    marks.append(time.perf_counter())
    total = time.perf_counter() - started
    site.close()
    batches = [marks[i + 1] - marks[i] for i in range(0, len(marks) - 1, 2)]
    return {"pruned": removed, "batches": len(batches), "total_seconds": round(total, 2),
            "longest_batch_ms": round(max(batches) * 1000, 2)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--turns", type=int, default=40, help="per size per round")
    parser.add_argument("--prune", type=int, default=50_000)
    parser.add_argument("--without-turn-indexes", action="store_true",
                        help="drop m003's indexes: the 'before' figure")
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="mediabot-context-scale-"))
    sites = {str(size): Site(tmp, f"size{size}", size, args.without_turn_indexes)
             for size in (args.small, args.messages)}
    per_round = {size: [] for size in sites}
    every = {size: [] for size in sites}
    unsent = dict.fromkeys(sites, 0)
    for round_number in range(args.rounds):
        order = list(sites) if round_number % 2 == 0 else list(sites)[::-1]
        for size in order:
            site = sites[size]
            site.open()
            for _ in range(3):
                site.turn()                     # warm the page cache and the connection
            times = [site.turn() for _ in range(args.turns)]
            unsent[size] = site.unsent()
            site.close()
            per_round[size].append(round(statistics.median(times) * 1000, 3))
            every[size] += times
    small, large = str(args.small), str(args.messages)
    medians = {size: round(statistics.median(times) * 1000, 3) for size, times in every.items()}
    ratio = round(medians[large] / medians[small], 3)
    report = {
        "benchmark": "context_scale", "what": "intake record + Worker.process_user, ms",
        "sizes": {size: {"median_ms": medians[size], "round_medians_ms": per_round[size],
                         "p90_ms": round(sorted(every[size])[int(len(every[size]) * 0.9)]
                                         * 1000, 3),
                         "rows": sites[size].counts, "populate_seconds":
                         sites[size].populate_seconds, "unsent_replies": unsent[size]}
                  for size in sites},
        "ratio": ratio, "paired_ratios": [round(a / b, 3) for a, b in
                                          zip(per_round[large], per_round[small], strict=True)],
        "target_ratio": TARGET_RATIO,
        "ok": ratio <= TARGET_RATIO and not any(unsent.values()),
        "prune_at_scale": longest_prune_batch(sites[large], args.prune),
        "turn_indexes": not args.without_turn_indexes, "loadavg": os.getloadavg(),
    }
    json.dump(report, sys.stdout, indent=2)
    print()
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
