"""The phone's health and settings read into what ``mediabot check`` tells an operator (pure).

``GET /health`` (no auth on the phone; answered 500 when its status is ``fail``) carries the
app's own checks: ``battery:level`` (percent; warn under 25, fail under 10),
``battery:charging`` (flags: 1 charging, 2 AC, 4 USB), ``connection:status`` (1 when Android
reports an internet connection; the LAN can work without one), ``connection:transport``
(flags: 2 cellular, 4 Wi-Fi, 8 ethernet) and ``messages:failed`` (the last hour's failed
sends). ``read_health`` keeps what the operator acts on; a check the app does not send reads
as None ("not reported"), never as a failure.

``settings_warnings`` reads ``GET /settings`` for what breaks a chat over the phone, each
with its fix: the processing order (LIFO, the app's default, sends a burst of replies newest
first) and a send rate limit low enough to hold replies back. RCS is a setting of the
phone's messaging app, which the gateway cannot see: ``RCS_ADVICE`` is always worth saying.
``missing_webhooks`` names the events a cloud or private-server registration lacks.

Whether a phone is online is the API's to say only on the cloud: ``last_seen`` reads the
device list's ``lastSeen``, which an idle phone refreshes only every 15 minutes or so; the
Local server answering at all is its own proof.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mediabot.carrier.sms_gateway.times import read_time

NEEDED_EVENTS = ("sms:received", "sms:sent", "sms:delivered", "sms:failed")
RCS_ADVICE = ("turn RCS chats off in the phone's Messages app (Settings > RCS chats): a text "
              "sent as RCS never reaches the gateway")
LOW_BATTERY = 25
CHARGING_FLAG = 1


@dataclass(frozen=True)
class PhoneHealth:
    status: str                  # "pass", "warn" or "fail", the app's own verdict
    version: str
    battery_percent: int | None
    charging: bool | None
    online: bool | None          # an internet connection, as Android reports it
    failed_last_hour: int | None

    def problems(self) -> list[str]:
        """What the operator should fix, in plain lines (empty when all is well)."""
        found = []
        if self.battery_percent is not None and self.battery_percent < LOW_BATTERY:
            found.append(f"the phone's battery is at {self.battery_percent}%: keep it on a "
                         "charger")
        elif self.charging is False:
            found.append("the phone is not charging: keep it on a charger")
        if self.online is False:
            found.append("the phone reports no internet connection (cloud mode and "
                         "webhooks need one)")
        if self.failed_last_hour:
            found.append(f"{self.failed_last_hour} text(s) failed to send in the last hour "
                         "(SIM credit, signal?)")
        return found


def read_health(body: Any) -> PhoneHealth:
    """``/health``'s JSON; ValueError when it is not the app's health answer."""
    if not isinstance(body, dict) or body.get("status") not in ("pass", "warn", "fail"):
        raise ValueError("not the gateway's health answer")
    found = body.get("checks")
    checks: dict[str, Any] = found if isinstance(found, dict) else {}

    def observed(name: str) -> int | None:
        check = checks.get(name)
        value = check.get("observedValue") if isinstance(check, dict) else None
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    charging, online = observed("battery:charging"), observed("connection:status")
    return PhoneHealth(body["status"], str(body.get("version") or "?"),
                       observed("battery:level"),
                       None if charging is None else bool(charging & CHARGING_FLAG),
                       None if online is None else online == 1,
                       observed("messages:failed"))


def settings_warnings(settings: Any) -> list[str]:
    """What in the phone's settings breaks a conversation, each line with its fix."""
    messages = settings.get("messages") if isinstance(settings, dict) else None
    messages = messages if isinstance(messages, dict) else {}
    found = []
    if messages.get("processing_order", "LIFO") != "FIFO":
        found.append("the app sends its queue newest first (LIFO): set Settings > Messages > "
                     "Processing order to FIFO, so replies arrive in order")
    period, value = messages.get("limit_period"), messages.get("limit_value")
    if period == "PerMinute" and isinstance(value, int) and value < 5:
        found.append(f"the app sends at most {value} text(s) a minute: raise Settings > "
                     "Messages > Limits, or replies will wait")
    return found


def missing_webhooks(registered: list[dict[str, Any]], url: str) -> list[str]:
    """The events in NEEDED_EVENTS with no registration posting to ``url``."""
    have = {hook.get("event") for hook in registered if hook.get("url") == url}
    return [event for event in NEEDED_EVENTS if event not in have]


def last_seen(devices: list[dict[str, Any]], device_id: str = "") -> datetime | None:
    """When the cloud last heard from the phone (``device_id``, else the first listed);
    None when it does not say."""
    chosen = [d for d in devices if not device_id or d.get("id") == device_id]
    try:
        return read_time(chosen[0].get("lastSeen")) if chosen else None
    except ValueError:
        return None
