"""Twilio's REST client: building it, checking it, and what its answer to a send means.

``build_twilio_client`` makes a client with a timeout and no retries of its own (delivery
retries explicitly); ``check_twilio`` is ``mediabot check``'s look at the account. What a
send's answer means (``classify``): sent, worth another try (429, 5xx and network trouble),
or refused for good (any other refusal). The ``error`` it carries (``describe_failure``) is
one line with Twilio's status, code and message and, for codes worth explaining
(``TwilioCode``, ``WHATSAPP_ERRORS``), what they mean; the auth token and the message body
never appear in it, so it can be logged and stored.
"""

import logging
from enum import IntEnum
from typing import Any

import requests
from twilio.base.exceptions import TwilioException, TwilioRestException, TwilioServiceException
from twilio.http.http_client import TwilioHttpClient
from twilio.rest import Client

from mediabot.carrier.base import Outcome, OutcomeKind
from mediabot.config import TwilioConfig

log = logging.getLogger(__name__)


class TwilioCode(IntEnum):
    """Twilio's error codes that mediabot acts on or explains."""

    AUTH_FAILED = 20003
    NOT_FOUND = 20404
    INVALID_TO = 21211
    UNSUBSCRIBED = 21610          # Twilio's SMS opt-out: the recipient texted STOP by SMS
    NOT_MOBILE = 21614
    TOO_LONG = 21617
    OUTSIDE_WINDOW = 63016        # WhatsApp's 24-hour window is closed


PERMANENT_HINTS = {
    TwilioCode.UNSUBSCRIBED: "Twilio's SMS opt-out: the recipient texted STOP by SMS",
    TwilioCode.INVALID_TO: "invalid 'To' number",
    TwilioCode.NOT_MOBILE: "'To' is not a mobile number",
    TwilioCode.TOO_LONG: "body too long",
    TwilioCode.AUTH_FAILED: "check [twilio] account_sid and auth_token",
}
# Twilio's WhatsApp errors (https://www.twilio.com/docs/whatsapp/api/error-code-mapping):
# none of them gets better by sending the same message again.
WHATSAPP_ERRORS = {
    TwilioCode.OUTSIDE_WINDOW: "outside WhatsApp's 24-hour window: only an approved template "
                               "may be sent",
    63003: "the number is not on WhatsApp (or cannot be reached there)",
    63007: "[twilio] whatsapp_from is not a WhatsApp sender of this account",
    63018: "WhatsApp's rate limit for this sender was reached",
    63024: "the recipient cannot be messaged on WhatsApp (invalid or blocked)",
    63032: "the person has asked businesses not to send them WhatsApp marketing",
    63021: "WhatsApp refused the content (a template over 1024 characters, or its media)",
    63112: "Meta disabled or restricted this WhatsApp Business Account",
}


class _DebugOnlyLogger(logging.LoggerAdapter):
    """TwilioHttpClient logs each request URL and response header at INFO; demote to DEBUG."""

    def info(self, msg: object, *args: Any, **kwargs: Any) -> None:
        self.debug(msg, *args, **kwargs)


def build_twilio_client(config: TwilioConfig) -> Client:
    """A Twilio REST client with a timeout (the library's default has none) and no
    transport retries (``Sender`` retries explicitly). ``api_base_url`` replaces
    ``https://api.twilio.com``, so messages go to ``{api_base_url}/2010-04-01/Accounts/
    {sid}/Messages.json`` on a gateway or a test server. Nothing is sent here."""
    http = TwilioHttpClient(timeout=config.timeout_seconds,
                            logger=_DebugOnlyLogger(logging.getLogger("twilio.http_client"), {}))
    client = Client(config.account_sid, config.auth_token, http_client=http)
    if config.api_base_url:
        client.api.base_url = config.api_base_url.rstrip("/")
        client.messaging.base_url = client.api.base_url   # messaging services (check)
        client.edge = client.region = None  # TWILIO_EDGE/REGION would rewrite the host
    return client


def check_twilio(client: Client, config: TwilioConfig) -> tuple[bool, str]:
    """For ``mediabot check``: are the credentials accepted and is ``from_number`` ours?

    Returns (ok, one line); the line names the fix when not ok. Never raises for HTTP or
    network errors.
    """
    try:
        account = client.api.v2010.accounts(config.account_sid).fetch()
        if config.from_number:
            owned = client.api.v2010.accounts(config.account_sid).incoming_phone_numbers.list(
                phone_number=config.from_number, limit=1)
            if not owned:
                return False, (f"twilio: {config.from_number} is not a number of this "
                               "account; set [twilio] from_number to one you own")
    except (TwilioException, requests.RequestException) as exc:
        return False, f"twilio: {describe_failure(exc, config.auth_token)}"
    return True, f"twilio: ok ({account.friendly_name or account.sid}, {account.status})"


def classify(exc: Exception, *secrets: str) -> Outcome:
    """Retry on 429, 5xx and network trouble; anything else is permanent. ``secrets`` (the
    auth token, the body) are blanked out of the error."""
    text = describe_failure(exc, *secrets)
    if isinstance(exc, (TwilioRestException, TwilioServiceException)):
        retry = exc.status == 429 or exc.status >= 500
        code = exc.code if isinstance(exc.code, int) else None
        return Outcome(OutcomeKind.RETRY if retry else OutcomeKind.PERMANENT, code=code,
                       error=text)
    if isinstance(exc, requests.RequestException):
        return Outcome(OutcomeKind.RETRY, error=text)
    if not isinstance(exc, TwilioException):
        log.error("outbox: unexpected error from the Twilio client", exc_info=exc)
    return Outcome(OutcomeKind.PERMANENT, error=text)


def describe_failure(exc: Exception, *secrets: str) -> str:
    """A one-line, secret-free description of a Twilio or network error.

    HTTP errors keep Twilio's status, code and message; network errors only their kind
    (their text holds URLs). The auth token and the message body are blanked out wherever
    they appear.
    """
    if isinstance(exc, TwilioRestException):
        hint = PERMANENT_HINTS.get(exc.code) or describe_error(exc.code)
        text = f"HTTP {exc.status}, Twilio {exc.code}: {exc.msg}" + (f" ({hint})" if hint else "")
    elif isinstance(exc, TwilioServiceException):
        text = f"HTTP {exc.status}, Twilio {exc.code}: {exc.title}. {exc.detail or ''}".strip()
    elif isinstance(exc, requests.Timeout):
        text = f"network: timed out ({type(exc).__name__})"
    elif isinstance(exc, requests.RequestException):
        text = f"network: {type(exc).__name__}"
    else:
        text = f"{type(exc).__name__}: {exc}"
    for secret in secrets:
        if secret and len(secret) >= 6:
            text = text.replace(secret, "[hidden]")
    return text


def describe_error(code: int | None) -> str | None:
    """What a WhatsApp error code means for the operator, or None for other codes."""
    return WHATSAPP_ERRORS.get(code) if code is not None else None
