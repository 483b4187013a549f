"""A recording HTTP proxy on loopback: what a client sent to a real server, and what it got.

Put between mediabot and a real model server to see every request and answer as they
crossed the wire (the status, both JSON bodies and how long each took)::

    with RecordingProxy("http://127.0.0.1:8000") as proxy:
        ... point [llm] base_url at proxy.url + "/v1" ...
        [(r.status, r.seconds) for r in proxy.records]
"""

import json
import threading
import time
from dataclasses import dataclass

import requests
from werkzeug.wrappers import Request, Response

from mediabot.trial.sim.loopback import LoopbackServer

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-encoding",
              "content-length", "host"}


@dataclass
class Exchange:
    method: str
    path: str
    status: int
    request: dict | None
    response: dict | str
    seconds: float


class RecordingProxy:
    def __init__(self, upstream: str, timeout: float = 600.0):
        self.upstream = upstream.rstrip("/")
        self.timeout = timeout
        self._records: list[Exchange] = []
        self._lock = threading.Lock()
        self._server = LoopbackServer(self.wsgi_app)

    @property
    def url(self) -> str:
        return self._server.url

    @property
    def records(self) -> list[Exchange]:
        with self._lock:
            return list(self._records)

    def wsgi_app(self, environ, start_response):
        request = Request(environ)
        body = request.get_data()
        started = time.monotonic()
        answer = requests.request(
            request.method, self.upstream + request.full_path.rstrip("?"), data=body,
            headers={k: v for k, v in request.headers if k.lower() not in HOP_BY_HOP},
            timeout=self.timeout)
        exchange = Exchange(request.method, request.path, answer.status_code, _json(body),
                            _json(answer.content) or answer.text,
                            time.monotonic() - started)
        with self._lock:
            self._records.append(exchange)
        response = Response(answer.content, status=answer.status_code,
                            content_type=answer.headers.get("content-type"))
        return response(environ, start_response)

    def __enter__(self) -> "RecordingProxy":
        self._server.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.stop()


def _json(data: bytes):
    try:
        return json.loads(data) if data else None
    except ValueError:
        return None
