"""How fast does ``POST /sms`` acknowledge Twilio under load, next to a bare Flask app?

Four processes, so no one's CPU is counted against another's: this orchestrator; the fake
OpenAI and Twilio (``harness.Fakes``); the servers, a real ``mediabot serve`` and a bare
Flask+waitress app answering the same empty TwiML with the same 8 threads, both started
the same way (``harness.Child``); and, for each round, a fresh load generator
(``load_client.py``: plain ``http.client`` threads, one keep-alive connection each).

Rounds interleave the two servers (bare first in even rounds, mediabot first in odd ones)
at every client level, ``--repeats`` times; the JSON gives each figure's median over the
rounds, the ratios of the medians and the median of the per-round (paired) ratios, the
servers' CPU per request, and the load generator's own CPU use. A round whose client used
more than ``CLIENT_SATURATED`` of a core measured the client, not the server: the run is then
marked ``valid: false``. Between mediabot rounds the orchestrator waits (bounded) for the
worker to drain, so one round's backlog of model turns does not run in the next bare round.

Nothing may be lost: every MessageSid acknowledged with 200 must be in the inbox, once.

    .venv/bin/python bench/webhook_load.py [--levels 1,8,32] [--repeats 3]
        [--requests 3000] [--users 32] [--ack-only]

``--ack-only`` sends from numbers not in [[users]] (stored as "ignored", no model turn):
the webhook path alone, without the worker's turns competing for the CPU.
Exit code 0 when the targets are met, nothing was lost and the run is valid.
"""

import argparse
import json
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import ROOT, Fakes, bare_child, loadavg, mediabot_child, median, ratio

TARGET_THROUGHPUT_RATIO = 0.8   # mediabot rps / bare rps at the top level
TARGET_P99_RATIO = 1.5          # mediabot p99 / bare p99 at the top level
CLIENT_SATURATED = 0.85         # of one core


def run_client(child, clients: int, requests: int, users: int, strangers: bool,
               prefix: str, max_seconds: float) -> dict:
    argv = [sys.executable, str(ROOT / "bench" / "load_client.py"), "--port", str(child.port),
            "--clients", str(clients), "--requests", str(requests), "--users", str(users),
            "--prefix", prefix, "--max-seconds", str(max_seconds)]
    if strangers:
        argv.append("--strangers")
    cpu0 = child.cpu_seconds()
    out = subprocess.run(argv, capture_output=True, text=True, check=True, cwd=ROOT)
    result = json.loads(out.stdout)
    served = result["requests"] or 1
    result["server_cpu_ms_per_request"] = round((child.cpu_seconds() - cpu0) * 1000 / served, 3)
    return result


def inbox_sids(db_path: Path) -> dict:
    connection = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10)
    try:
        rows = connection.execute("SELECT message_sid, status FROM inbox").fetchall()
    finally:
        connection.close()
    return {"sids": [sid for sid, _ in rows],
            "by_status": {status: sum(1 for _, s in rows if s == status)
                          for status in {s for _, s in rows}}}


