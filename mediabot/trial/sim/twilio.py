"""A fake Twilio REST API (the 2010-04-01 endpoints mediabot uses), served over loopback.

Point the real twilio SDK at it (``client.api.base_url = server.url``) and it answers like
Twilio: HTTP Basic auth with the account sid and auth token (401 + error 20003 otherwise),
201 with a message resource for ``POST .../Messages.json`` (repeatable ``MediaUrl`` fields
make it an MMS: ``num_media``, and ``media_urls`` in ``sent``), Twilio's JSON error bodies, and
the paged list shape for incoming phone numbers, and the messaging services given as
``messaging_services`` (``GET /v1/Services/MG...``, Twilio's messaging.twilio.com API).
``sent`` records every accepted message; ``fail_next`` and ``set_delay`` script failures
and slowness.

Like Twilio, a message sent with a ``StatusCallback`` URL gets its delivery reports posted
there, signed with the auth token (X-Twilio-Signature over that URL): "sent" then
"delivered", or what ``report_next`` scripts ("undelivered" after "sent", or "failed",
with an ErrorCode such as 30003 unreachable, 30005 unknown number, 30006 landline).
Reports go only to loopback hosts, or through ``route_callbacks`` (a public URL that a
reverse proxy would forward to a local daemon); ``callbacks`` records each post.

WhatsApp as Twilio serves it: ``To``/``From`` as "whatsapp:+1...", a free-form message only
within 24 hours of the person's last message (``open_window`` records one; otherwise 63016),
a template send (``ContentSid`` HX..., ``ContentVariables`` JSON, no Body) allowed any time,
one media item per message, and 21910 for an SMS sender paired with a WhatsApp recipient.

Twilio's own SMS opt-out: an SMS that says STOP (or another of Twilio's opt-out words) puts
the number on the account's list before the webhook sees it, and every SMS to it is then
refused with 21610 until the number texts START (or YES, UNSTOP) by SMS. WhatsApp keeps no
such list. Tests tell the fake what the person texted by SMS with ``received_sms``.
"""

import base64
import json
import re
import secrets
import threading
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from email.utils import format_datetime
from urllib.parse import urlsplit
from wsgiref.types import StartResponse, WSGIEnvironment

import requests
from twilio.request_validator import RequestValidator
from werkzeug.datastructures import MultiDict
from werkzeug.wrappers import Request, Response

from mediabot.text.sms import count_segments

Form = MultiDict[str, str]

API = "/2010-04-01"
ERROR_DOCS = "https://www.twilio.com/docs/errors/{code}"
ERROR_MESSAGES = {
    20003: "Authenticate",
    20404: "The requested resource was not found",
    20429: "Too Many Requests",
    21211: "The 'To' number is not a valid phone number.",
    21602: "Message body is required.",
    21604: "A 'To' phone number is required.",
    21606: "The 'From' phone number provided is not a valid message-capable Twilio phone "
           "number for this destination/account.",
    21610: "Attempt to send to unsubscribed recipient",
    21614: "'To' number is not a valid mobile number",
    21617: "The concatenated message body exceeds the 1600 character limit.",
    21620: "Invalid media URL(s)",
    21623: "Number of media files exceeds allowed limit",
    21910: "Invalid From and To pair. From and To should be of the same channel",
    63016: "Failed to send freeform message because you are outside the allowed window. "
           "If you are using WhatsApp, please use a Message Template.",
    21656: "The ContentVariables Parameter is invalid",
    20422: "Invalid Parameter",
    20500: "An internal server error has occurred",
}
# Twilio's default opt-out and opt-in words for SMS (a whole message, any case).
SMS_OPT_OUT = frozenset({"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "REVOKE",
                         "OPTOUT"})
SMS_OPT_IN = frozenset({"START", "YES", "UNSTOP"})
UNSUBSCRIBED = 21610


