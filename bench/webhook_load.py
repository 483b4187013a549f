"""How fast does ``POST /sms`` acknowledge Twilio under load, next to a bare Flask app?

Starts, as child processes on 127.0.0.1:

* a real ``mediabot serve`` whose config points at the fake OpenAI (answers at once with a
  short text) and the fake Twilio, both running in this process, with ``--users`` distinct
  [[users]] so per-user ordering does not serialise the worker;
* a bare Flask app on waitress (``threads=8``, as mediabot) that answers the same empty
  TwiML with text/xml and does nothing else.

Then drives both with signed form POSTs (unique MessageSids, senders spread over the users)
from N client threads, each with its own keep-alive ``requests.Session``, at 1, 8 and 32
concurrent clients (a bounded number of requests and seconds per level, after a warm-up),
and prints one JSON object: requests/second, p50/p99 acknowledgement latency (ms) and
errors per server and level, the mediabot/bare ratios and the targets with pass/fail, and
proof that nothing was lost (every mediabot POST got 200; inbox rows stored == POSTs sent).

Between levels it waits (bounded) for mediabot's worker to drain its inbox, so one level's
backlog of model turns does not run during the next measurement of either server. Turns do
run *during* a mediabot level: that is the real situation the acknowledgement must survive.

    .venv/bin/python bench/webhook_load.py [--requests 1500] [--max-seconds 20]
        [--levels 1,8,32] [--users 32] [--rate-limit 100000] [--ack-only]

``--ack-only`` sends from numbers that are not in [[users]] (stored as "ignored", no model
turn), which isolates the webhook path from the worker's turns running in the same process.

Exit code 0 when the targets are met and nothing was lost, 1 otherwise.
"""

import argparse
import itertools
import json
import logging
import math
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import requests  # noqa: E402
from twilio.request_validator import RequestValidator  # noqa: E402

from mediabot.sim.loopback import LoopbackServer, free_port, wait_for  # noqa: E402
from tests.fakes.openai import FakeOpenAI  # noqa: E402
from mediabot.sim.twilio import FakeTwilio  # noqa: E402

HOST = "127.0.0.1"
PUBLIC = "https://sms.example.com"
TOKEN = "secret-token"
ACCOUNT = "AC" + "0" * 32
FROM_NUMBER = "+15550001111"
EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response/>'
FORM_TYPE = {"Content-Type": "application/x-www-form-urlencoded"}
TARGET_THROUGHPUT_RATIO = 0.5   # mediabot rps / bare rps, at every level
TARGET_P99_RATIO_AT_32 = 2.0    # mediabot p99 / bare p99, at 32 clients

BARE_APP = f"""
import sys
from flask import Flask
from waitress import create_server
app = Flask("bare")
@app.post("/sms")
def sms():
    return app.response_class({EMPTY_TWIML!r}, status=200, mimetype="text/xml")
@app.get("/healthz")
def healthz():
    return "ok"
create_server(app, host={HOST!r}, port=int(sys.argv[1]), threads=8, ident="bare").run()
"""


def user_phone(i: int) -> str:
    return f"+1555124{i:04d}"


def stranger_phone(i: int) -> str:
    """A sender that is not in [[users]]: stored as 'ignored', no model turn."""
    return f"+1555998{i:04d}"


class Child:
    """A server child process on 127.0.0.1:port with a /healthz; SIGTERM then kill."""

    def __init__(self, name: str, argv: list[str], port: int, log: Path, env=None):
        self.name, self.argv, self.port, self.log, self.env = name, argv, port, log, env
        self.proc = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def start(self) -> "Child":
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.DEVNULL,
                                     stderr=self.log.open("ab"), env=self.env, cwd=ROOT)
        if not wait_for(self._healthy, 30):
            self.stop()
            raise RuntimeError(f"{self.name} did not start:\n{self.log.read_text()[-3000:]}")
        return self

    def _healthy(self) -> bool:
        if self.proc.poll() is not None:
            return False
        try:
            return requests.get(self.url + "/healthz", timeout=1).status_code == 200
        except requests.RequestException:
            return False

    def stop(self, grace: float = 40.0) -> int | None:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        return self.proc.returncode


def write_config(tmp: Path, port: int, llm_url: str, twilio_url: str, users: int,
                 rate_limit: int) -> Path:
    config = tmp / "config.toml"
    entries = "".join(f'[[users]]\nphone = "{user_phone(i)}"\nname = "User {i}"\n'
                      f'role = "{"admin" if i == 0 else "member"}"\n' for i in range(users))
    config.write_text(f"""
[server]
public_url = "{PUBLIC}"
host = "{HOST}"
port = {port}
[database]
path = "{tmp / 'mediabot.db'}"
[twilio]
account_sid = "{ACCOUNT}"
from_number = "{FROM_NUMBER}"
api_base_url = "{twilio_url}"
timeout_seconds = 5
[llm]
base_url = "{llm_url}/v1"
model = "gpt-4o-mini"
timeout_seconds = 10
max_retries = 0
[sms]
rate_limit_per_hour = {rate_limit}
{entries}""")
    return config


