"""A simulated Android phone running "SMS Gateway for Android" (app v1.68.0), on loopback
HTTP, faithful where mediabot depends on it: for ``mediabot demo --serve --phone`` and, behind
the app's OpenAPI file, for the tests (``tests/fakes/sms_gateway.py``).

    phone = SimulatedPhone().start()                    # its Local server: phone.url
    phone.receive("+15551230002", "add Dune")           # an SMS reaches the phone
    requests.get(phone.url + "/inbox", auth=phone.auth) # newest first, as the app lists
    requests.post(phone.url + "/messages", auth=phone.auth, json={...})   # 202, Pending
    phone.process()                                     # Processed -> Sent -> Delivered
    phone.down(); phone.up()                            # off the LAN (refused), back
    phone.delay = 3                                     # asleep: answers late (timeouts)

Local server mode (``prefix=""``) serves the phone's routes with Basic auth (user ``sms``,
an 8-character password, as the app makes on first run): ``/health`` (no auth; 500 when
failing), ``/device``, ``POST /messages`` (409 for an id it has; ``skipPhoneValidation``
only as ``true``/``false``), ``/messages/{id}``, ``/inbox`` (``from``/``to``/``limit``/
``offset``, ``X-Total-Count``), ``/webhooks`` and ``/settings`` (GET and PATCH; the signing
key is write-only). ``prefix="/3rdparty/v1"`` serves the cloud's shape instead (no inbox),
``"/api/3rdparty/v1"`` a private server's; ``tls`` (a certificate and key file) serves it
over HTTPS, as those modes must be. ``auto`` sends what it is given a moment later, as a
phone left alone does. How texts move is ``phone_state``'s; the HTTP edge (and its
``gate``) is ``phone_http``'s.

Webhooks: every event (``sms:received``, ``sms:sent``, ``sms:delivered`` per part,
``sms:failed``) goes to each registration for it, signed with ``signing_key``, retried
with backoff, and disordered on request (``hooks.duplicate``, ``hooks.hold``/``release``):
``phone_hooks``. ``wait_for_webhooks`` waits until the queue is empty.
"""

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from mediabot.trial.sim.loopback import LoopbackServer
from mediabot.trial.sim.phone_hooks import Delivery, HookPoster
from mediabot.trial.sim.phone_http import Gate, GatewayHttp, Recorded
from mediabot.trial.sim.phone_state import DEVICE_ID, PhoneState, nanoid

USERNAME, PASSWORD = "sms", "k3Yq-8Zp"
EASTERN = timezone(timedelta(hours=-5))
Envelope = dict[str, Any]


class SimulatedPhone:
    def __init__(self, *, username: str = USERNAME, password: str = PASSWORD,
                 prefix: str = "", zone: timezone = EASTERN,
                 clock: Callable[[], datetime] | None = None, auto: bool = False,
                 hook_delay: float = 0.05, tls: tuple[str, str] | None = None,
                 gate: Gate | None = None,
                 check_webhook: Callable[[Envelope], None] = lambda envelope: None):
        self.username, self.password, self.prefix = username, password, prefix
        self.clock = clock or (lambda: datetime.now(UTC))
        self.auto = auto
        self._lock = threading.RLock()
        self.state = PhoneState(self.clock, zone, self._emit)
        self.http = GatewayHttp(self.state, username, password, self._lock, prefix, gate)
        self.hooks = HookPoster(lambda: self.state.signing_key,
                                lambda: self.clock().timestamp(), base_delay=hook_delay,
                                check=check_webhook)
        self._server = LoopbackServer(self._app, tls)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> "SimulatedPhone":
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()
        self.hooks.close()

    def down(self) -> None:
        """Off, or off the LAN: connection refused; everything it holds is kept."""
        self._server.stop()

    def up(self) -> None:
        self._server.start(port=self._server.port or 0)

    @property
    def url(self) -> str:
        return self._server.url + self.prefix

    @property
    def auth(self) -> tuple[str, str]:
        return self.username, self.password

    def __enter__(self) -> "SimulatedPhone":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def delay(self) -> float:
        return self.http.delay

    @delay.setter
    def delay(self, seconds: float) -> None:
        self.http.delay = seconds

    # ------------------------------------------------------------------ the phone's life

    def receive(self, sender: str, text: str, *, at: datetime | None = None,
                sim: int = 1) -> bool:
        """An SMS from ``sender`` reaches the phone (``at``: the SMSC's stamp). False when
        the app already had this very SMS."""
        with self._lock:
            return self.state.receive(sender, text, at, sim)

    def process(self) -> list[str]:
        """Android sends what is queued (see ``phone_state``); returns the ids."""
        with self._lock:
            return self.state.process()

    def fail_next(self, reason: str = "Send result: RESULT_ERROR_NO_SERVICE") -> None:
        with self._lock:
            self.state.fail_next(reason)

    def refuse_next(self, count: int, status: int = 503) -> None:
        """The next ``count`` calls get ``status`` from something in front of the app."""
        self.http.fail_next(count, status)

    def set_battery(self, percent: int, *, charging: bool = True) -> None:
        with self._lock:
            self.state.battery, self.state.charging = percent, 3 if charging else 0

    @property
    def signing_key(self) -> str:
        return self.state.signing_key

    def sent(self) -> list[tuple[str, str, str]]:
        """(number, text, state) of every message the phone was given, in order."""
        with self._lock:
            return [(number, m.text, m.recipients[number][0])
                    for m in self.state.outgoing.values() for number in m.numbers]

    def state_of(self, message_id: str) -> str:
        with self._lock:
            return self.state.outgoing[message_id].state

    def calls_to(self, method: str, path: str) -> list[Recorded]:
        return [c for c in self.http.calls if c.method == method and c.path == path]

    # ------------------------------------------------------------------ webhooks

    def register(self, url: str, event: str) -> str:
        """A registration made in the app or the cloud console; returns its id."""
        with self._lock:
            hook_id = nanoid()
            self.state.webhooks[hook_id] = {"id": hook_id, "url": url, "event": event}
            return hook_id

    def wait_for_webhooks(self, timeout: float = 10.0) -> bool:
        return self.hooks.wait_idle(timeout)

    @property
    def deliveries(self) -> list[Delivery]:
        return list(self.hooks.delivered)

    def _emit(self, event: str, payload: dict[str, Any]) -> None:
        for hook in list(self.state.webhooks.values()):
            if hook["event"] == event:
                self.hooks.queue(hook["url"], {
                    "id": nanoid(), "webhookId": hook["id"], "event": event,
                    "deviceId": DEVICE_ID, "payload": payload})

    def _app(self, environ: dict[str, Any], start_response: Any) -> Any:
        answer = self.http(environ, start_response)
        if self.auto and environ.get("REQUEST_METHOD") == "POST" and \
                environ.get("PATH_INFO", "").endswith("/messages"):
            threading.Timer(0.05, self.process).start()
        return answer