class FakeTwilio:
    """WSGI app standing in for api.twilio.com for one account."""

    def __init__(self, account_sid: str = "AC" + "0" * 32, auth_token: str = "secret-token",
                 owned_numbers: tuple[str, ...] = ("+15550001111",),
                 friendly_name: str = "mediabot test",
                 messaging_services: dict[str, str] | None = None) -> None:
        self.account_sid = account_sid
        self.auth_token = auth_token
        self.owned_numbers = list(owned_numbers)
        self.friendly_name = friendly_name
        self.messaging_services = dict(messaging_services or {})   # MG... -> friendly name
        self.sent: list[dict] = []
        self.requests: list[dict] = []
        self._failures: list[tuple[int, int | None, str | None]] = []
        self._delay = 0.0
        self.callbacks: list[dict] = []
        self._reports: list[tuple[str, int | None]] = []
        self._routes: dict[str, str] = {}
        self._lock = threading.Lock()
        self._epoch = 0     # bumped by reset(): a request that began before it is not recorded
        self.windows: dict[str, float] = {}   # E.164 -> when they last wrote on WhatsApp
        self.sms_opted_out: set[str] = set()   # E.164 numbers Twilio refuses SMS to (21610)

    def open_window(self, phone: str, at: float | None = None) -> None:
        """``phone`` wrote to the WhatsApp sender at ``at`` (now by default): free-form
        messages to them are allowed for 24 hours from then."""
        self.windows[phone] = time.time() if at is None else at

    def received_sms(self, phone: str, body: str) -> None:
        """``phone`` texted ``body`` to the SMS number: Twilio reads its opt-out words before
        the webhook does, so an SMS STOP refuses every later SMS to ``phone`` (21610) until
        an SMS START."""
        word = body.strip().upper()
        with self._lock:
            if word in SMS_OPT_OUT:
                self.sms_opted_out.add(phone)
            elif word in SMS_OPT_IN:
                self.sms_opted_out.discard(phone)

    def whatsapp(self) -> list[dict]:
        """The messages sent on WhatsApp."""
        with self._lock:
            return [m for m in self.sent if m["to"].startswith("whatsapp:")]

    def reset(self) -> None:
        """Forget what was sent and any scripted failure or delay (between tests). A send
        still in flight from before (a slow answer a client gave up on) is not recorded
        after the reset, so it cannot land in the next test's record."""
        with self._lock:
            self._epoch += 1
            self.sent.clear()
            self.requests.clear()
            self._failures.clear()
            self._delay = 0.0
            self.callbacks.clear()
            self._reports.clear()
            self._routes.clear()
            self.windows.clear()
            self.sms_opted_out.clear()

    def fail_next(self, status: int, code: int | None = None, message: str | None = None,
                  times: int = 1) -> None:
        """Answer the next ``times`` message sends with HTTP ``status`` and Twilio ``code``."""
        with self._lock:
            self._failures.extend([(status, code, message)] * times)

    def report_next(self, state: str, error_code: int | None = None, times: int = 1) -> None:
        """End the next ``times`` accepted messages' reports in ``state`` ("undelivered",
        "failed") with Twilio ``error_code``, instead of "delivered"."""
        with self._lock:
            self._reports.extend([(state, error_code)] * times)

    def route_callbacks(self, public_url: str, local_url: str) -> None:
        """Post reports for URLs under ``public_url`` to ``local_url`` instead (still signed
        for the public URL, as Twilio signs what it was given)."""
        self._routes[public_url.rstrip("/")] = local_url.rstrip("/")

    def set_delay(self, seconds: float) -> None:
        """Wait this long before answering any request (to exercise client timeouts)."""
        self._delay = seconds

    def bodies(self) -> list[str]:
        with self._lock:
            return [m["body"] for m in self.sent]

    def __call__(self, environ: WSGIEnvironment,
                 start_response: StartResponse) -> Iterable[bytes]:
        request = Request(environ)
        with self._lock:
            request.environ["fake_twilio.epoch"] = self._epoch
            self.requests.append({"method": request.method, "path": request.path,
                                  "form": dict(request.form), "args": dict(request.args)})
        if self._delay:
            time.sleep(self._delay)
        response = self._dispatch(request)
        return response(environ, start_response)

    def _dispatch(self, request: Request) -> Response:
        if not self._authorised(request):
            return _error(401, 20003)
        account = f"{API}/Accounts/{self.account_sid}"
        path = request.path
        if path == f"{account}/Messages.json" and request.method == "POST":
            return self._create_message(request)
        if path == f"{account}.json" and request.method == "GET":
            return _json(200, self._account())
        if path == f"{account}/IncomingPhoneNumbers.json" and request.method == "GET":
            return _json(200, self._incoming_numbers(request))
        service = path.removeprefix("/v1/Services/")
        if service in self.messaging_services and request.method == "GET":
            return _json(200, self._service(service))
        return _error(404, 20404)

    def _authorised(self, request: Request) -> bool:
        header = request.headers.get("Authorization", "")
        if not header.startswith("Basic "):
            return False
        try:
            user, _, password = base64.b64decode(header[6:]).decode().partition(":")
        except ValueError:
            return False
        return user == self.account_sid and password == self.auth_token

    def _create_message(self, request: Request) -> Response:
        form = request.form
        with self._lock:
            failure = self._failures.pop(0) if self._failures else None
        if failure:
            status, code, text = failure
            return _error(status, code, text)
        problem = (_validate_message(form) or self._whatsapp_rules(form)
                   or self._sms_opt_out(form))
        if problem:
            return _error(400, problem)
        message = self._message(form)
        with self._lock:
            if request.environ["fake_twilio.epoch"] != self._epoch:
                return _json(201, message)
            self.sent.append({**message, "media_urls": form.getlist("MediaUrl"),
                              "content_sid": form.get("ContentSid"),
                              "content_variables": form.get("ContentVariables")})
            final = self._reports.pop(0) if self._reports else ("delivered", None)
        if form.get("StatusCallback"):
            threading.Thread(target=self._report, args=(form["StatusCallback"], message, final),
                             daemon=True).start()
        return _json(201, message)

    def _report(self, url: str, message: dict, final: tuple[str, int | None]) -> None:
        """Post the message's delivery reports, a moment apart, as Twilio does."""
        state, code = final
        for step in (["sent"] if state != "failed" else []) + [state]:
            time.sleep(0.05)
            form = {"MessageSid": message["sid"], "SmsSid": message["sid"],
                    "MessageStatus": step, "SmsStatus": step, "AccountSid": self.account_sid,
                    "From": message["from"] or "", "To": message["to"], "ApiVersion": "2010-04-01"}
            if step == state and code is not None:
                form["ErrorCode"] = str(code)
            self._post_report(url, form)

    def _post_report(self, url: str, form: dict) -> None:
        target = self._target(url)
        record: dict = {"url": url, "form": form, "status": None}
        if target is not None:
            signature = RequestValidator(self.auth_token).compute_signature(url, form)
            try:
                record["status"] = requests.post(target, data=form, timeout=5, headers={
                    "X-Twilio-Signature": signature}).status_code
            except requests.RequestException as exc:
                record["status"] = type(exc).__name__
        with self._lock:
            self.callbacks.append(record)

    def _target(self, url: str) -> str | None:
        """Where a report for ``url`` is posted: its route, a loopback URL itself, or None."""
        for public, local in self._routes.items():
            if url == public or url.startswith(public + "/"):
                return local + url[len(public):]
        host = urlsplit(url).hostname
        return url if host in ("127.0.0.1", "localhost", "::1") else None

    def _whatsapp_rules(self, form: Form) -> int | None:
        """Twilio's WhatsApp checks: same channel both ends, one media item, the 24-hour
        window for anything but a template."""
        to_whatsapp = form["To"].startswith("whatsapp:")
        if form.get("From") and form["From"].startswith("whatsapp:") != to_whatsapp:
            return 21910
        if form.get("ContentSid"):
            if not re.fullmatch(r"HX[0-9a-fA-F]{32}", form["ContentSid"]):
                return 20422
            try:
                json.loads(form.get("ContentVariables") or "{}")
            except ValueError:
                return 21656
            return None
        if not to_whatsapp:
            return None
        if len(form.getlist("MediaUrl")) > 1:
            return 21623
        opened = self.windows.get(form["To"].removeprefix("whatsapp:"))
        return None if opened is not None and time.time() - opened < 86400 else 63016

    def _sms_opt_out(self, form: Form) -> int | None:
        """21610 for an SMS to a number on Twilio's opt-out list."""
        to = form["To"]
        with self._lock:
            blocked = not to.startswith("whatsapp:") and to in self.sms_opted_out
        return UNSUBSCRIBED if blocked else None

    def mms(self) -> list[dict]:
        """The messages sent with media."""
        with self._lock:
            return [m for m in self.sent if m["media_urls"]]

    def _message(self, form: Form) -> dict:
        media = form.getlist("MediaUrl")
        sid = ("MM" if media else "SM") + secrets.token_hex(16)
        now = format_datetime(datetime.now(UTC))
        return {
            "account_sid": self.account_sid, "api_version": "2010-04-01",
            "body": form.get("Body", ""), "date_created": now, "date_sent": None,
            "date_updated": now,
            "direction": "outbound-api", "error_code": None, "error_message": None,
            "from": form.get("From") or None,
            "messaging_service_sid": form.get("MessagingServiceSid") or None,
            "num_media": str(len(media)),
            "num_segments": "1" if media or form["To"].startswith("whatsapp:")
            else str(count_segments(form.get("Body", ""))),
            "price": None, "price_unit": "USD", "sid": sid, "status": "queued",
            "subresource_uris": {"media": f"{API}/Accounts/{self.account_sid}/Messages/"
                                          f"{sid}/Media.json"},
            "to": form["To"], "uri": f"{API}/Accounts/{self.account_sid}/Messages/{sid}.json",
        }

    def _account(self) -> dict:
        now = format_datetime(datetime.now(UTC))
        return {"sid": self.account_sid, "owner_account_sid": self.account_sid,
                "friendly_name": self.friendly_name, "status": "active", "type": "Full",
                "auth_token": self.auth_token, "date_created": now, "date_updated": now,
                "uri": f"{API}/Accounts/{self.account_sid}.json", "subresource_uris": {}}

    def _service(self, sid: str) -> dict:
        """A messaging service (messaging.twilio.com/v1/Services/MG...), as Twilio shows it."""
        now = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        return {"sid": sid, "account_sid": self.account_sid, "date_created": now,
                "date_updated": now, "friendly_name": self.messaging_services[sid],
                "url": f"https://messaging.twilio.com/v1/Services/{sid}", "links": {}}

    def _incoming_numbers(self, request: Request) -> dict:
        wanted = request.args.get("PhoneNumber")
        numbers = [n for n in self.owned_numbers if wanted is None or n == wanted]
        size = int(request.args.get("PageSize", 50))
        uri = f"{API}/Accounts/{self.account_sid}/IncomingPhoneNumbers.json"
        return {
            "incoming_phone_numbers": [self._number(n) for n in numbers[:size]],
            "page": 0, "page_size": size, "start": 0, "end": max(len(numbers[:size]) - 1, 0),
            "first_page_uri": f"{uri}?PageSize={size}&Page=0", "next_page_uri": None,
            "previous_page_uri": None, "uri": f"{uri}?PageSize={size}&Page=0",
        }

    def _number(self, number: str) -> dict:
        sid = "PN" + secrets.token_hex(16)
        return {"sid": sid, "account_sid": self.account_sid, "phone_number": number,
                "friendly_name": number, "capabilities": {"sms": True, "voice": True,
                                                          "mms": True},
                "status": "in-use", "sms_url": "", "sms_method": "POST",
                "uri": f"{API}/Accounts/{self.account_sid}/IncomingPhoneNumbers/{sid}.json"}


def _validate_message(form: Form) -> int | None:
    """Twilio's own checks on a send, in its order; returns an error code or None."""
    if not form.get("To"):
        return 21604
    if not re.fullmatch(r"(whatsapp:)?\+[1-9]\d{6,14}", form["To"]):
        return 21211
    if not form.get("From") and not form.get("MessagingServiceSid"):
        return 21606
    media = form.getlist("MediaUrl")
    if not form.get("Body") and not media and not form.get("ContentSid"):
        return 21602
    if len(media) > 10:
        return 21623
    if any(not re.match(r"https?://", url, re.IGNORECASE) for url in media):
        return 21620
    if len(form.get("Body", "")) > 1600:
        return 21617
    return None


def _error(status: int, code: int | None, message: str | None = None) -> Response:
    code = code if code is not None else (20429 if status == 429 else 20500)
    body = {"code": code, "message": message or ERROR_MESSAGES.get(code, "Error"),
            "more_info": ERROR_DOCS.format(code=code), "status": status}
    if code == 20003:
        body["detail"] = "Your AccountSid or AuthToken was incorrect."
    return _json(status, body)


def _json(status: int, body: dict) -> Response:
    return Response(json.dumps(body), status=status, content_type="application/json")
