"""The phone's health and settings, read into what an operator is told to fix."""

import pytest

from mediabot.carrier.sms_gateway.health import (
    PhoneHealth,
    last_seen,
    missing_webhooks,
    read_health,
    settings_warnings,
)


def health(level: int = 80, charging: int = 3, online: int = 1, failed: int = 0,
           status: str = "pass") -> dict:
    def check(value: int, unit: str) -> dict:
        return {"status": "pass", "observedValue": value, "observedUnit": unit}
    return {"status": status, "version": "1.68.0", "releaseId": 68,
            "checks": {"battery:level": check(level, "percent"),
                       "battery:charging": check(charging, "flags"),
                       "connection:status": check(online, "boolean"),
                       "messages:failed": check(failed, "messages")}}


def test_a_charged_connected_phone_has_nothing_to_fix():
    read = read_health(health())
    assert read == PhoneHealth("pass", "1.68.0", 80, True, True, 0)
    assert read.problems() == []


@pytest.mark.parametrize("kwargs, words", [
    ({"level": 12, "status": "warn"}, "battery is at 12%"),
    ({"charging": 0}, "not charging"),
    ({"online": 0}, "no internet connection"),
    ({"failed": 3}, "3 text(s) failed"),
])
def test_each_problem_is_named_with_its_fix(kwargs, words):
    assert any(words in line for line in read_health(health(**kwargs)).problems())


def test_checks_the_app_does_not_send_are_not_reported_not_failed():
    read = read_health({"status": "pass"})
    assert (read.battery_percent, read.charging, read.online) == (None, None, None)
    assert read.problems() == []
    with pytest.raises(ValueError):
        read_health({"status": "ok"})


def test_lifo_and_a_tight_limit_are_warned_about_fifo_is_fine():
    assert settings_warnings({"messages": {"processing_order": "FIFO"}}) == []
    lines = settings_warnings({"messages": {"processing_order": "LIFO",
                                            "limit_period": "PerMinute", "limit_value": 2}})
    assert ["FIFO" in lines[0], "2 text(s) a minute" in lines[1]] == [True, True]
    assert "FIFO" in settings_warnings({})[0]           # the app's default is LIFO


def test_the_events_a_cloud_registration_lacks_are_named():
    url = "https://bot.example.com/sms/gateway"
    hooks = [{"id": "1", "url": url, "event": "sms:received"},
             {"id": "2", "url": "https://old.example.com", "event": "sms:sent"}]
    assert missing_webhooks(hooks, url) == ["sms:sent", "sms:delivered", "sms:failed"]


def test_the_cloud_says_when_it_last_heard_from_the_phone():
    devices = [{"id": "a", "lastSeen": "2026-03-01T15:00:00Z"},
               {"id": "b", "lastSeen": "2026-03-01T16:00:00.000+01:00"}]
    assert last_seen(devices).isoformat() == "2026-03-01T15:00:00+00:00"
    assert last_seen(devices, "b").isoformat() == "2026-03-01T16:00:00+01:00"
    assert last_seen([{"id": "a"}]) is None and last_seen([]) is None
