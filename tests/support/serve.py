"""`mediabot serve` as a child process, with its config file and database."""

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import requests

from mediabot.trial.sim.loopback import free_port, wait_for
from tests.support.config_files import write_config
from tests.support.household import ADMIN, SERVE_PUBLIC
from tests.support.texting import sign


class Serve:
    """One `mediabot serve` child process with its config file and database."""

    def __init__(self, tmp: Path, llm_url: str, twilio_url: str, extra: str = ""):
        self.port = free_port()
        self.log = tmp / "serve.log"
        self.config = write_config(
            tmp,
            server={"public_url": SERVE_PUBLIC, "host": "127.0.0.1", "port": self.port},
            database={"path": tmp / "mediabot.db"},
            twilio={"account_sid": "AC" + "0" * 32, "from_number": "+15550001111",
                    "api_base_url": twilio_url, "timeout_seconds": 3},
            llm={"base_url": f"{llm_url}/v1", "model": "gpt-4o-mini", "timeout_seconds": 10,
                 "max_retries": 0},
            users=[{"phone": ADMIN, "name": "Alex", "role": "admin"}])
        self.config.write_text(self.config.read_text() + extra)
        self.proc = None
        self.env: dict[str, str] = {}        # extra environment, e.g. MEDIABOT_* overrides
        self.launcher = lambda command: command   # e.g. wrap it in `unshare -m ...`
        self._sids = iter(range(10**6))

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        env = {**os.environ, "MEDIABOT_TWILIO_AUTH_TOKEN": "secret-token",
               "MEDIABOT_LLM_API_KEY": "sk-test", **self.env}
        command = [sys.executable, "-m", "mediabot.cli", "serve", "--config", str(self.config)]
        self.proc = subprocess.Popen(self.launcher(command), stdout=subprocess.DEVNULL,
                                     stderr=self.log.open("ab"), env=env)
        assert wait_for(self._healthy, 20), self.log.read_text()
        return self

    def settled(self) -> bool:
        """Every text handled and every reply sent or given up, as the daemon's own database
        says: from here nothing more happens, so a test asserts at once instead of sleeping."""
        busy = self.rows(
            "SELECT (SELECT count(*) FROM inbox WHERE status IN ('queued', 'processing'))"
            " + (SELECT count(*) FROM outbox WHERE status = 'pending')")[0][0]
        return busy == 0

    def rows(self, sql: str) -> list[tuple]:
        """What ``sql`` finds in the daemon's own database, read beside it."""
        return daemon_rows(self.config.parent / "mediabot.db", sql)

    def _healthy(self):
        try:
            return requests.get(self.url + "/healthz", timeout=1).status_code == 200
        except requests.ConnectionError:
            return False

    def text(self, body, sender=ADMIN, sid=None, signature=None):
        form = {"MessageSid": sid or f"SM{os.getpid():08d}{next(self._sids):024d}",
                "AccountSid": "AC" + "0" * 32, "From": sender, "To": "+15550001111",
                "Body": body, "NumMedia": "0"}
        headers = {"X-Twilio-Signature": sign(SERVE_PUBLIC + "/sms", form)
                   if signature is None else signature}
        return requests.post(self.url + "/sms", data=form, headers=headers, timeout=5)

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=60)
        return self.proc.returncode


def daemon_rows(path: Path, sql: str) -> list[tuple]:
    """What ``sql`` finds in a running daemon's database at ``path`` (its own connection,
    closed at once, so the daemon's writes never wait on the test)."""
    connection = sqlite3.connect(path, timeout=5)
    try:
        return connection.execute(sql).fetchall()
    finally:
        connection.close()
