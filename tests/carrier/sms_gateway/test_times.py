"""The app's timestamps, read with their zone and written as the phone's filters take them."""

from datetime import UTC, datetime, timedelta, timezone

import pytest

from mediabot.carrier.sms_gateway.times import millis, phone_time, read_time

EST = timezone(timedelta(hours=-5))


@pytest.mark.parametrize("text, expected", [
    ("2026-03-01T10:00:00.000-05:00", datetime(2026, 3, 1, 10, tzinfo=EST)),
    ("2026-03-01T15:00:00.000Z", datetime(2026, 3, 1, 15, tzinfo=UTC)),
    ("2026-03-01T10:00:00.000+-5:00", datetime(2026, 3, 1, 10, tzinfo=EST)),   # Android 6
    ("2026-03-01T10:00:00+-05:00", datetime(2026, 3, 1, 10, tzinfo=EST)),
])
def test_a_phone_timestamp_is_the_same_instant_whatever_its_zone(text, expected):
    assert read_time(text) == expected
    assert read_time(text).utcoffset() is not None


@pytest.mark.parametrize("text", ["2026-03-01T10:00:00.000", "yesterday", 1772377200, None])
def test_a_time_without_a_zone_or_not_a_time_is_refused(text):
    with pytest.raises(ValueError):
        read_time(text)


def test_the_phone_is_asked_in_utc_with_milliseconds_only():
    when = datetime(2026, 3, 1, 10, 0, 0, 123456, tzinfo=EST)
    assert phone_time(when) == "2026-03-01T15:00:00.123Z"
    assert millis(read_time(phone_time(when))) == millis(when)
