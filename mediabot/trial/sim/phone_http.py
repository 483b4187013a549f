"""The simulated phone's HTTP edge: the gate, Basic auth, the routes, and the record.

In the order the app's ktor server runs them (``localserver/WebService.kt``): the answer is
held back ``delay`` seconds when the phone is "asleep" (a client's read timeout), a scripted
failure (``fail_next``) answers before the app, then the request meets the ``gate`` (the
tests' gate is the app's OpenAPI file; the demo's lets everything through), then Basic
auth (``/health`` needs none; a wrong or missing password is ktor's empty 401 with its
``WWW-Authenticate`` challenge), then the route. Every call is kept in ``calls``; what the
gate refused, either way, in ``violations``. Errors are the app's ``{"message": ...}``.

``prefix`` is "" for the Local server (the phone's root) or "/3rdparty/v1" for the cloud,
where the device list is ``/devices``, ``GET /inbox`` is 501 and a failing health is 503.
"""

import base64
import json
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from werkzeug.exceptions import NotFound
from werkzeug.routing import Map, Rule
from werkzeug.wrappers import Request, Response

from mediabot.carrier.sms_gateway.times import read_time
from mediabot.trial.sim.phone_state import DEVICE_ID, PhoneState, nanoid

CHALLENGE = 'Basic realm="Access to SMS Gateway", charset=UTF-8'


class Gate:
    """What every request and answer must satisfy; this one lets everything through."""

    def request(self, request: Request, prefix: str) -> int | None:
        """None to serve ``request``; else the status it is refused with (401: unsigned)."""
        return None

    def response(self, request: Request, response: Response, prefix: str) -> str | None:
        """None when ``response`` may go; else what is wrong with it."""
        return None


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    args: dict[str, str]
    body: Any
    status: int


