"""A slow-client flood against a real ``mediabot serve``: 150 connections that trickle their
headers and never finish must not shut out ``/healthz`` or Twilio's signed POST."""

import resource
import socket
import subprocess
import sys
import threading
import time

import pytest
import requests

from mediabot.trial.sim.loopback import wait_for

SLOW_CLIENTS = 150


class SlowClients:
    """``count`` loopback connections that each send a request line, then one header byte
    a second, never ending their headers. At most ``max_seconds`` of trickling; every
    socket is closed on exit, whatever happened."""

    def __init__(self, port: int, count: int, max_seconds: float = 60.0):
        self.port, self.count, self.max_seconds = port, count, max_seconds
        self.sockets: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._trickle, daemon=True)

    def __enter__(self) -> "SlowClients":
        try:
            for _ in range(self.count):
                conn = socket.create_connection(("127.0.0.1", self.port), timeout=2)
                conn.sendall(b"POST /sms HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                self.sockets.append(conn)
        except BaseException:
            self._close()
            raise
        self._thread.start()
        return self

    def _trickle(self) -> None:
        deadline = time.monotonic() + self.max_seconds
        while not self._stop.wait(1.0) and time.monotonic() < deadline:
            for conn in list(self.sockets):
                try:
                    conn.send(b"x")
                except OSError:
                    self.sockets.remove(conn)   # the server closed it

    def open_count(self) -> int:
        return len(self.sockets)

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._close()

    def _close(self) -> None:
        for conn in self.sockets:
            conn.close()
        self.sockets = []


def test_150_slow_header_clients_do_not_stop_healthz_or_a_signed_post(serve, fake_llm,
                                                                     fake_twilio):
    daemon = serve()
    fake_llm.enqueue_text("Still here.")
    with SlowClients(daemon.port, SLOW_CLIENTS) as flood:
        time.sleep(1.5)   # the flood is accepted and trickling before anyone else comes
        started = time.monotonic()
        health = requests.get(daemon.url + "/healthz", timeout=5)
        health_seconds = time.monotonic() - started
        posted = daemon.text("are you there?")
        assert wait_for(lambda: fake_twilio.sent, timeout=10)
        held = flood.open_count()
    assert health.status_code == 200 and health_seconds < 2
    assert posted.status_code == 200
    assert fake_twilio.bodies() == ["Still here."]
    assert held == SLOW_CLIENTS, "the slow clients were all still connected, still trickling"


def test_serve_raises_its_open_files_limit_to_fit_the_connection_limit():
    """A 1024-file soft limit (a common default) would make waitress fail to accept long
    before 500 connections; the daemon lifts it, within the hard limit."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 600:
        pytest.skip(f"the hard open-files limit here is {hard}")
    code = ("import resource; from mediabot.daemon import fit_file_limit; "
            "resource.setrlimit(resource.RLIMIT_NOFILE, (256, resource.getrlimit("
            "resource.RLIMIT_NOFILE)[1])); fit_file_limit(500); "
            "print(resource.getrlimit(resource.RLIMIT_NOFILE)[0])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=30, check=True).stdout
    assert int(out) >= 500