def wait_drained(db_path: Path, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = inbox_sids(db_path)["by_status"]
        if not status.get("queued") and not status.get("processing"):
            return True
        time.sleep(0.2)
    return False


def summarise(rounds: list[dict], levels: list[int]) -> dict:
    """Medians per server and level, ratios of medians and paired ratios."""
    out = {}
    for level in levels:
        per = {name: [r for r in rounds if r["server"] == name and r["clients"] == level]
               for name in ("bare", "mediabot")}
        figures = {name: {key: median([r[key] for r in results]) for key in
                          ("rps", "p50_ms", "p99_ms", "max_ms", "server_cpu_ms_per_request",
                           "client_cpu_fraction")}
                   for name, results in per.items()}
        paired = [(m, b) for m, b in zip(per["mediabot"], per["bare"], strict=True)]
        out[str(level)] = {
            **figures,
            "throughput_ratio": ratio(figures["mediabot"]["rps"], figures["bare"]["rps"]),
            "p99_ratio": ratio(figures["mediabot"]["p99_ms"], figures["bare"]["p99_ms"]),
            "paired_throughput_ratios": [ratio(m["rps"], b["rps"]) for m, b in paired],
            "paired_p99_ratios": [ratio(m["p99_ms"], b["p99_ms"]) for m, b in paired],
        }
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--levels", default="1,8,32")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--requests", type=int, default=3000, help="per round")
    parser.add_argument("--max-seconds", type=float, default=20.0, help="per round")
    parser.add_argument("--warmup", type=int, default=500)
    parser.add_argument("--users", type=int, default=32)
    parser.add_argument("--drain-seconds", type=float, default=30.0)
    parser.add_argument("--ack-only", action="store_true")
    args = parser.parse_args(argv)
    levels = [int(x) for x in args.levels.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="mediabot-webhook-load-"))
    load_before = loadavg()
    fakes = Fakes()
    servers = {"bare": bare_child(tmp), "mediabot": mediabot_child(tmp, fakes, args.users)}
    db_path = tmp / "mediabot.db"
    rounds, acknowledged, drained = [], [], []
    started = time.perf_counter()
    try:
        for child in servers.values():
            child.start()
        for name, child in servers.items():
            warm = run_client(child, 8, args.warmup, args.users, args.ack_only, f"W{name[0]}",
                              args.max_seconds)
            if name == "mediabot":
                acknowledged += warm["acknowledged"]
                drained.append(wait_drained(db_path, args.drain_seconds))
        for repeat in range(args.repeats):
            order = ["bare", "mediabot"] if repeat % 2 == 0 else ["mediabot", "bare"]
            for level in levels:
                for name in order:
                    result = run_client(servers[name], level, args.requests, args.users,
                                        args.ack_only, f"R{repeat}L{level}{name[0]}",
                                        args.max_seconds)
                    if name == "mediabot":
                        acknowledged += result["acknowledged"]
                        drained.append(wait_drained(db_path, args.drain_seconds))
                    del result["acknowledged"]
                    rounds.append({"server": name, "repeat": repeat, **result})
        rss = {name: child.rss_mb() for name, child in servers.items()}
    finally:
        exit_codes = {name: child.stop() for name, child in servers.items()}
        fake_counts = fakes.stop()

    inbox = inbox_sids(db_path)
    stored = set(inbox["sids"])
    missing = [sid for sid in acknowledged if sid not in stored]
    summary = summarise(rounds, levels)
    top = summary[str(max(levels))]
    client_peak = max(r["client_cpu_fraction"] or 0 for r in rounds)
    errors = sum(r["errors"] for r in rounds if r["server"] == "mediabot")
    targets = {
        f"throughput_ratio_at_{max(levels)}": {
            "target": f">= {TARGET_THROUGHPUT_RATIO}", "value": top["throughput_ratio"],
            "pass": (top["throughput_ratio"] or 0) >= TARGET_THROUGHPUT_RATIO},
        f"p99_ratio_at_{max(levels)}": {
            "target": f"<= {TARGET_P99_RATIO}", "value": top["p99_ratio"],
            "pass": top["p99_ratio"] is not None and top["p99_ratio"] <= TARGET_P99_RATIO},
        "nothing_lost": {"acknowledged_200": len(acknowledged), "inbox_rows": len(inbox["sids"]),
                         "acknowledged_missing_from_inbox": len(missing),
                         "duplicate_rows": len(inbox["sids"]) - len(stored),
                         "mediabot_errors": errors,
                         "pass": not missing and len(inbox["sids"]) == len(stored)
                         and errors == 0},
    }
    valid = client_peak < CLIENT_SATURATED
    report = {
        "benchmark": "webhook_load",
        "config": {"levels": levels, "repeats": args.repeats, "requests_per_round":
                   args.requests, "users": args.users, "ack_only": args.ack_only,
                   "server_threads": 8, "cpus": len(__import__("os").sched_getaffinity(0)),
                   "loadavg_before": load_before, "loadavg_after": loadavg()},
        "medians": summary,
        "targets": targets,
        "valid": valid,
        "client_cpu_peak_fraction": client_peak,
        "invalid_reason": None if valid else
        f"the load generator used {client_peak:.0%} of a core in some round: saturated",
        "pass": valid and all(t["pass"] for t in targets.values()),
        "mediabot": {"inbox_by_status": inbox["by_status"], "worker_drained": all(drained),
                     "rss_mb_at_end": rss, "exit_codes": exit_codes, **fake_counts},
        "rounds": rounds,
        "total_seconds": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(report, indent=2))
    return 0 if report["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
