"""The load generator, a process of its own: N threads, each with one keep-alive
``http.client`` connection, POST pre-signed webhooks as fast as the server answers.

Everything costly (signing, encoding) happens before the clock starts; the measured loop
is a plain request/response. It reports its own CPU use over the measured window: a client
near one full core (the GIL's limit) is measuring itself, not the server, and the bench
marks such a round invalid.

    python bench/load_client.py --port P --clients 32 --requests 3000 --prefix r1m
        [--users 32] [--strangers] [--max-seconds 20]

Prints one JSON object (rps, p50/p99/max ms, status counts, client CPU, acknowledged
MessageSids).
"""

import argparse
import itertools
import json
import math
import resource
import sys
import threading
import time
from http.client import HTTPConnection
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import EMPTY_TWIML, HOST, signed_payloads

HEADERS = {"Content-Type": "application/x-www-form-urlencoded"}


def percentile(sorted_values: list[float], q: float) -> float | None:
    if not sorted_values:
        return None
    return sorted_values[max(0, math.ceil(q * len(sorted_values)) - 1)]


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def drive(port: int, payloads: list, clients: int, max_seconds: float) -> dict:
    next_index = itertools.count()
    latencies = [[] for _ in range(clients)]
    acknowledged = [[] for _ in range(clients)]
    codes = [{} for _ in range(clients)]
    gate = threading.Barrier(clients + 1)
    deadline = [math.inf]

    def client(k: int) -> None:
        connection = HTTPConnection(HOST, port, timeout=30)
        connection.request("GET", "/healthz")       # opens the keep-alive connection
        connection.getresponse().read()
        gate.wait()
        mine, acked, seen = latencies[k], acknowledged[k], codes[k]
        while time.perf_counter() < deadline[0]:
            i = next(next_index)
            if i >= len(payloads):
                break
            sid, body, signature = payloads[i]
            t0 = time.perf_counter()
            try:
                connection.request("POST", "/sms", body,
                                   {**HEADERS, "X-Twilio-Signature": signature})
                response = connection.getresponse()
                text = response.read().decode()
            except OSError as exc:
                seen[type(exc).__name__] = seen.get(type(exc).__name__, 0) + 1
                connection.close()
                connection = HTTPConnection(HOST, port, timeout=30)
                continue
            mine.append(time.perf_counter() - t0)
            ok = response.status == 200 and text == EMPTY_TWIML
            key = "200" if ok else ("200-bad-body" if response.status == 200
                                    else str(response.status))
            seen[key] = seen.get(key, 0) + 1
            if ok:
                acked.append(sid)
        connection.close()

    threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(clients)]
    for thread in threads:
        thread.start()
    gate.wait()
    cpu0, began = cpu_seconds(), time.perf_counter()
    deadline[0] = began + max_seconds
    for thread in threads:
        thread.join()
    elapsed, cpu = time.perf_counter() - began, cpu_seconds() - cpu0
    lat = sorted(x for per in latencies for x in per)
    status: dict = {}
    for per in codes:
        for key, n in per.items():
            status[key] = status.get(key, 0) + n
    return {
        "clients": clients, "requests": len(lat), "seconds": round(elapsed, 3),
        "rps": round(len(lat) / elapsed, 1) if elapsed else None,
        "p50_ms": round(percentile(lat, 0.50) * 1000, 2) if lat else None,
        "p99_ms": round(percentile(lat, 0.99) * 1000, 2) if lat else None,
        "max_ms": round(lat[-1] * 1000, 2) if lat else None,
        "status": status, "errors": sum(n for key, n in status.items() if key != "200"),
        "client_cpu_seconds": round(cpu, 3),
        "client_cpu_fraction": round(cpu / elapsed, 3) if elapsed else None,
        "acknowledged": [sid for per in acknowledged for sid in per],
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--max-seconds", type=float, default=20.0)
    parser.add_argument("--users", type=int, default=32)
    parser.add_argument("--strangers", action="store_true")
    parser.add_argument("--prefix", required=True, help="makes this round's MessageSids unique")
    args = parser.parse_args(argv)
    payloads = signed_payloads(args.prefix, args.requests, args.users, args.strangers)
    json.dump(drive(args.port, payloads, args.clients, args.max_seconds), sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
