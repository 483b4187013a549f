"""Does a turn cost the same with 100 or 1,000,000 stored messages? (DESIGN section 3)

One user's history grows to each size in turn (with as many rows of other users interleaved,
as in a shared household database); at each size the median time of
``get_history(fetch_limit=60)`` + ``build_llm_messages`` is measured over many runs. Prints
JSON; ``ratio`` is the largest size's median over the smallest's (target <= 1.5).

    .venv/bin/python bench/context_scale.py [--sizes 100,10000,1000000] [--runs 300]
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

from mediabot import db
from mediabot.history import build_llm_messages, get_history

SYSTEM = "You are mediabot, a household media assistant. Keep replies short; this is SMS."
FETCH_LIMIT = 60
CHUNK = 5_000
TARGET_RATIO = 1.5


CALLS = json.dumps([{"id": "CALL_ID", "type": "function",
                     "function": {"name": "search_media", "arguments": '{"query": "dune"}'}}])


def conversation_row(user_id: int, n: int) -> dict:
    """Row ``n`` of a realistic history: question, tool call, tool result, answer, repeating."""
    turn, kind = divmod(n, 4)
    call_id = f"call_{turn}"
    if kind == 0:
        row = {"role": "user", "content": f"can you get the new Dune movie? ({turn})"}
    elif kind == 1:
        row = {"role": "assistant", "content": None, "tool_calls": CALLS.replace("CALL_ID",
                                                                                 call_id)}
    elif kind == 2:
        row = {"role": "tool", "tool_call_id": call_id, "name": "search_media",
               "content": '[{"title": "Dune: Part Two", "year": 2024, "tmdb_id": 693134}]'}
    else:
        row = {"role": "assistant", "content": "Dune: Part Two (2024) is in the library."}
    return row | {"user": user_id, "tool_calls": row.get("tool_calls"),
                  "tool_call_id": row.get("tool_call_id"), "name": row.get("name")}


def grow(user_id: int, others: list[int], start: int, count: int) -> None:
    """Insert ``count`` rows for the user, each followed by one row of another user."""
    rows = []
    for index in range(count):
        row = conversation_row(user_id, start + index)
        rows.append(row)
        rows.append(dict(row, user=others[index % len(others)]))
        if len(rows) >= CHUNK:
            _insert(rows)
            rows = []
    _insert(rows)


def _insert(rows: list[dict]) -> None:
    if not rows:
        return
    with db.database.atomic():
        for start in range(0, len(rows), 500):
            db.Message.insert_many(rows[start:start + 500]).execute()


def measure(user_id: int, runs: int) -> dict:
    fetch, build = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        history = get_history(user_id, FETCH_LIMIT)
        t1 = time.perf_counter()
        build_llm_messages(SYSTEM, history, max_messages=20, max_tokens=4000)
        t2 = time.perf_counter()
        fetch.append(t1 - t0)
        build.append(t2 - t1)
    totals = [f + b for f, b in zip(fetch, build)]
    return {"fetch_ms": _ms(statistics.median(fetch)), "build_ms": _ms(statistics.median(build)),
            "median_ms": _ms(statistics.median(totals)), "p90_ms": _ms(_p90(totals))}


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 4)


def _p90(values: list[float]) -> float:
    return sorted(values)[int(len(values) * 0.9)]


def run(path: str, sizes: list[int], runs: int) -> dict:
    db.open_database(path)
    users = [db.User.create(phone=f"+1555000000{i}").id for i in range(4)]
    user, others = users[0], users[1:]
    results, stored, inserting = {}, 0, 0.0
    for size in sorted(sizes):
        t0 = time.perf_counter()
        grow(user, others, stored, size - stored)
        inserting += time.perf_counter() - t0
        stored = size
        measure(user, min(runs, 20))                       # warm the page cache
        results[str(size)] = measure(user, runs) | {
            "rows_in_table": db.Message.select().count()}
    db.database.close()
    smallest, largest = results[str(min(sizes))], results[str(max(sizes))]
    ratio = round(largest["median_ms"] / smallest["median_ms"], 3)
    return {"benchmark": "context_scale", "fetch_limit": FETCH_LIMIT, "runs": runs,
            "sizes": results, "ratio": ratio, "target_ratio": TARGET_RATIO,
            "ok": ratio <= TARGET_RATIO, "insert_seconds": round(inserting, 1)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,10000,1000000")
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        report = run(os.path.join(tmp, "bench.db"), sizes, args.runs)
    json.dump(report, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
