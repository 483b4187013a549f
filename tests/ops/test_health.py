"""health: the write probe behind /healthz, cached on the injected clock."""

from mediabot.ops.health import WriteProbe, free_space_problem
from mediabot.store import db


def written_at():
    return db.database.execute_sql("SELECT written_at FROM health_probe").fetchone()[0]


def test_the_probe_writes_at_most_once_per_five_seconds(database, clock):
    probe = WriteProbe(clock)
    first = clock()
    assert probe.check() == "ok"
    for _ in range(20):   # a monitor polling hard
        clock.advance(seconds=0.2)
        assert probe.check() == "ok"
    assert written_at() == str(first), "one write for 4 s of polling"
    clock.advance(seconds=2)
    assert probe.check() == "ok" and written_at() == str(clock())


def test_a_database_that_refuses_writes_is_reported_and_recovers(database, clock):
    probe = WriteProbe(clock)
    db.database.execute_sql("PRAGMA query_only = 1")
    assert probe.check() == "error: cannot write (attempt to write a readonly database)"
    db.database.execute_sql("PRAGMA query_only = 0")
    assert probe.check().startswith("error"), "cached for a few seconds"
    clock.advance(seconds=6)
    assert probe.check() == "ok"


def test_free_space_is_checked_where_the_database_lives(tmp_path):
    assert free_space_problem(str(tmp_path / "mediabot.db")) is None   # this disk has room
    assert free_space_problem(":memory:") is None
