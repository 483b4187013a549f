"""The messages table's owner (``conversation/history.py``): messages stored and read back
newest last, per user, with the local time each text was received; cleared per user; never
changed by building a prompt from them."""

import copy
import datetime as dt
import json
import subprocess
import sys

import pytest

from mediabot.conversation.history import clear_history, get_history, save_message
from mediabot.conversation.prompt.build import build_llm_messages, build_prompt
from mediabot.store import db, migrations
from mediabot.text.localtime import zone_named
from tests.support.messages import SYSTEM, calls, contents, reply, result, user
from tests.support.prompts import body


@pytest.fixture
def database(tmp_path):
    path = str(tmp_path / "m.db")
    migrations.open_database(path)
    yield path
    db.database.close()


@pytest.fixture
def alex(database):
    return db.User.create(phone="+15551234567", display_name="Alex").id


def test_messages_round_trip_through_the_store(alex):
    msgs = [user("find dune"), calls(("c1", "search_media")), result("c1", "[1]"),
            reply("Found Dune (2021).")]
    ids = [save_message(alex, m, prompt_tokens=42 if m["role"] == "assistant" else None)
           for m in msgs]
    history = get_history(alex, 10)
    assert [m["_id"] for m in history] == ids
    assert [{k: v for k, v in m.items() if k not in ("_id", "_at") and v is not None}
            for m in history] == [{k: v for k, v in m.items() if v is not None} for m in msgs]
    assert [m["_at"] for m in history] == [db.Message.get_by_id(i).created_at for i in ids]
    assert db.Message.get_by_id(ids[1]).tool_calls == json.dumps(msgs[1]["tool_calls"])
    assert db.Message.get_by_id(ids[3]).prompt_tokens == 42


def test_stored_user_texts_carry_the_local_time_they_were_received(alex):
    """The hour and minute reach the model on the text itself, the same in every prompt, so
    nothing before the newest text changes; replies and made-up messages carry none."""
    at = dt.datetime(2026, 3, 29, 0, 59)                    # an hour before BST starts
    save_message(alex, user("what's on tonight?"), at=at)
    save_message(alex, reply("Slow Horses at 21:00."))
    save_message(alex, user("and tomorrow?"), at=at + dt.timedelta(hours=1, minutes=2))
    london = zone_named("Europe/London")
    first = build_llm_messages(SYSTEM, get_history(alex, 10)[:1], zone=london)
    later = build_llm_messages(SYSTEM, get_history(alex, 10), zone=london)
    assert [m["content"] for m in later[1:]] == [
        "[Sun 2026-03-29 00:59 GMT] what's on tonight?", "Slow Horses at 21:00.",
        "[Sun 2026-03-29 03:01 BST] and tomorrow?"]
    assert later[:2] == first
    assert build_llm_messages(SYSTEM, [user("hi")], zone=london)[1]["content"] == "hi"


def test_history_survives_reopening_the_database_file(database, alex):
    save_message(alex, user("remember me"))
    db.database.close()
    migrations.open_database(database)
    assert [m["content"] for m in get_history(alex, 5)] == ["remember me"]


def test_get_history_returns_the_newest_n_in_order_and_only_that_users(alex):
    sam = db.User.create(phone="+15557654321").id
    for i in range(10):
        save_message(alex, user(f"alex {i}"))
        save_message(sam, user(f"sam {i}"))
    assert contents(get_history(alex, 3)) == ["alex 7", "alex 8", "alex 9"]
    assert contents(get_history(sam, 100)) == [f"sam {i}" for i in range(10)]


def test_clear_history_deletes_only_that_users_rows(alex):
    sam = db.User.create(phone="+15557654321").id
    for who in (alex, alex, sam):
        save_message(who, user("hi"))
    assert clear_history(alex) == 2
    assert get_history(alex, 10) == [] and len(get_history(sam, 10)) == 1


def test_building_a_prompt_never_changes_stored_rows(alex):
    for m in [user("a"), user("b"), calls(("x" * 46, "search_media")), user("c")]:
        save_message(alex, m)
    before = list(db.Message.select().dicts())
    stored = get_history(alex, 60)
    snapshot = copy.deepcopy(stored)
    build_prompt(SYSTEM, stored, max_messages=2)
    assert stored == snapshot
    assert list(db.Message.select().dicts()) == before


def test_unreadable_tool_calls_json_is_ignored_not_fatal(alex, caplog):
    db.Message.create(user=alex, role="assistant", content="hi", tool_calls="{not json")
    save_message(alex, user("b"))
    history = get_history(alex, 5)
    assert "tool_calls" not in history[0] and "unreadable" in caplog.text
    assert contents(body(build_llm_messages(SYSTEM, history))) == ["b"]


@pytest.mark.e2e   # a Python process of its own
def test_the_history_core_imports_neither_confirmations_nor_the_sms_edge():
    probe = ("import sys, mediabot.conversation.history, mediabot.conversation.prompt.build; "
             "print(sorted(m for m in ('mediabot.conversation.confirmations', "
             "'mediabot.text.sms') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
