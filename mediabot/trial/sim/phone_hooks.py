"""The simulated phone's webhook queue: signed posts, retried, and as disorderly as the app's.

As ``modules/webhooks/workers/WebhookQueueProcessorWorker.kt`` does: every event for every
registration of it becomes an envelope ``{"id", "webhookId", "event", "deviceId",
"payload"}`` with its own 21-character id, kept in a queue; each attempt is signed afresh
(``X-Signature`` = HMAC-SHA256 of body + ``X-Timestamp``, ``X-Timestamp`` the phone's Unix
seconds) and posted with 5 s connect and read timeouts; anything but a 2xx is tried again
after ``base_delay`` x 2^(n-1) (the app's 5 s; a fraction of a second here), up to
``retry_count`` more times. Each envelope is handed to ``check`` before it is queued (the
tests check it against the app's ``WebHookEvent`` schema).

The app's disorder, scripted: ``duplicate`` posts every delivered event once more with the
same envelope id (a 2xx that came after the socket timeout), ``hold`` keeps events back and
``release`` posts them in the order asked (``reversed``: a retried ``sms:sent`` after its
``sms:delivered``).
"""

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import requests

from mediabot.carrier.sms_gateway.signing import sign


@dataclass(frozen=True)
class Delivery:
    url: str
    event: str
    envelope_id: str
    attempt: int
    status: int                  # 0 when no answer came
    body: bytes
    headers: dict[str, str]


@dataclass
class _Entry:
    url: str
    envelope: dict[str, Any]
    attempt: int = 0
    due: float = 0.0


def signed_headers(key: str, body: bytes, timestamp: int) -> dict[str, str]:
    stamp = str(timestamp)
    return {"Content-Type": "application/json", "User-Agent": "me.capcom.smsgateway/1.68.0",
            "X-Signature": sign(key, body, stamp), "X-Timestamp": stamp}


def gson(envelope: dict[str, Any]) -> bytes:
    """Gson's compact JSON, nulls left out."""
    return json.dumps(envelope, separators=(",", ":"), ensure_ascii=False).encode()


class HookPoster:
    def __init__(self, key: Callable[[], str], now: Callable[[], float],
                 base_delay: float = 0.05, retry_count: int = 15, timeout: float = 5.0,
                 check: Callable[[dict[str, Any]], None] = lambda envelope: None):
        self.key, self.now, self.check = key, now, check
        self.base_delay, self.retry_count, self.timeout = base_delay, retry_count, timeout
        self.duplicate = False
        self.delivered: list[Delivery] = []
        self.given_up: list[dict[str, Any]] = []
        self._queue: list[_Entry] = []
        self._held: list[_Entry] | None = None
        self._busy = 0
        self._wake = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def queue(self, url: str, envelope: dict[str, Any]) -> None:
        self.check(envelope)
        with self._wake:
            entry = _Entry(url, envelope)
            (self._held if self._held is not None else self._queue).append(entry)
            self._wake.notify_all()

    def hold(self) -> None:
        with self._wake:
            self._held = []

    def release(self, order: Callable[[list[Any]], Any] = list) -> None:
        """Queue the held events in ``order`` (``reversed`` for newest first)."""
        with self._wake:
            held, self._held = self._held or [], None
            self._queue.extend(order(held))
            self._wake.notify_all()

    def wait_idle(self, timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        with self._wake:
            while self._queue or self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._wake.wait(min(left, 0.05))
        return True

    def close(self) -> None:
        with self._wake:
            self._stopped = True
            self._wake.notify_all()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while True:
            with self._wake:
                entry = self._next_due()
                if entry is None:
                    if self._stopped:
                        return
                    self._wake.wait(0.02)
                    continue
                self._busy += 1
            try:
                self._attempt(entry)
            finally:
                with self._wake:
                    self._busy -= 1
                    self._wake.notify_all()

    def _next_due(self) -> _Entry | None:
        ready = [e for e in self._queue if e.due <= time.monotonic()]
        if not ready:
            return None
        self._queue.remove(ready[0])
        return ready[0]

    def _attempt(self, entry: _Entry) -> None:
        ok = self._post(entry)
        if ok and self.duplicate:
            self._post(entry)
        if ok:
            return
        if entry.attempt > self.retry_count:
            self.given_up.append(entry.envelope)
            return
        entry.due = time.monotonic() + self.base_delay * 2 ** (entry.attempt - 1)
        with self._wake:
            self._queue.append(entry)

    def _post(self, entry: _Entry) -> bool:
        entry.attempt += 1
        body = gson(entry.envelope)
        headers = signed_headers(self.key(), body, int(self.now()))
        try:
            status = requests.post(entry.url, data=body, headers=headers,
                                   timeout=(self.timeout, self.timeout)).status_code
        except requests.RequestException:
            status = 0
        self.delivered.append(Delivery(entry.url, entry.envelope["event"],
                                       entry.envelope["id"], entry.attempt, status, body,
                                       headers))
        return 200 <= status < 300
