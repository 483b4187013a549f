"""The household's rules (``approvals/house_rules.py``) that need no daemon: the week a
quota counts starts on Monday in the household's zone."""

import datetime as dt

from mediabot.approvals.house_rules import week_start


def test_the_week_starts_monday_in_the_household_zone():
    from zoneinfo import ZoneInfo
    sunday_night_utc = dt.datetime(2026, 11, 23, 3, 0)    # still Sunday 22nd in New York
    assert week_start(sunday_night_utc, ZoneInfo("America/New_York")) == \
        dt.datetime(2026, 11, 16, 5, 0)
    assert week_start(sunday_night_utc, dt.UTC) == dt.datetime(2026, 11, 23, 0, 0)
