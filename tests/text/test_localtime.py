"""The household's time zone: what's on tonight, the model's "now" and history show, across
the autumn and spring daylight-saving changes, on the engine's injected clock."""

import datetime as dt
import json
from zoneinfo import ZoneInfo

import pytest
from click.testing import CliRunner

from mediabot.cli import main
from mediabot.conversation import history
from mediabot.store import db
from mediabot.text.localtime import host_zone, local_text, zone_named
from tests.support.config_files import dead_servers, write_config
from tests.support.household import ADMIN
from tests.support.prompts import conversation

# (zone, now before the change, the next two airings: same UTC hour, either side of it)
DST_CHANGES = {
    # New York falls back on Sunday 1 November 2026 (06:00 UTC)
    "America/New_York": (dt.datetime(2026, 10, 29, 23, 30),
                         "Thu 2026-10-29 19:30 EDT",
                         ["Sat 2026-10-31 19:30 EDT", "Sat 2026-11-07 18:30 EST"],
                         "Thu 2026-11-05 18:30 EST"),
    # London springs forward on Sunday 29 March 2026 (01:00 UTC)
    "Europe/London": (dt.datetime(2026, 3, 26, 20, 0),
                      "Thu 2026-03-26 20:00 GMT",
                      ["Sat 2026-03-28 20:00 GMT", "Sat 2026-04-04 21:00 BST"],
                      "Thu 2026-04-02 21:00 BST"),
}


@pytest.mark.parametrize("zone", DST_CHANGES)
def test_upcoming_and_now_are_in_the_households_zone_across_a_dst_change(
        zone, engine_for, fake_llm, clock):
    now, said_now, airings, week_later = DST_CHANGES[zone]
    clock.now = now
    engine = engine_for(arr=True, server={"timezone": zone})
    alex = db.User.get(phone=ADMIN).id
    fake_llm.enqueue_tool_calls([("upcoming", {"days": 10})])
    reply = engine.handle(alex, "what's on this week?")   # the calendar's own answer
    system = fake_llm.requests[0]["messages"][0]["content"]
    assert (f"starts with the local time it was sent, in square brackets (time zone {zone}); "
            "tools give times in this zone too.") in system
    assert fake_llm.requests[0]["messages"][-1]["content"] == f"[{said_now}] what's on this week?"
    assert all(f"Slow Horses {code}, {airs}" in reply
               for code, airs in zip(("S05E04", "S05E05"), airings, strict=False)), reply
    clock.advance(days=7)
    fake_llm.enqueue_text("Nothing new.")
    engine.handle(alex, "anything else?")
    later = fake_llm.requests[1]["messages"]
    result = json.loads([m for m in later if m["role"] == "tool"][-1]["content"])
    slow_horses = [e["airs"] for e in result["episodes"] if e["series"] == "Slow Horses"]
    assert slow_horses == airings
    assert later[-1]["content"] == f"[{week_later}] anything else?"
    assert conversation(fake_llm.requests[1])[0]["content"] == \
        f"[{said_now}] what's on this week?"   # as it was first sent
    assert later[0]["content"] == system     # the minute is in the texts: the prefix stays


