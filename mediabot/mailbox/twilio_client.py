"""What Twilio's answer to a send means: sent, worth another try, or refused for good.

``classify`` reads an exception from the twilio client (or the network under it) into an
``Outcome``: 429, 5xx and network trouble are retried, any other refusal is permanent. The
``error`` it carries (``describe_failure``) is one line with Twilio's status, code and
message and, for codes worth explaining, what they mean; the auth token and the message
body never appear in it, so it can be logged and stored.
"""

import logging
from dataclasses import dataclass

import requests
from twilio.base.exceptions import TwilioException, TwilioRestException, TwilioServiceException

from mediabot.mailbox import channels

log = logging.getLogger(__name__)

UNSUBSCRIBED = 21610
AUTH_FAILED = 20003
PERMANENT_HINTS = {
    UNSUBSCRIBED: "Twilio's SMS opt-out: the recipient texted STOP by SMS",
    21211: "invalid 'To' number",
    21614: "'To' is not a mobile number",
    21617: "body too long",
    AUTH_FAILED: "check [twilio] account_sid and auth_token",
}


@dataclass(frozen=True)
class Outcome:
    kind: str  # "sent", "retry" or "permanent"
    sid: str | None = None
    code: int | None = None
    error: str | None = None
    state: str | None = None   # Twilio's message status in its 201 answer


def classify(exc: Exception, *secrets: str) -> Outcome:
    """Retry on 429, 5xx and network trouble; anything else is permanent. ``secrets`` (the
    auth token, the body) are blanked out of the error."""
    text = describe_failure(exc, *secrets)
    if isinstance(exc, (TwilioRestException, TwilioServiceException)):
        retry = exc.status == 429 or exc.status >= 500
        code = exc.code if isinstance(exc.code, int) else None
        return Outcome("retry" if retry else "permanent", code=code, error=text)
    if isinstance(exc, requests.RequestException):
        return Outcome("retry", error=text)
    if not isinstance(exc, TwilioException):
        log.error("outbox: unexpected error from the Twilio client", exc_info=exc)
    return Outcome("permanent", error=text)


def describe_failure(exc: Exception, *secrets: str) -> str:
    """A one-line, secret-free description of a Twilio or network error.

    HTTP errors keep Twilio's status, code and message; network errors only their kind
    (their text holds URLs). The auth token and the message body are blanked out wherever
    they appear.
    """
    if isinstance(exc, TwilioRestException):
        hint = PERMANENT_HINTS.get(exc.code) or channels.describe_error(exc.code)
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
