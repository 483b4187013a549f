"""The HTTP calls mediabot makes to the phone (Local) or to the app's server (cloud,
private), with plain ``requests``.

Why not PyPI's ``android-sms-gateway`` client: with ``requests`` it sets no timeout at all
(a phone asleep on Wi-Fi would hang a sender), it picks httpx when both are installed, its
device list calls ``/devices`` where the phone serves ``/device``, its DELETE calls raise
``requests.HTTPError`` instead of its own errors and a 409 comes out as a bare ``APIError``,
it has no inbox ``from`` written as the phone reads it, and its webhook parsers fail without
the deprecated ``phoneNumber``. The six calls below are a few lines each on ``requests``,
which the project already has.

Every call is bounded by ``settings.timeout`` (connect and read) and either returns a value
of this package or raises ``GatewayError`` (``errors.py``: worth another try, or refused);
nothing from ``requests`` escapes. The session is built on first use, never at import or
construction, and may be handed in (tests do, to count calls). Credentials travel as HTTP
Basic; neither they nor a text's body are logged.
"""

import logging
from datetime import datetime
from typing import Any

import requests

from mediabot.carrier.sms_gateway.errors import (
    GatewayError,
    from_exception,
    from_response,
    not_json,
)
from mediabot.carrier.sms_gateway.health import PhoneHealth, read_health
from mediabot.carrier.sms_gateway.inbox import IncomingText, read_inbox
from mediabot.carrier.sms_gateway.outgoing import SendState, read_send_state
from mediabot.carrier.sms_gateway.settings import GatewaySettings, Mode
from mediabot.carrier.sms_gateway.times import phone_time

log = logging.getLogger(__name__)
PAGE_SIZE = 100
MAX_PAGES = 20          # 2,000 texts in one read: far above a household's hour


class GatewayClient:
    def __init__(self, settings: GatewaySettings, session: requests.Session | None = None):
        self.settings = settings
        self._session = session

    @property
    def session(self) -> requests.Session:
        if self._session is None:
            self._session = requests.Session()
            self._session.headers["User-Agent"] = "mediabot"
        return self._session

    def close(self) -> None:
        if self._session is not None:
            self._session.close()

    # ------------------------------------------------------------------ messages

    def send(self, body: dict[str, Any]) -> SendState:
        """Queue one text (``outgoing.send_body``). A 409 means an earlier try with this id
        got through (its answer was lost): the phone's state of it is returned instead.

        ``skipPhoneValidation`` is ``true`` (written so: the phone refuses Python's
        ``True``): the number is already E.164, checked by mediabot, and the phone's own
        check would refuse numbers its libphonenumber data does not know as assigned (a new
        range on an old phone), failing a text mediabot could have sent."""
        try:
            return read_send_state(self._call("POST", "/messages", json=body,
                                              params={"skipPhoneValidation": "true"}))
        except GatewayError as exc:
            if exc.already_accepted:
                return self.message_state(str(body["id"]))
            raise

    def message_state(self, message_id: str) -> SendState:
        return read_send_state(self._call("GET", f"/messages/{message_id}"))

    # ------------------------------------------------------------------ inbox (Local mode)

    def inbox(self, since: datetime) -> list[IncomingText]:
        """Every SMS the phone stored at or after ``since`` (its SMSC stamp), newest first,
        read page by page; a text can appear twice when one arrives between pages (the
        cursor drops the repeat). Refused on the cloud, which does not serve the inbox."""
        found: list[IncomingText] = []
        for page in range(MAX_PAGES):
            params = {"type": "SMS", "limit": PAGE_SIZE, "offset": page * PAGE_SIZE,
                      "from": phone_time(since)}
            rows = self._call("GET", "/inbox", params=params)
            found += _read(read_inbox, rows)
            if not isinstance(rows, list) or len(rows) < PAGE_SIZE:
                break
        return found

    # ------------------------------------------------------------------ the phone itself

    def health(self) -> PhoneHealth:
        """The app's health; its ``fail`` (HTTP 500 from the phone, 503 from the server)
        is an answer here, not an error."""
        response = self._request("GET", "/health", auth=False)
        if response.status_code in (500, 503) and _json(response) is not None:
            return _read(read_health, _json(response))
        return _read(read_health, self._body(response))

    def device_settings(self) -> dict[str, Any]:
        settings = self._call("GET", "/settings")
        if not isinstance(settings, dict):
            raise GatewayError("the settings answer is not an object", retry=True)
        return settings

    def devices(self) -> list[dict[str, Any]]:
        """The phones behind this account (the phone itself in Local mode, at ``/device``)."""
        path = "/device" if self.settings.mode is Mode.LOCAL else "/devices"
        return _list(self._call("GET", path))

    # ------------------------------------------------------------------ webhooks

    def webhooks(self) -> list[dict[str, Any]]:
        return _list(self._call("GET", "/webhooks"))

    def register_webhook(self, url: str, event: str, hook_id: str = "") -> dict[str, Any]:
        """One registration per event; the same ``hook_id`` again replaces it."""
        body: dict[str, Any] = {"url": url, "event": event}
        if hook_id:
            body["id"] = hook_id
        if self.settings.device_id:
            body["deviceId"] = self.settings.device_id
        hook = self._call("POST", "/webhooks", json=body)
        return hook if isinstance(hook, dict) else {}

    def delete_webhook(self, hook_id: str) -> None:
        self._call("DELETE", f"/webhooks/{hook_id}")

    # ------------------------------------------------------------------ the one way out

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        return self._body(self._request(method, path, **kwargs))

    def _request(self, method: str, path: str, *, auth: bool = True,
                 **kwargs: Any) -> requests.Response:
        settings = self.settings
        credentials = (settings.username, settings.password) if auth else None
        try:
            return self.session.request(method, settings.base + path, auth=credentials,
                                        timeout=settings.timeout, **kwargs)
        except requests.RequestException as exc:
            error = from_exception(exc)
            log.info("SMS gateway %s %s: %s", method, path.split("?")[0], error.reason)
            raise error from None

    def _body(self, response: requests.Response) -> Any:
        if not response.ok:
            raise from_response(response)
        if response.status_code == 204 or not response.content:
            return None
        body = _json(response)
        if body is None:
            raise not_json(response)
        return body


def _json(response: requests.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _read(reader: Any, body: Any) -> Any:
    """A reader's ValueError (an answer not of the API's shape) as a GatewayError."""
    try:
        return reader(body)
    except ValueError as exc:
        raise GatewayError(f"the gateway's answer was not understood ({exc})",
                           retry=True) from None


def _list(body: Any) -> list[dict[str, Any]]:
    return [item for item in body if isinstance(item, dict)] if isinstance(body, list) else []
