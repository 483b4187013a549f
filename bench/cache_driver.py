"""Holds the household conversation through the real engine, for ``bench/prompt_cache.py``.

Run as a child process with the mediabot checkout under test first on ``PYTHONPATH``, so the
same bench drives BEFORE and AFTER code. It reads one JSON object on stdin (the proxy's URL,
the texts, the settings), then for each text: tells the proxy which text comes and which tool
call its first answer should become, moves the injected clock on by the text's minutes, and
times ``Engine.handle``. The library is the daemon's own simulation (``mediabot.trial.sim``),
the database a fresh SQLite file, the model the proxy in front of llama-server. One JSON line
per text goes to stdout; an engine exception ends the run with a non-zero exit.
"""

import argparse
import dataclasses
import datetime as dt
import json
import sys
import time
import urllib.request

from mediabot.app import build_services, open_storage
from mediabot.config import Config, HistoryConfig, LLMConfig
from mediabot.conversation.engine import Engine
from mediabot.store import db
from mediabot.trial.demo import DEMO_PHONE, demo_config
from mediabot.trial.sim.stack import Simulation

START = dt.datetime(2026, 3, 14, 18, 30)   # naive UTC, as the engine's clock gives it


def config_for(plan: dict) -> Config:
    llm = dataclasses.replace(LLMConfig(), base_url=plan["proxy"] + "/v1", model="gemma-3-270m",
                              api_key="sk-bench", timeout_seconds=plan["timeout"],
                              max_retries=0, max_reply_tokens=plan["reply_tokens"])
    history = dataclasses.replace(HistoryConfig(), max_messages=plan["max_messages"])
    return dataclasses.replace(Config(), llm=llm, history=history)


def announce(proxy: str, index: int, forced: dict | None) -> None:
    """Tell the recording proxy which text comes next and what its first answer becomes."""
    body = json.dumps({"index": index, "call": forced}).encode()
    request = urllib.request.Request(proxy + "/bench/text", data=body,
                                     headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=10).close()


def converse(plan: dict) -> None:
    now = [START]
    with Simulation(now=START.replace(tzinfo=dt.UTC)) as sim:
        config = demo_config(config_for(plan), sim, plan["database"])
        open_storage(config)
        engine = Engine(build_services(config, clock=lambda: now[0]))
        user = db.User.get(db.User.phone == DEMO_PHONE)
        for index, (minutes, text, forced) in enumerate(plan["texts"]):
            now[0] += dt.timedelta(minutes=minutes)
            announce(plan["proxy"], index, forced)
            started = time.perf_counter()
            reply = engine.handle(user.id, text)
            print(json.dumps({"text": index, "sent": text, "reply": reply,
                              "turn_seconds": round(time.perf_counter() - started, 3)}),
                  flush=True)
        db.database.close()


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n")[0],
                            epilog="The plan is read as JSON on stdin.").parse_args()
    converse(json.load(sys.stdin))
