"""The lines of ``mediabot check`` about the household's phone (``[sms_gateway]``): which
mode it is reached in, whether it answers and accepts the credentials, its battery and
connection where the API tells them, and what in its set-up breaks a conversation, each
with the fix.

- **Local** (the phone's own server on the LAN): ``/health`` is the phone's, with its
  battery, charging and connection; its answering at all says it is on and reachable.
- **Cloud and private server**: ``/health`` is the server's; whether the phone is online is
  the device list's ``lastSeen`` (an idle phone checks in about every 15 minutes). The
  phone posts its webhooks to ``/sms/gateway`` only when they are registered for the
  account: a missing one is a FAIL (texts would never arrive), and
  ``mediabot check --register-webhooks`` registers what is missing, under ids of its own so
  that running it again (after ``public_url`` changed, say) replaces them instead of adding
  more.
- Always: the app's processing order (LIFO, its default, sends a burst newest first) and a
  low send limit, read from its settings; and RCS, which the gateway cannot see, so it is a
  warning on every run until mediabot can tell.

Every call is bounded by ``[sms_gateway] timeout_seconds`` and a failure is a line, never
a traceback; the password and signing key are blanked by ``checks.py`` like every secret.
"""

import datetime as dt

from mediabot.carrier.configured import GATEWAY_PATH, gateway_settings
from mediabot.carrier.sms_gateway.client import GatewayClient
from mediabot.carrier.sms_gateway.errors import GatewayError
from mediabot.carrier.sms_gateway.health import (
    NEEDED_EVENTS,
    RCS_ADVICE,
    PhoneHealth,
    last_seen,
    missing_webhooks,
    settings_warnings,
)
from mediabot.carrier.sms_gateway.settings import GatewaySettings, Mode
from mediabot.config import Config
from mediabot.text.check_report import FAIL, OK, WARN, Line

SUBJECT = "phone"
SEEN_RECENTLY = dt.timedelta(minutes=30)   # twice the idle phone's check-in interval


def check_gateway(config: Config, *, register: bool = False,
                  now: dt.datetime | None = None) -> list[Line]:
    """The phone's lines, or none without ``[sms_gateway]``; ``register`` registers the
    webhooks the cloud and private modes lack."""
    settings = gateway_settings(config)
    if settings is None:
        return []
    client = GatewayClient(settings)
    try:
        return _lines(client, settings, _hook_url(config), register,
                      now or dt.datetime.now(dt.UTC))
    finally:
        client.close()


def hook_url(public_url: str) -> str:
    """Where the phone posts its webhooks: ``public_url`` + ``/sms/gateway``."""
    public = public_url.rstrip("/").removesuffix("/sms")
    return public + GATEWAY_PATH


def _hook_url(config: Config) -> str:
    return hook_url(config.server.public_url) if config.server.public_url else ""


def _lines(client: GatewayClient, settings: GatewaySettings, url: str, register: bool,
           now: dt.datetime) -> list[Line]:
    lines = [Line(OK, SUBJECT, _mode(settings, url))]
    try:
        health = client.health()
    except GatewayError as exc:
        return [*lines, Line(FAIL, SUBJECT, _unreachable(settings, exc))]
    lines += _health_lines(health, settings)
    try:
        phone_settings = client.device_settings()
    except GatewayError as exc:
        return [*lines, Line(FAIL, SUBJECT, _refused(exc))]
    lines += [Line(WARN, SUBJECT, warning) for warning in settings_warnings(phone_settings)]
    if settings.mode is not Mode.LOCAL:
        lines += _cloud_lines(client, settings, url, register, now)
    return [*lines, Line(WARN, SUBJECT, "mediabot cannot see RCS: " + RCS_ADVICE)]


