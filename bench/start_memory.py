"""How soon does ``mediabot serve`` answer /healthz, and how much memory does it hold after
800 webhooks? Next to a bare Flask+waitress app started the same way.

Each round starts both servers fresh (``harness.Child``: exec, then /healthz polled every
5 ms; the time to the first 200 is the start time), reads their RSS from /proc, sends each
the same 800 signed webhooks from a separate load-generator process (8 clients), waits for
mediabot's worker to answer them all, and reads the RSS again. The CPU time each process
used until its first 200 is reported too: on a machine shared with other work the wall
time is mostly waiting for a core, and CPU time is what the start would take on an idle
one. Rounds alternate which
server starts first. ``--strangers`` sends from numbers not in [[users]] (no model turn,
so the model SDK is never loaded): the webhook path's own memory.

    .venv/bin/python bench/start_memory.py [--rounds 3] [--webhooks 800] [--strangers]

Prints JSON with medians, the bare app's beside mediabot's, and the targets.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import ROOT, Fakes, bare_child, loadavg, mediabot_child, median
from bench.webhook_load import wait_drained

TARGET_START_SECONDS = 1.0
TARGET_RSS_MB = 80.0


def send(child, webhooks: int, users: int, strangers: bool, prefix: str) -> dict:
    argv = [sys.executable, str(ROOT / "bench" / "load_client.py"), "--port", str(child.port),
            "--clients", "8", "--requests", str(webhooks), "--users", str(users),
            "--prefix", prefix]
    if strangers:
        argv.append("--strangers")
    result = json.loads(subprocess.run(argv, capture_output=True, text=True, check=True,
                                       cwd=ROOT).stdout)
    return {"acknowledged": len(result["acknowledged"]), "errors": result["errors"]}


def one_round(fakes: Fakes, number: int, args) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="mediabot-start-memory-"))
    children = {"bare": bare_child(tmp), "mediabot": mediabot_child(tmp, fakes, args.users)}
    order = list(children) if number % 2 == 0 else list(children)[::-1]
    out = {}
    try:
        for name in order:
            child = children[name].start()
            out[name] = {"start_seconds": round(child.ready_seconds, 3),
                         "start_cpu_seconds": round(child.cpu_seconds(), 3),
                         "rss_mb_at_start": child.rss_mb()}
        for name in order:
            child = children[name]
            sent = send(child, args.webhooks, args.users, args.strangers, f"M{number}{name[0]}")
            if name == "mediabot":
                out[name]["worker_drained"] = wait_drained(tmp / "mediabot.db", 60)
            time.sleep(0.5)
            out[name].update(sent, rss_mb_after_webhooks=child.rss_mb())
    finally:
        for child in children.values():
            child.stop()
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--webhooks", type=int, default=800)
    parser.add_argument("--users", type=int, default=8)
    parser.add_argument("--strangers", action="store_true")
    args = parser.parse_args(argv)
    load_before = loadavg()
    fakes = Fakes()
    try:
        rounds = [one_round(fakes, n, args) for n in range(args.rounds)]
    finally:
        counts = fakes.stop()
    medians = {name: {key: median([r[name][key] for r in rounds]) for key in
                      ("start_seconds", "start_cpu_seconds", "rss_mb_at_start",
                       "rss_mb_after_webhooks")}
               for name in ("bare", "mediabot")}
    mine = medians["mediabot"]
    report = {
        "benchmark": "start_memory",
        "config": {"rounds": args.rounds, "webhooks": args.webhooks, "users": args.users,
                   "strangers": args.strangers, "loadavg_before": load_before,
                   "loadavg_after": loadavg()},
        "medians": medians,
        "targets": {
            "start_seconds": {"target": f"<= {TARGET_START_SECONDS}",
                              "value": mine["start_seconds"],
                              "pass": mine["start_seconds"] <= TARGET_START_SECONDS},
            "rss_mb_after_webhooks": {"target": f"<= {TARGET_RSS_MB}",
                                      "value": mine["rss_mb_after_webhooks"],
                                      "pass": mine["rss_mb_after_webhooks"] <= TARGET_RSS_MB},
        },
        "rounds": rounds, "fakes": counts,
    }
    report["pass"] = all(t["pass"] for t in report["targets"].values())
    print(json.dumps(report, indent=2))
    return 0 if report["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