class GatewayHttp:
    def __init__(self, state: PhoneState, username: str, password: str, lock: threading.RLock,
                 prefix: str = "", gate: Gate | None = None):
        self.state, self.username, self.password = state, username, password
        self.lock, self.prefix, self.gate = lock, prefix, gate or Gate()
        self.local = not prefix
        self.calls: list[Recorded] = []
        self.violations: list[str] = []
        self.delay = 0.0
        self._failures: list[int] = []
        devices = "/device" if self.local else "/devices"
        rules = [("/health", "health", "GET"), (devices, "devices", "GET"),
                 ("/messages", "send", "POST"), ("/messages/<message_id>", "state", "GET"),
                 ("/inbox", "inbox", "GET"), ("/webhooks", "hooks", "GET"),
                 ("/webhooks", "register", "POST"), ("/webhooks/<hook_id>", "unhook", "DELETE"),
                 ("/settings", "settings", "GET"), ("/settings", "patch", "PATCH")]
        self._map = Map([Rule(prefix + path, endpoint=name, methods=[method])
                         for path, name, method in rules])

    def fail_next(self, count: int, status: int = 503) -> None:
        with self.lock:
            self._failures.extend([status] * count)

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        request = Request(environ)
        response = self._serve(request)
        self.calls.append(Recorded(request.method, request.path[len(self.prefix):],
                                   dict(request.args), request.get_json(silent=True),
                                   response.status_code))
        return response(environ, start_response)

    def _serve(self, request: Request) -> Response:
        if self.delay:
            time.sleep(self.delay)
        with self.lock:
            failure = self._failures.pop(0) if self._failures else None
        if failure is not None:
            return Response("<html><body>Bad Gateway</body></html>", status=failure,
                            mimetype="text/html")
        rejected = self.gate.request(request, self.prefix)
        if rejected == 401 or (rejected is None and not self._authorised(request)):
            return Response(status=401, headers={"WWW-Authenticate": CHALLENGE})
        if rejected is not None:
            self.violations.append(f"request {request.method} {request.full_path}: "
                                   f"{rejected}")
            return _json(rejected, {"message": "request refused by the gate"})
        with self.lock:
            status, body, headers = self._route(request)
        response = _json(status, body, headers)
        problem = self.gate.response(request, response, self.prefix)
        if problem is not None:
            self.violations.append(f"response {problem}")
            return _json(500, {"message": f"the simulated phone broke its gate: {problem}"})
        return response

    def _authorised(self, request: Request) -> bool:
        if request.path == self.prefix + "/health":
            return True
        header = request.headers.get("Authorization", "")
        expected = base64.b64encode(f"{self.username}:{self.password}".encode()).decode()
        return header == f"Basic {expected}"

    def _route(self, request: Request) -> tuple[int, Any, dict[str, str]]:
        try:
            endpoint, args = self._map.bind_to_environ(request.environ).match()
        except NotFound:
            self.violations.append(f"the simulated phone does not serve {request.method} "
                                   f"{request.path}")
            return 501, {"message": "not served by the simulated phone"}, {}
        handler = getattr(self, f"_{endpoint}")
        result = handler(request, **args)
        return result if len(result) == 3 else (*result, {})

    # ------------------------------------------------------------------ the routes

    def _health(self, _request: Request) -> tuple[int, Any]:
        body = self.state.health()
        failing = 500 if self.local else 503
        return (failing if body["status"] == "fail" else 200), body

    def _devices(self, _request: Request) -> tuple[int, Any]:
        now = self.state.stamp()
        return 200, [{"id": DEVICE_ID if self.local else DEVICE_ID[:21], "name": "Google/pixel",
                      "createdAt": now, "updatedAt": now, "lastSeen": now}]

    def _send(self, request: Request) -> tuple[int, Any]:
        skip = request.args.get("skipPhoneValidation", "false")
        if skip not in ("true", "false"):       # Kotlin's toBooleanStrict()
            return 400, {"message": f"The string doesn't represent a boolean value: {skip}"}
        body = request.get_json(silent=True) or {}
        if body.get("deviceId") not in (None, DEVICE_ID):
            return 400, {"message": "Invalid device ID"}
        if not (body.get("textMessage") or body.get("message") or body.get("dataMessage")):
            return 400, {"message": "Message content is required"}
        message = self.state.enqueue(body, skip == "true")
        if message is None:
            return 409, {"message": f"Message with id {body.get('id')} already exists"}
        return 202, self.state.state_body(message)

    def _state(self, _request: Request, message_id: str) -> tuple[int, Any]:
        message = self.state.outgoing.get(message_id)
        if message is None:
            return 404, {"message": "Message not found"}
        return 200, self.state.state_body(message)

    def _inbox(self, request: Request) -> tuple[int, Any, dict[str, str]]:
        if not self.local:
            return 501, {"message": "not implemented"}, {}
        args = request.args
        try:
            start = read_time(args["from"]) if "from" in args else datetime(1970, 1, 1,
                                                                            tzinfo=UTC)
            end = read_time(args["to"]) if "to" in args else self.state.clock()
        except ValueError:
            return 400, {"message": "Invalid from datetime"}, {}
        if start > end:
            return 400, {"message": "Start date cannot be after end date"}, {}
        total, rows = self.state.inbox_page(start, end, int(args.get("limit", 50)),
                                            int(args.get("offset", 0)))
        return 200, rows, {"X-Total-Count": str(total)}

    def _hooks(self, _request: Request) -> tuple[int, Any]:
        return 200, list(self.state.webhooks.values())

    def _register(self, request: Request) -> tuple[int, Any]:
        body = request.get_json(silent=True) or {}
        url = body.get("url", "")
        if self.local and not url.startswith(("https://", "http://127.0.0.1")):
            return 400, {"message": "url must start with https:// or http://127.0.0.1"}
        hook = {"id": body.get("id") or nanoid(), "url": url, "event": body["event"]}
        self.state.webhooks[hook["id"]] = hook
        return 201, hook

    def _unhook(self, _request: Request, hook_id: str) -> tuple[int, Any]:
        self.state.webhooks.pop(hook_id, None)
        return 204, None

    def _settings(self, _request: Request) -> tuple[int, Any]:
        return 200, json.loads(json.dumps(self.state.settings))

    def _patch(self, request: Request) -> tuple[int, Any]:
        for section, values in (request.get_json(silent=True) or {}).items():
            values = dict(values or {})
            if section == "webhooks" and "signing_key" in values:
                self.state.signing_key = values.pop("signing_key") or nanoid(8)
            self.state.settings.setdefault(section, {}).update(values)
        return self._settings(request)


def _json(status: int, body: Any, headers: dict[str, str] | None = None) -> Response:
    if status == 204 or body is None:
        return Response(status=status, headers=headers)
    return Response(json.dumps(body, separators=(",", ":")), status=status, headers=headers,
                    content_type="application/json; charset=UTF-8")
