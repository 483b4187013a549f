"""The one error the gateway's calls raise, translated once from what ``requests`` raised or
the phone (or its server) answered, with the one fact the outbox acts on: is it worth another
try?

- **Worth another try** (``retry`` is True): the phone is off, asleep or off the LAN
  (connection refused, no route, DNS), a call timed out, a 5xx (the cloud's 503 "queue
  limits exceeded" included, but not 501), a 429, or an answer that is not the API's JSON (a captive
  portal, a proxy's page). A phone that is off is never a lost text: the text waits.
- **Refused** (``retry`` is False): any other 4xx, with the API's own ``message`` as the
  reason: a number the phone will not send to (400), bad credentials (401/403), an unknown
  id (404), a call the mode does not serve (501: the cloud has no inbox). A 409 on a send
  is not an error at all: the id is already the phone's, so an earlier try got through
  (``GatewayError.already_accepted``).

The reason is the API's words or the exception's class, never the request: no password,
no message body, no URL with credentials reaches a log or a text through here.
"""

from typing import Any

import requests

MAX_REASON = 200


class GatewayError(Exception):
    """``status`` is the HTTP status (0 when no answer came), ``reason`` one plain line."""

    def __init__(self, reason: str, *, retry: bool, status: int = 0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry = retry
        self.status = status

    def __str__(self) -> str:
        kind = "worth another try" if self.retry else "refused"
        where = f"HTTP {self.status}" if self.status else "no answer"
        return f"SMS gateway {kind} ({where}): {self.reason}"

    @property
    def already_accepted(self) -> bool:
        """A 409 on a send: the message id already exists on the phone."""
        return self.status == 409


def from_exception(exc: requests.RequestException) -> GatewayError:
    """No answer: refused connections, timeouts, resets and DNS are all worth another try."""
    if isinstance(exc, requests.Timeout):
        return GatewayError("the phone did not answer in time (is it asleep or off the "
                            "network?)", retry=True)
    if isinstance(exc, requests.ConnectionError):
        return GatewayError("the phone could not be reached (off, or not on this network?)",
                            retry=True)
    return GatewayError(f"the call failed ({type(exc).__name__})", retry=True)


def from_response(response: requests.Response) -> GatewayError:
    """An answer that is not a success, read into its classification."""
    status = response.status_code
    reason = _api_message(response) or response.reason or "no reason given"
    retry = (status >= 500 and status != 501) or status in (408, 429) or status < 400
    return GatewayError(reason[:MAX_REASON], retry=retry, status=status)


def not_json(response: requests.Response) -> GatewayError:
    """A 2xx whose body is not the API's JSON: something else answered at that address."""
    kind = response.headers.get("Content-Type", "no content type").split(";")[0]
    return GatewayError(f"the answer was not the gateway's JSON ({kind}); is the URL the "
                        "app's?", retry=True, status=response.status_code)


def _api_message(response: requests.Response) -> str:
    try:
        body: Any = response.json()
    except ValueError:
        return ""
    message = body.get("message") if isinstance(body, dict) else None
    return " ".join(message.split()) if isinstance(message, str) else ""