class Payloads:
    """Pre-signed, pre-encoded webhook bodies with unique MessageSids (signing is done
    before the clock starts, so the load generator spends its CPU on HTTP only)."""

    def __init__(self, users: int, phone=user_phone):
        self.users = users
        self.phone = phone
        self.validator = RequestValidator(TOKEN)
        self.sids = itertools.count()
        self.prefix = f"SM{os.getpid():08x}"

    def make(self, count: int) -> list[tuple[bytes, dict]]:
        out = []
        for _ in range(count):
            n = next(self.sids)
            form = {"MessageSid": f"{self.prefix}{n:022d}", "AccountSid": ACCOUNT,
                    "From": self.phone(n % self.users), "To": FROM_NUMBER,
                    "Body": f"what's downloading? ({n})", "NumMedia": "0",
                    "SmsStatus": "received", "ApiVersion": "2010-04-01"}
            signature = self.validator.compute_signature(PUBLIC + "/sms", form)
            out.append((urlencode(form).encode(),
                        {**FORM_TYPE, "X-Twilio-Signature": signature}))
        return out


def percentile(sorted_values: list[float], q: float) -> float | None:
    if not sorted_values:
        return None
    return sorted_values[max(0, math.ceil(q * len(sorted_values)) - 1)]


def drive(url: str, payloads: list[tuple[bytes, dict]], clients: int,
          max_seconds: float) -> dict:
    """POST every payload (or until max_seconds) from ``clients`` threads, one Session each."""
    target = url + "/sms"
    next_index = itertools.count()
    latencies: list[list[float]] = [[] for _ in range(clients)]
    statuses: list[dict] = [{} for _ in range(clients)]
    exceptions = [0] * clients
    start_gate = threading.Barrier(clients + 1)
    deadline = [math.inf]   # set just after the start gate opens

    def client(k: int) -> None:
        with requests.Session() as session:
            # one throw-away request opens the keep-alive connection before the clock starts
            session.get(url + "/healthz", timeout=10)
            start_gate.wait()
            mine, codes = latencies[k], statuses[k]
            while True:
                if time.perf_counter() > deadline[0]:
                    return
                i = next(next_index)   # atomic under the GIL
                if i >= len(payloads):
                    return
                body, headers = payloads[i]
                t0 = time.perf_counter()
                try:
                    response = session.post(target, data=body, headers=headers, timeout=15)
                    ok = response.status_code == 200 and response.text == EMPTY_TWIML
                    code = response.status_code if ok or response.status_code != 200 \
                        else "200-bad-body"
                except requests.RequestException:
                    exceptions[k] += 1
                    continue
                mine.append(time.perf_counter() - t0)
                codes[code] = codes.get(code, 0) + 1

    threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(clients)]
    for t in threads:
        t.start()
    start_gate.wait()
    began = time.perf_counter()
    deadline[0] = began + max_seconds
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - began
    lat = sorted(x for per in latencies for x in per)
    codes: dict = {}
    for per in statuses:
        for code, n in per.items():
            codes[str(code)] = codes.get(str(code), 0) + n
    errors = sum(exceptions) + sum(n for code, n in codes.items() if code != "200")
    return {
        "requests": len(lat) + sum(exceptions),
        "seconds": round(elapsed, 3),
        "rps": round(len(lat) / elapsed, 1) if elapsed else None,
        "p50_ms": round(percentile(lat, 0.50) * 1000, 2) if lat else None,
        "p99_ms": round(percentile(lat, 0.99) * 1000, 2) if lat else None,
        "max_ms": round(lat[-1] * 1000, 2) if lat else None,
        "errors": errors,
        "status_counts": codes,
        "exceptions": sum(exceptions),
        "posted_200": codes.get("200", 0),
    }


def inbox_counts(db_path: Path) -> dict:
    connection = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10)
    try:
        rows = connection.execute("SELECT status, COUNT(*) FROM inbox GROUP BY status")
        return dict(rows.fetchall())
    finally:
        connection.close()