def test_a_search_gives_the_next_airing_in_the_households_zone(engine_for, fake_llm, clock):
    clock.now = dt.datetime(2026, 10, 30, 23, 30)     # the next airing is after the change
    engine = engine_for(arr=True, server={"timezone": "America/New_York"})
    fake_llm.enqueue_tool_calls([("search_media", {"query": "slow horses", "kind": "series"})])
    reply = engine.handle(db.User.get(phone=ADMIN).id, "do we have slow horses?")
    assert reply.endswith("The next episode airs Sun 2026-11-01 18:30 EST."), reply
    fake_llm.enqueue_text("You're welcome.")
    engine.handle(db.User.get(phone=ADMIN).id, "thanks")
    tool = [m for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"][-1]
    result = json.loads(tool["content"])
    assert result["results"][0]["next_episode_airs"] == "Sun 2026-11-01 18:30 EST"


def test_history_show_prints_times_in_the_configured_zone(tmp_path):
    path = write_config(tmp_path, server={"public_url": "https://sms.example.com",
                                          "timezone": "Europe/London"},
                        database={"path": tmp_path / "m.db"})
    runner = CliRunner()
    assert runner.invoke(main, ["users", "add", ADMIN, "--name", "Alex",
                                "--config", str(path)]).exit_code == 0
    user = db.User.get(phone=ADMIN)
    for moment, text in ((dt.datetime(2026, 3, 28, 20, 0), "before"),
                         (dt.datetime(2026, 3, 29, 20, 0), "after")):
        row = history.save_message(user.id, {"role": "user", "content": text})
        db.Message.update(created_at=moment).where(db.Message.id == row).execute()
    result = runner.invoke(main, ["history", "show", ADMIN, "--config", str(path)])
    db.database.close()
    assert result.output.splitlines() == ["2026-03-28 20:00  user       before",
                                          "2026-03-29 21:00  user       after"]


def test_an_unknown_zone_is_a_config_error_with_the_fix(tmp_path):
    path = write_config(tmp_path, server={"public_url": "https://sms.example.com",
                                          "timezone": "Europe/Londn"})
    result = CliRunner().invoke(main, ["users", "list", "--config", str(path)])
    assert result.exit_code == 2
    assert result.output == (
        f"config error: {path}: [server] timezone = 'Europe/Londn' is not a time zone; use "
        "an IANA name like \"America/New_York\" or \"Europe/London\" (list them with "
        "`timedatectl list-timezones`), or leave it empty for this machine's zone\n")


def test_check_names_the_zone_times_are_shown_in(tmp_path, monkeypatch):
    monkeypatch.setenv("TZ", "Europe/Berlin")
    host_zone.cache_clear()
    path = write_config(
        tmp_path, server={"public_url": "https://sms.home.test"},
        database={"path": tmp_path / "m.db"},
        **dead_servers(from_number="+15557654321"))
    try:
        first = CliRunner().invoke(main, ["check", "--config", str(path)]).output
        path.write_text(path.read_text().replace(
            "[server]\n", '[server]\ntimezone = "America/New_York"\n'))
        second = CliRunner().invoke(main, ["check", "--config", str(path)]).output
    finally:
        host_zone.cache_clear()
    assert (f"ok   config: {path} is valid (0 users in [[users]]; times shown in "
            "Europe/Berlin, this machine's zone)") in first
    assert "times shown in America/New_York)" in second


def test_no_timezone_means_the_hosts_zone_with_its_dst_rules(monkeypatch):
    monkeypatch.setenv("TZ", "Australia/Sydney")
    host_zone.cache_clear()
    try:
        zone = zone_named("")
        assert zone == ZoneInfo("Australia/Sydney")
        summer = dt.datetime(2026, 1, 10, 9, 0, tzinfo=dt.UTC)
        winter = dt.datetime(2026, 7, 10, 9, 0, tzinfo=dt.UTC)
        assert local_text(summer, zone) == "Sat 2026-01-10 20:00 AEDT"
        assert local_text(winter, zone) == "Fri 2026-07-10 19:00 AEST"
    finally:
        host_zone.cache_clear()


@pytest.mark.e2e   # a Python process of its own
def test_zones_work_without_a_system_zoneinfo_database(tmp_path):
    """PYTHONTZPATH="" hides /usr/share/zoneinfo, as on a minimal container: the tzdata
    package (a dependency for this reason) still knows the zones."""
    import os
    import subprocess
    import sys

    script = ("from mediabot.text.localtime import zone_named, local_text; import datetime as dt; "
              "print(local_text(dt.datetime(2026, 7, 1, 12), zone_named('Europe/London')))")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=60, env={**os.environ, "PYTHONTZPATH": ""})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Wed 2026-07-01 13:00 BST"
