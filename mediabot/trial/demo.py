"""``mediabot demo``: try mediabot in minutes, with no Twilio, Sonarr or Radarr.

The simulated Sonarr and Radarr (``mediabot.trial.sim``, the same simulation the tests use) run on
loopback; only the model is real, taken from the config's ``[llm]``. The conversation runs
through the same engine, history and tools as ``chat``, on a throwaway database unless
``--db`` names one, and after each reply the household sees what the tools did.

``--serve`` runs the whole daemon against the simulation plus a simulated Twilio, and prints
a signed ``curl`` that plays Twilio, so the SMS path can be watched end to end. Lines typed
in its terminal are sent as Sam's texts, every one: those typed before the daemon listens
wait for it, and a failed send is reported while the reader goes on with the next line. A
line starting with ``wa:`` goes as Sam's WhatsApp message instead (to the house's WhatsApp
sender, opening the 24-hour window), and replies to it come back on WhatsApp. With
``--phone`` a simulated Android phone carries the texts instead (``phone_stage``).
"""

import dataclasses
import itertools
import json
import secrets
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from twilio.request_validator import RequestValidator

from mediabot.config import (
    Config,
    DatabaseConfig,
    LLMConfig,
    ServerConfig,
    TwilioConfig,
    UserConfig,
)
from mediabot.conversation import history
from mediabot.store.db import Role
from mediabot.text.phones import SMS, WHATSAPP, channel_address, split_channel
from mediabot.trial.sim.loopback import LoopbackServer, free_port, wait_for
from mediabot.trial.sim.stack import Simulation
from mediabot.trial.sim.twilio import FakeTwilio

DEMO_PHONE = "+15555550100"          # 555-01xx numbers are reserved for fiction
DEMO_HOUSE_NUMBER = "+15555550199"
NO_MODEL = """mediabot demo needs a model; nothing else. Set one in your config file or the \
environment:
  Ollama (local):  [llm] base_url = "http://localhost:11434/v1" and model = "qwen2.5:7b"
                   (or MEDIABOT_LLM_BASE_URL / MEDIABOT_LLM_MODEL)
  OpenAI:          [llm] api_key = "sk-..." (or MEDIABOT_LLM_API_KEY); model = "gpt-4o-mini"
  vLLM, llama.cpp, LM Studio: [llm] base_url = their http://host:port/v1 and the model's name"""
RESULT_CHARS = 160
TYPED_WHATSAPP = "wa:"         # a typed line starting so goes on WhatsApp
READY_SECONDS = 60.0   # a typed line waits this long for the daemon to listen, per attempt
SEND_ATTEMPTS = 3
Echo = Callable[[str], None]   # where a line for the person at the terminal goes


def model_missing(llm: LLMConfig) -> bool:
    """OpenAI's URL with no key is the unconfigured default: every call would fail."""
    return "api.openai.com" in llm.base_url and not llm.api_key


def demo_config(config: Config, sim: Simulation, db_path: str,
                role: str = Role.ADMIN) -> Config:
    """The operator's model and settings, pointed at the simulation and a demo database,
    with one household member (``DEMO_PHONE``, called Sam) in ``role``."""
    return dataclasses.replace(config, sonarr=sim.arr_config("sonarr"),
                               radarr=sim.arr_config("radarr"),
                               database=DatabaseConfig(path=db_path),
                               users=(UserConfig(phone=DEMO_PHONE, name="Sam", role=role),))


def messages_since(user_id: int, after_id: int) -> list[dict]:
    """The user's stored messages newer than ``after_id`` (one turn's worth), oldest first."""
    return [m for m in history.get_history(user_id, 200) if (m.get("_id") or 0) > after_id]


def tool_activity(user_id: int, after_id: int) -> list[str]:
    """What the tools did since message ``after_id``, one line per call and result."""
    lines = []
    for message in messages_since(user_id, after_id):
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            lines.append(f"  [tool] {function.get('name')} {_compact(function.get('arguments'))}")
        if message["role"] == "tool":
            lines.append(f"  [result] {summarise_result(message.get('content') or '')}")
    return lines