def wait_drained(db_path: Path, timeout: float) -> bool:
    """mediabot's worker has no queued/processing inbox row left (bounded wait)."""
    def idle():
        counts = inbox_counts(db_path)
        return not counts.get("queued") and not counts.get("processing")
    return wait_for(idle, timeout, step=0.2)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=1500, help="per server per level")
    parser.add_argument("--max-seconds", type=float, default=20.0, help="per server per level")
    parser.add_argument("--levels", default="1,8,32")
    parser.add_argument("--warmup", type=int, default=300, help="requests per server")
    parser.add_argument("--users", type=int, default=32)
    parser.add_argument("--rate-limit", type=int, default=100_000,
                        help="[sms] rate_limit_per_hour: high, so every message is a real turn")
    parser.add_argument("--drain-seconds", type=float, default=20.0)
    parser.add_argument("--ack-only", action="store_true",
                        help="senders not in [[users]]: the webhook path alone, no model turns "
                             "competing with it (a diagnostic, not the target run)")
    args = parser.parse_args(argv)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)   # the fakes' access log
    levels = [int(x) for x in args.levels.split(",")]

    tmp = Path(tempfile.mkdtemp(prefix="mediabot-webhook-load-"))
    llm = FakeOpenAI(default_text="Dune is downloading, 45% done.").start()
    fake_twilio = FakeTwilio(account_sid=ACCOUNT, auth_token=TOKEN,
                             owned_numbers=(FROM_NUMBER,))
    twilio_server = LoopbackServer(fake_twilio).start()
    fake_twilio.url = twilio_server.url

    mb_port, bare_port = free_port(), free_port()
    config = write_config(tmp, mb_port, llm.url, twilio_server.url, args.users,
                          args.rate_limit)
    db_path = tmp / "mediabot.db"
    env = {**os.environ, "MEDIABOT_TWILIO_AUTH_TOKEN": TOKEN, "MEDIABOT_LLM_API_KEY": "sk-test",
           "PYTHONPATH": str(ROOT)}
    mediabot = Child("mediabot", [sys.executable, "-m", "mediabot.cli", "serve", "--config",
                                  str(config)], mb_port, tmp / "mediabot.log", env)
    bare = Child("bare", [sys.executable, "-c", BARE_APP, str(bare_port)], bare_port,
                 tmp / "bare.log", env)
    servers = {"bare": bare, "mediabot": mediabot}
    payloads = Payloads(args.users, stranger_phone if args.ack_only else user_phone)
    mediabot_sent = 0   # MessageSids mediabot acknowledged with 200
    mediabot_attempted = 0
    results: dict = {name: {} for name in servers}
    drained: dict = {}
    started = time.perf_counter()
    try:
        bare.start()
        mediabot.start()
        for name, child in servers.items():   # warm-up: imports, connections, JIT-free paths
            warm = drive(child.url, payloads.make(args.warmup), 8, args.max_seconds)
            if name == "mediabot":
                mediabot_sent += warm["posted_200"]
                mediabot_attempted += warm["requests"]
                drained["warmup"] = wait_drained(db_path, args.drain_seconds)
        for clients in levels:
            for name, child in servers.items():
                batch = payloads.make(args.requests)
                result = drive(child.url, batch, clients, args.max_seconds)
                results[name][str(clients)] = result
                if name == "mediabot":
                    mediabot_sent += result["posted_200"]
                    mediabot_attempted += result["requests"]
                    drained[str(clients)] = wait_drained(db_path, args.drain_seconds)
    finally:
        exit_codes = {name: child.stop() for name, child in servers.items()}
        llm.stop()
        twilio_server.stop()

    inbox = inbox_counts(db_path)
    stored = sum(inbox.values())
    ratios = {
        "throughput_mediabot_over_bare": {
            level: round(results["mediabot"][level]["rps"] / results["bare"][level]["rps"], 3)
            for level in results["bare"]},
    }
    top = str(max(levels))
    ratios[f"p99_mediabot_over_bare_at_{top}"] = round(
        results["mediabot"][top]["p99_ms"] / results["bare"][top]["p99_ms"], 3)
    worst_throughput = min(ratios["throughput_mediabot_over_bare"].values())
    p99_ratio = ratios[f"p99_mediabot_over_bare_at_{top}"]
    all_200 = all(r["errors"] == 0 for r in results["mediabot"].values())
    nothing_lost = stored == mediabot_sent == mediabot_attempted
    targets = {
        "throughput_ratio_min": {"target": f">= {TARGET_THROUGHPUT_RATIO}",
                                 "value": worst_throughput,
                                 "pass": worst_throughput >= TARGET_THROUGHPUT_RATIO},
        f"p99_ratio_at_{top}": {"target": f"<= {TARGET_P99_RATIO_AT_32}", "value": p99_ratio,
                                "pass": p99_ratio <= TARGET_P99_RATIO_AT_32},
        "all_mediabot_requests_200": {"value": all_200, "pass": all_200},
        "inbox_rows_equal_posts": {"posted": mediabot_attempted, "acknowledged_200":
                                   mediabot_sent, "stored": stored, "pass": nothing_lost},
    }
    report = {
        "config": {"requests_per_level": args.requests, "max_seconds_per_level":
                   args.max_seconds, "levels": levels, "warmup": args.warmup,
                   "users": args.users, "server_threads": 8, "cpus": os.cpu_count(),
                   "rate_limit_per_hour": args.rate_limit, "ack_only": args.ack_only},
        "results": {name: {level: {k: v for k, v in r.items() if k != "posted_200"}
                           for level, r in per.items()} for name, per in results.items()},
        "ratios": ratios,
        "targets": targets,
        "pass": all(t["pass"] for t in targets.values()),
        "mediabot": {"inbox_by_status": inbox, "worker_drained_after": drained,
                     "llm_requests": len(llm.requests), "twilio_sent": len(fake_twilio.sent),
                     "exit_codes": exit_codes},
        "total_seconds": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(report, indent=2))
    return 0 if report["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
