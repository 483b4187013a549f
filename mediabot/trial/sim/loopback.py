"""Run a WSGI app on 127.0.0.1 on an ephemeral port in a background thread.

Every fake server (OpenAI, Sonarr, Radarr, Twilio) is a WSGI app served through this, so
the real client libraries talk real HTTP to it. ``stop()`` closes the listening socket, so a
client then gets "connection refused" exactly as with a server that is down. ``tls`` (a
certificate and key file) serves HTTPS instead, for a client that takes only https URLs.
"""

import socket
import threading
import time
from collections.abc import Callable
from wsgiref.types import WSGIApplication

from werkzeug.serving import BaseWSGIServer, make_server


class LoopbackServer:
    def __init__(self, app: WSGIApplication, tls: tuple[str, str] | None = None) -> None:
        self.app = app
        self.tls = tls
        self._server: BaseWSGIServer | None = None
        self._thread: threading.Thread | None = None
        self.port: int | None = None

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def start(self, port: int = 0) -> "LoopbackServer":
        """Start serving; ``port`` 0 picks a free one, a former port restarts 'in place'."""
        server = self._server = make_server("127.0.0.1", port, self.app, threaded=True,
                                            ssl_context=self.tls)
        self.port = server.server_port
        self._thread = threading.Thread(target=server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(timeout=5)
            self._server = None

    def __enter__(self) -> "LoopbackServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def free_port(host: str = "127.0.0.1") -> int:
    """A port nobody listens on right now, for a child process to bind."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def wait_for(predicate: Callable[[], object], timeout: float = 10.0, step: float = 0.02) -> bool:
    """Poll ``predicate`` until it is true or ``timeout`` seconds pass; returns which."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return False
