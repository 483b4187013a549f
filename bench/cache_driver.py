"""Holds the household conversation through the real engine, for ``bench/prompt_cache.py``.

Run as a child process with the mediabot tree under test first on ``PYTHONPATH``, so the same
bench drives two revisions (``--baseline REV``) or any two checkouts. It reads one JSON object
on stdin (the proxy's URL, the members, the texts, the settings), then for each text: tells
the proxy which text comes, from whom, and which tool call its first answer should become,
moves the injected clock on by the text's minutes, and has the engine do what the daemon
does for the member who sends it: ``Engine.respond`` (timed: what the person waits for),
then, once the proxy is told (``/bench/after``), ``Engine.after_turn`` (the rolling summary
and the next prompt read ahead, off the person's wait). A tree without ``after_turn`` or
``read_text`` (an older revision) is timed on ``Engine.handle`` alone. The library is the
daemon's own simulation, the database a fresh SQLite file, the model the proxy in front of
llama-server. Its first stdout line names the mediabot
package it imported (the bench checks it is the tree under test), then one JSON line per
text; an engine exception ends the run with a non-zero exit.

The few names it needs are looked up in ``PLACES``, newest location first: a revision that
moved a module still runs, once its new place is added there (keep the old one, so that
older revisions keep running as the baseline).
"""

import argparse
import dataclasses
import datetime as dt
import importlib
import json
import sys
import time
import urllib.request

START = dt.datetime(2026, 3, 14, 18, 30)   # naive UTC, as the engine's clock gives it
PLACES = {
    "build_engine": ("mediabot.app:build_engine",),
    "open_storage": ("mediabot.app:open_storage",),
    "config": ("mediabot.config",),
    "db": ("mediabot.store.db", "mediabot.db"),
    "Simulation": ("mediabot.trial.sim.stack:Simulation", "mediabot.sim.stack:Simulation"),
    "read_text": ("mediabot.conversation.incoming:read_text",),
    "get_person": ("mediabot.store.people:get_person",),
}


def find(name: str):
    """The object ``PLACES[name]`` names in the first place that imports."""
    missing = []
    for place in PLACES[name]:
        module_name, _, attribute = place.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            missing.append(f"{place} ({exc})")
            continue
        if not attribute:
            return module
        if hasattr(module, attribute):
            return getattr(module, attribute)
        missing.append(f"{place} (no {attribute})")
    raise ImportError(f"{name} not found in this tree; tried: {'; '.join(missing)}")


def config_for(plan: dict, sim, members: list[dict]):
    """The bench's settings on top of the defaults: the proxy as the model, the simulation
    as Sonarr and Radarr, a fresh database, the members as ``[[users]]``."""
    config = find("config")
    llm = dataclasses.replace(config.LLMConfig(), base_url=plan["proxy"] + "/v1",
                              model="gemma-3-270m", api_key="sk-bench",
                              timeout_seconds=plan["timeout"], max_retries=0,
                              max_reply_tokens=plan["reply_tokens"])
    history = dataclasses.replace(config.HistoryConfig(), max_messages=plan["max_messages"])
    users = tuple(config.UserConfig(phone=m["phone"], name=m["name"], role=m["role"],
                                    language=m["language"]) for m in members)
    return dataclasses.replace(config.Config(), llm=llm, history=history,
                               sonarr=sim.arr_config("sonarr"), radarr=sim.arr_config("radarr"),
                               database=config.DatabaseConfig(path=plan["database"]),
                               users=users)


def announce(proxy: str, index: int, member: int, text: str, forced: dict | None) -> None:
    """Tell the recording proxy which text comes next, whose, what it says, and what its
    first answer becomes."""
    post(proxy, "/bench/text", {"index": index, "member": member, "text": text,
                                "call": forced})


def post(proxy: str, path: str, plan: dict) -> None:
    request = urllib.request.Request(proxy + path, data=json.dumps(plan).encode(),
                                     headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=10).close()


def answer(engine, config, proxy: str, user_id: int, text: str) -> tuple[str, float]:
    """The reply to ``text`` and the seconds the person waited for it; then the work the
    daemon does after the reply has gone (``after_turn``), the proxy told it comes."""
    try:
        read_text, get_person = find("read_text"), find("get_person")
    except ImportError:
        read_text = get_person = None
    if read_text is None or not all(hasattr(engine, name) for name in ("respond", "after_turn")):
        started = time.perf_counter()
        return engine.handle(user_id, text), time.perf_counter() - started
    started = time.perf_counter()
    handled = engine.respond(read_text(get_person(user_id, config.sms.language), text))
    waited = time.perf_counter() - started
    post(proxy, "/bench/after", {})
    engine.after_turn(handled)
    return handled.reply.text, waited


def converse(plan: dict) -> None:
    import mediabot
    print(json.dumps({"mediabot": mediabot.__file__}), flush=True)
    now, db, members = [START], find("db"), plan["members"]
    with find("Simulation")(now=START.replace(tzinfo=dt.UTC)) as sim:
        config = config_for(plan, sim, members)
        find("open_storage")(config)
        engine = find("build_engine")(config, clock=lambda: now[0])
        ids = [db.User.get(db.User.phone == m["phone"]).id for m in members]
        for index, (member, minutes, text, forced) in enumerate(plan["texts"]):
            now[0] += dt.timedelta(minutes=minutes)
            announce(plan["proxy"], index, member, text, forced)
            reply, waited = answer(engine, config, plan["proxy"], ids[member], text)
            print(json.dumps({"text": index, "member": member, "sent": text, "reply": reply,
                              "turn_seconds": round(waited, 3)}), flush=True)
        db.database.close()


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n")[0],
                            epilog="The plan is read as JSON on stdin.").parse_args()
    converse(json.load(sys.stdin))
