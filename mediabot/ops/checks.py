"""``mediabot check``: is everything the daemon talks to reachable and set up right?

Each check returns ``Line``s: ``ok``, ``warn`` (works, but the operator should know) or
``FAIL`` with the fix written into the text. Checks never raise for a network or HTTP
problem; each one is bounded by the timeout of its own config section and makes no retries.
Every line of a check that talks to a server passes through ``masking.scrub`` before it is
shown, so an API key, the Twilio auth token or an ``apikey=`` query string can never reach
the terminal. The config and database lines show only our own paths, so they are left alone.

This module runs the checks; they live by what they ask: ``local_checks.py`` (this machine
and the config), ``model_checks.py`` (the model server), ``service_checks.py`` (Sonarr,
Radarr, Twilio), ``gateway_checks.py`` (the household's phone), ``setup_checks.py`` (Seerr
and each member's link to it); ``check_report.py`` holds the ``Line`` and the summary.
"""

import dataclasses
import functools
import logging
import os
import traceback
from collections.abc import Callable

from mediabot.carrier.configured import twilio_in_use
from mediabot.config import Config
from mediabot.ops.gateway_checks import check_gateway
from mediabot.ops.local_checks import (
    check_database,
    check_household,
    check_language,
    check_placeholders,
    check_region,
    check_server,
    check_users,
)
from mediabot.ops.model_checks import check_model
from mediabot.ops.service_checks import check_arr, check_twilio_line, check_whatsapp
from mediabot.seerr.setup_checks import check_seerr
from mediabot.store import users
from mediabot.text.check_report import FAIL, OK, Line, count_of
from mediabot.text.localtime import zone_label
from mediabot.text.masking import scrub

log = logging.getLogger(__name__)


def run_checks(config: Config, *, register_webhooks: bool = False) -> list[Line]:
    """Every check, in the order an operator fixes things: local first, then the network.
    ``register_webhooks``: register the phone's missing webhooks (cloud and private modes)."""
    secrets = _secrets(config)
    local = [Line(OK, "config", f"{_what_was_read(config.source)} valid "
                                f"({count_of(len(config.users), 'user')} in [[users]]; times "
                                f"shown in {_zone_name(config)})")]
    local += check_placeholders(config)
    local += check_region(config)
    local.append(check_language(config))
    local += _safely("database", secrets, lambda: [check_database(config.database.path)])
    local += _safely("users", secrets, lambda: check_users(config))
    remote = _safely("server", secrets, lambda: check_server(config))
    for kind in ("sonarr", "radarr"):
        remote += _safely(kind, secrets, functools.partial(check_arr, kind, config))
    remote += _safely("seerr", secrets, lambda: check_seerr(config))
    remote += _safely("llm", secrets, lambda: check_model(config.llm, _household(config)))
    remote += _safely("phone", secrets,
                      lambda: check_gateway(config, register=register_webhooks))
    if twilio_in_use(config):
        remote += _safely("twilio", secrets, lambda: [check_twilio_line(config)])
        remote += _safely("whatsapp", secrets, lambda: check_whatsapp(config))
    remote.append(check_household(config))
    return local + [dataclasses.replace(line, text=scrub(line.text, secrets))
                    for line in remote]


def _household(config: Config) -> int:
    """How many people text: [[users]], or those stored (``mediabot users add``) if more."""
    return max(len(config.users), users.count_users_in(config.database.path) or 0)


def _safely(subject: str, secrets: list[str], check: Callable[[], list[Line]]) -> list[Line]:
    """Run one check; a bug or a library surprise becomes a FAIL line, not a traceback.

    The traceback goes to the DEBUG log (``mediabot -v check``), with secrets blanked.
    """
    try:
        return check()
    except Exception as exc:  # noqa: BLE001 - one broken check must not hide the others
        log.debug("%s check crashed:\n%s", subject,
                  scrub("".join(traceback.format_exception(exc)), secrets))
        return [Line(FAIL, subject, f"the check itself failed ({type(exc).__name__}); run "
                                    "`mediabot -v check` for details")]


def _what_was_read(source: str) -> str:
    """The config file, or (a container's, with nothing at /config) the variables alone."""
    if os.path.exists(source):
        return f"{source} is"
    return f"no file at {source}; the MEDIABOT_* variables are the config and are"


def _zone_name(config: Config) -> str:
    name = zone_label(config.server.zone)
    return name if config.server.timezone else f"{name}, this machine's zone"


def _secrets(config: Config) -> list[str]:
    found = [config.llm.api_key, config.twilio.auth_token, config.notifications.webhook_secret]
    found += [arr.api_key for arr in (config.sonarr, config.radarr, config.seerr)
              if arr is not None]
    if config.sms_gateway is not None:
        found += [config.sms_gateway.password, config.sms_gateway.signing_key]
    return [secret for secret in found if secret]