def summarise_result(content: str) -> str:
    """A tool result as a person would skim it: the error, the message, or the titles."""
    try:
        result = json.loads(content)
    except ValueError:
        return _cut(content, RESULT_CHARS)
    if isinstance(result, dict) and isinstance(result.get("error"), str):
        return "error: " + _cut(result["error"], RESULT_CHARS)
    if isinstance(result, dict) and isinstance(result.get("message"), str):
        return _cut(result["message"], RESULT_CHARS)
    titles = list(dict.fromkeys(_titles(result)))
    if titles:
        return _cut(f"{len(titles)}: " + "; ".join(titles), RESULT_CHARS)
    return _cut(json.dumps(result, separators=(",", ":")), RESULT_CHARS)


def _titles(value: object, depth: int = 0) -> Iterator[str]:
    """"Title (year)" of every titled object in a result, outermost first."""
    if depth > 4:
        return
    if isinstance(value, dict):
        if isinstance(value.get("title"), str):
            year = value.get("year")
            yield value["title"] + (f" ({year})" if isinstance(year, int) else "")
            return
        for item in value.values():
            yield from _titles(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _titles(item, depth + 1)


def _compact(arguments: str | None) -> str:
    try:
        return json.dumps(json.loads(arguments or "{}"), separators=(",", ":"))
    except (TypeError, ValueError):
        return str(arguments)


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


# ------------------------------------------------------------------------------ --serve

@dataclasses.dataclass
class SmsStage:
    """The simulated Twilio, and what a signed webhook post to the daemon looks like."""

    twilio: FakeTwilio
    server: LoopbackServer
    public_url: str
    _sids = itertools.count(1)

    @classmethod
    def start(cls, port: int) -> "SmsStage":
        twilio = FakeTwilio(account_sid="AC" + secrets.token_hex(16),
                            auth_token=secrets.token_hex(16), owned_numbers=(DEMO_HOUSE_NUMBER,),
                            friendly_name="mediabot demo")
        return cls(twilio, LoopbackServer(twilio).start(), f"http://127.0.0.1:{port}")

    def config(self, config: Config, port: int) -> Config:
        twilio = TwilioConfig(account_sid=self.twilio.account_sid,
                              auth_token=self.twilio.auth_token, from_number=DEMO_HOUSE_NUMBER,
                              whatsapp_from=channel_address(WHATSAPP, DEMO_HOUSE_NUMBER),
                              api_base_url=self.server.url)
        server = ServerConfig(public_url=self.public_url, host="127.0.0.1", port=port)
        return dataclasses.replace(config, twilio=twilio, server=server)

    def signed(self, body: str, channel: str = SMS) -> tuple[str, dict, str]:
        """(url, form, X-Twilio-Signature) for one inbound SMS or WhatsApp message, as
        Twilio would sign it."""
        url = self.public_url + "/sms"
        form = {"MessageSid": f"SMdemo{int(time.time())}{next(self._sids):06d}",
                "AccountSid": self.twilio.account_sid,
                "From": channel_address(channel, DEMO_PHONE),
                "To": channel_address(channel, DEMO_HOUSE_NUMBER), "Body": body, "NumMedia": "0"}
        return url, form, RequestValidator(self.twilio.auth_token).compute_signature(url, form)

    def banner(self) -> list[str]:
        return ["The daemon answers SMS from Sam; replies arrive at a simulated Twilio and are "
                "printed here as 'SMS to ...'. Text it from another terminal (signed like "
                "Twilio):", "  " + self.curl("what's downloading?"),
                "or type a text here and press Enter (start it with wa: to send it on "
                "WhatsApp). Ctrl-C stops."]

    def curl(self, body: str) -> str:
        url, form, signature = self.signed(body)
        fields = " ".join(f"--data-urlencode {_shell_quote(f'{k}={v}')}" for k, v in form.items())
        return f"curl -s {url} -H {_shell_quote('X-Twilio-Signature: ' + signature)} {fields}"

    def post(self, body: str) -> int:
        """Post a typed line: "wa: ..." as a WhatsApp message (Sam opens the window), any
        other as an SMS."""
        channel = WHATSAPP if body.lower().startswith(TYPED_WHATSAPP) else SMS
        if channel == WHATSAPP:
            body = body[len(TYPED_WHATSAPP):].strip()
            self.twilio.open_window(DEMO_PHONE)
        url, form, signature = self.signed(body, channel)
        request = urllib.request.Request(url, data=urllib.parse.urlencode(form).encode(),
                                         headers={"X-Twilio-Signature": signature})
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status

    def listening(self) -> bool:
        """Whether the daemon answers HTTP yet (any status: /healthz says 503 while its
        jobs start, but the webhook already takes texts)."""
        try:
            with urllib.request.urlopen(self.public_url + "/healthz", timeout=2):
                return True
        except urllib.error.HTTPError:
            return True
        except OSError:
            return False

    def deliver(self, body: str, echo: Echo, ready_seconds: float = READY_SECONDS,
                attempts: int = SEND_ATTEMPTS) -> bool:
        """Post one typed line as Sam's SMS; never raises. A line typed before the daemon
        listens waits for it (``ready_seconds``); a post that finds it gone (restarting,
        refusing connections, a 5xx) is tried again, ``attempts`` in all; a line the daemon
        refuses (4xx) is not. Each failure is reported through ``echo``."""
        if not self.listening():
            echo(f"(the daemon is still starting; {_quoted(body)} goes as soon as it listens)")
        for attempt in range(1, attempts + 1):
            wait_for(self.listening, ready_seconds, step=0.1)
            try:
                self.post(body)
                return True
            except urllib.error.HTTPError as exc:
                if exc.code < 500:
                    echo(f"(not sent: the daemon refused {_quoted(body)}: {_reason(exc)})")
                    return False
                problem = f"the daemon answered {exc.code}"
            except OSError as exc:
                problem = f"the daemon did not take it ({getattr(exc, 'reason', exc)})"
            echo(f"(not sent: {problem}; "
                 + ("trying again)" if attempt < attempts else "type it again)"))
        return False

    def deliver_lines(self, lines: Iterable[str], echo: Echo) -> None:
        """``deliver`` every non-empty line of ``lines`` (the terminal), to its end."""
        for line in lines:
            if line.strip():
                self.deliver(line.strip(), echo)

    def watch(self, echo: Echo, stop: threading.Event, poll: float = 0.2) -> None:
        """Print every text the daemon sends ("SMS to ..." or "WhatsApp to ..."), as it
        arrives at the simulated Twilio."""
        shown = 0
        while not stop.wait(poll):
            sent = list(self.twilio.sent)
            for message in sent[shown:]:
                channel, to = split_channel(message["to"])
                echo(f"{'WhatsApp' if channel == WHATSAPP else 'SMS'} to {to}: "
                     f"{message['body']}")
            shown = len(sent)

    def close(self) -> None:
        self.server.stop()


def _quoted(body: str, limit: int = 40) -> str:
    return repr(_cut(body, limit))


def _reason(error: urllib.error.HTTPError) -> str:
    """The daemon's own reason ({"error": "Body is too long"}), else the HTTP status."""
    try:
        return json.loads(error.read())["error"]
    except (OSError, ValueError, KeyError, TypeError):
        return f"HTTP {error.code}"


def _shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def demo_port(config: Config) -> int:
    """The configured port when free (a real daemon may hold it), else any free one."""
    return free_port() if _busy(config.server.port) else config.server.port


def _busy(port: int) -> bool:
    import socket
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def demo_database(path: str | None, tmpdir: str) -> str:
    return path or str(Path(tmpdir) / "mediabot-demo.db")
