"""What the benches share: server child processes started the same way, the fakes in a
process of their own, a mediabot config pointing at them, and signed webhook payloads.

Fairness is the point. mediabot and the bare Flask+waitress app are both started with
``sys.executable`` as children of the bench, with the same thread count, and measured from
outside through ``/proc`` (CPU time, RSS). The fake OpenAI and Twilio live in a third
process, so neither they nor the load generator (``load_client.py``, a fourth) take CPU
from the process being measured or from each other's GIL.
"""

import json
import os
import signal
import statistics
import subprocess
import sys
import time
from http.client import HTTPConnection
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
PUBLIC = "https://sms.bench.test"    # not the example's, which serve refuses
TOKEN = "secret-token"
ACCOUNT = "AC" + "0" * 32
FROM_NUMBER = "+15550001111"
EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response/>'
SERVER_THREADS = 8     # waitress threads, as mediabot's daemon uses
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

BARE_APP = f"""
import sys
from flask import Flask
from waitress import create_server
app = Flask("bare")
@app.post("/sms")
def sms():
    return app.response_class({EMPTY_TWIML!r}, status=200, mimetype="text/xml")
@app.get("/healthz")
def healthz():
    return {{"status": "ok"}}
create_server(app, host={HOST!r}, port=int(sys.argv[1]), threads={SERVER_THREADS},
              ident="bare").run()
"""

FAKES = """
import json, logging, sys
from mediabot.trial.sim.loopback import LoopbackServer
from mediabot.trial.sim.twilio import FakeTwilio
from tests.fakes.openai import FakeOpenAI
logging.getLogger("werkzeug").setLevel(logging.ERROR)
llm = FakeOpenAI(default_text="Dune is downloading, 45% done.").start()
twilio = FakeTwilio(account_sid=sys.argv[1], auth_token=sys.argv[2],
                    owned_numbers=(sys.argv[3],))
server = LoopbackServer(twilio).start()
print(json.dumps({"llm": llm.url, "twilio": server.url}), flush=True)
sys.stdin.read()
print(json.dumps({"llm_requests": len(llm.requests), "twilio_sent": len(twilio.sent)}),
      flush=True)
"""


def env() -> dict:
    return {**os.environ, "MEDIABOT_TWILIO_AUTH_TOKEN": TOKEN, "MEDIABOT_LLM_API_KEY": "sk-test",
            "PYTHONPATH": str(ROOT)}


def free_port() -> int:
    import socket
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


class Fakes:
    """Fake OpenAI + fake Twilio in a child process; ``stop()`` returns their counters."""

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, "-c", FAKES, ACCOUNT, TOKEN, FROM_NUMBER],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=env(), cwd=ROOT)
        urls = json.loads(self.proc.stdout.readline())
        self.llm_url, self.twilio_url = urls["llm"], urls["twilio"]

    def stop(self) -> dict:
        self.proc.stdin.close()
        counts = json.loads(self.proc.stdout.readline() or "{}")
        self.proc.wait(timeout=10)
        return counts


def write_config(tmp: Path, port: int, fakes: Fakes, users: int, *,
                 rate_limit: int = 100_000) -> Path:
    config = tmp / "config.toml"
    entries = "".join(f'[[users]]\nphone = "{user_phone(i)}"\nname = "User {i}"\n'
                      f'role = "{"admin" if i == 0 else "member"}"\n' for i in range(users))
    config.write_text(f"""
[server]
public_url = "{PUBLIC}"
host = "{HOST}"
port = {port}
[database]
path = "{tmp / 'mediabot.db'}"
[twilio]
account_sid = "{ACCOUNT}"
from_number = "{FROM_NUMBER}"
api_base_url = "{fakes.twilio_url}"
timeout_seconds = 5
[llm]
base_url = "{fakes.llm_url}/v1"
model = "gpt-4o-mini"
timeout_seconds = 10
max_retries = 0
[sms]
rate_limit_per_hour = {rate_limit}
{entries}""")
    return config


def user_phone(i: int) -> str:
    return f"+1555124{i:04d}"


def stranger_phone(i: int) -> str:
    """A sender that is not in [[users]]: stored as 'ignored', no model turn."""
    return f"+1555998{i:04d}"


def signed_payloads(prefix: str, count: int, users: int, strangers: bool = False):
    """``count`` (MessageSid, urlencoded body, signature) with unique sids, senders spread
    over the users, signed as Twilio signs them."""
    from twilio.request_validator import RequestValidator

    validator = RequestValidator(TOKEN)
    phone = stranger_phone if strangers else user_phone
    out = []
    for n in range(count):
        sid = f"SM{prefix}{n:0{32 - len(prefix)}d}"
        form = {"MessageSid": sid, "AccountSid": ACCOUNT, "From": phone(n % users),
                "To": FROM_NUMBER, "Body": f"what's downloading? ({n})", "NumMedia": "0",
                "SmsStatus": "received", "ApiVersion": "2010-04-01"}
        out.append((sid, urlencode(form), validator.compute_signature(PUBLIC + "/sms", form)))
    return out


class Child:
    """A server child process on 127.0.0.1:port, measured from outside through /proc."""

    def __init__(self, name: str, argv: list[str], port: int, log: Path):
        self.name, self.argv, self.port, self.log = name, argv, port, log
        self.proc = None
        self.ready_seconds = None

    def start(self, timeout: float = 30.0) -> "Child":
        """Exec, then poll /healthz every 5 ms; ``ready_seconds`` is exec to first 200."""
        started = time.perf_counter()
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.DEVNULL,
                                     stderr=self.log.open("ab"), env=env(), cwd=ROOT)
        while time.perf_counter() - started < timeout:
            if self.proc.poll() is not None:
                break
            if self.healthz() == 200:
                self.ready_seconds = time.perf_counter() - started
                return self
            time.sleep(0.005)
        self.stop()
        raise RuntimeError(f"{self.name} did not start:\n{self.log.read_text()[-3000:]}")

    def healthz(self) -> int | None:
        try:
            connection = HTTPConnection(HOST, self.port, timeout=1)
            connection.request("GET", "/healthz")
            status = connection.getresponse().status
            connection.close()
            return status
        except OSError:
            return None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def cpu_seconds(self) -> float:
        """User + system CPU of the process (all its threads) so far."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
        return 0.0

    def stop(self, grace: float = 40.0) -> int | None:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        return self.proc.returncode


def bare_child(tmp: Path, port: int | None = None) -> Child:
    port = port or free_port()
    return Child("bare", [sys.executable, "-c", BARE_APP, str(port)], port, tmp / "bare.log")


def mediabot_child(tmp: Path, fakes: Fakes, users: int, port: int | None = None) -> Child:
    port = port or free_port()
    config = write_config(tmp, port, fakes, users)
    return Child("mediabot", [sys.executable, "-m", "mediabot.cli", "serve", "--config",
                              str(config)], port, tmp / "mediabot.log")


def median(values: list[float]) -> float | None:
    values = [v for v in values if v is not None]
    return round(statistics.median(values), 3) if values else None


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    if not numerator or not denominator:
        return None
    return round(numerator / denominator, 3)


def loadavg() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