def _mode(settings: GatewaySettings, url: str) -> str:
    if settings.mode is Mode.LOCAL:
        return (f"Local server mode at {settings.base}: mediabot reads the phone's inbox every "
                f"{settings.poll_seconds:g} s and sends through it; nothing calls in")
    where = "the app's cloud" if settings.mode is Mode.CLOUD else "a private server"
    return (f"{settings.mode} mode, through {where} at {settings.base}: the phone posts its "
            f"texts and delivery reports to {url}")


def _unreachable(settings: GatewaySettings, exc: GatewayError) -> str:
    if settings.mode is Mode.LOCAL:
        return (f"{exc.reason}, at {settings.base}: is the app's Local server on (Home > "
                "Local server), the phone on this network, and [sms_gateway] url its address?")
    return f"{exc.reason}, at {settings.base}: check [sms_gateway] url and the network"


def _refused(exc: GatewayError) -> str:
    if exc.status in (401, 403):
        return ("the username or password was refused: set [sms_gateway] username and "
                "password to what the app shows (Home > Local server, or Cloud server)")
    return f"its settings could not be read: {exc}"


def _health_lines(health: PhoneHealth, settings: GatewaySettings) -> list[Line]:
    told = [f"status {health.status}"]
    if health.battery_percent is not None:
        charging = {True: ", charging", False: ", not charging", None: ""}[health.charging]
        told.append(f"battery {health.battery_percent}%{charging}")
    if health.online is not None:
        told.append("online" if health.online else "no internet connection")
    whose = "the phone" if settings.mode is Mode.LOCAL else "the server"
    status = FAIL if health.status == "fail" else OK
    lines = [Line(status, SUBJECT, f"{whose} answers: app {health.version}, "
                                   + ", ".join(told))]
    return lines + [Line(WARN, SUBJECT, problem) for problem in health.problems()]


def _cloud_lines(client: GatewayClient, settings: GatewaySettings, url: str, register: bool,
                 now: dt.datetime) -> list[Line]:
    try:
        seen = last_seen(client.devices(), settings.device_id)
        hooks = client.webhooks()
    except GatewayError as exc:
        return [Line(FAIL, SUBJECT, f"the account's phones and webhooks could not be read: "
                                    f"{exc}")]
    lines = [_seen_line(seen, settings, now)]
    missing = missing_webhooks(hooks, url)
    if not missing:
        return [*lines, Line(OK, SUBJECT, f"webhooks registered: {', '.join(NEEDED_EVENTS)} "
                                          f"to {url}")]
    if not register:
        return [*lines, Line(FAIL, SUBJECT,
                             f"no webhook registered for {', '.join(missing)} to {url}, so "
                             "those texts and reports never reach mediabot: run `mediabot "
                             "check --register-webhooks`")]
    return [*lines, _register(client, missing, url)]


def _seen_line(seen: dt.datetime | None, settings: GatewaySettings, now: dt.datetime) -> Line:
    if seen is None:
        which = f"phone {settings.device_id}" if settings.device_id else "phone"
        return Line(FAIL, SUBJECT, f"the account has no {which}: sign the app in to the "
                                   "cloud server (Home > Cloud server) with these credentials")
    ago = max(now - seen, dt.timedelta(0))
    minutes = int(ago.total_seconds() // 60)
    if ago > SEEN_RECENTLY:
        return Line(WARN, SUBJECT, f"the server last heard from the phone {minutes} minutes "
                                   "ago: is it on, charged and online?")
    return Line(OK, SUBJECT, f"the server heard from the phone {minutes} minute(s) ago")


def _register(client: GatewayClient, missing: list[str], url: str) -> Line:
    for event in missing:
        try:
            client.register_webhook(url, event, hook_id=registration_id(event))
        except GatewayError as exc:
            return Line(FAIL, SUBJECT, f"registering the {event} webhook failed: {exc}")
    return Line(OK, SUBJECT, f"registered the webhooks for {', '.join(missing)} to {url} "
                             "(the phone shows a notice for each)")


def registration_id(event: str) -> str:
    """mediabot's own id for its registration of ``event``: the same on every run."""
    return "mediabot-" + event.replace(":", "-")
