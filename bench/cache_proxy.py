"""A loopback proxy between mediabot's OpenAI client and llama-server that records every
chat completion, for ``bench/prompt_cache.py``.

Every request is passed to llama-server unchanged and evaluated for real; the proxy keeps
the request (messages, tools) and the server's figures: ``usage.prompt_tokens``,
``timings.cache_n`` (prompt tokens reused from the KV cache), ``timings.prompt_n`` (tokens
evaluated again), ``prompt_ms``, ``predicted_ms`` and the wall time.

A GET (mediabot asking ``/props`` how many slots there are) and any POST but a chat completion
(mediabot's three short ``/completion`` prompts asking how the server keeps them) are passed
on as they came, unrecorded.

The driver posts ``/bench/text`` before each text: its index, the member who sends it
(0 when one person sends them all) and, optionally, a tool call; and ``/bench/after`` once
the text's reply is handed over, before the work after it: a request from then on that
ends with a user message is mediabot reading the next prompt ahead (stage "read_ahead":
never a scripted call, passed on as it came, for one token, its answer as the server gave
it).
The first answer of that text (the request whose last message is the user's) is then
rewritten into that tool call in llama-server's own response shape (``finish_reason``
"tool_calls", ``content`` null), so the tool-result round is exercised even though the tiny
model rarely calls tools itself. A server error is passed back as it came (status and body)
and recorded with no figures.

With ``scripted`` (``bench/prompt_cache.py --scripted-replies``) the server is asked for one
token only (``max_tokens: 1``) and every answer that is not the scripted call becomes a
fixed reply naming the text (``SCRIPTED_REPLY``): the server still reads every prompt for
real (``cache_n``, ``prompt_n``, ``prompt_ms`` are its own), but nothing waits for the tiny
model to write, and every run does the same work (one request per text, two with a tool
round), so two checkouts compare request for request. The server holds its one generated
token, not the reply, so each reply is read again with the next request (~20 tokens), as a
forced call is.

With ``written`` (``--written-replies N``) the model writes every reply itself, at most N
tokens (``n_predict``), and the person gets what it wrote: the tokens written
(``timings.predicted_n``) and the time it took are the server's own. The scripted calls stay
scripted and are asked for one token (what the model would write for a call, ~20 tokens, is
not counted); a call the model makes by itself becomes ``SCRIPTED_REPLY`` (the row says
``own_call``), so every run still does the script's rounds and no more.
"""

import json
import threading
import time
from http.client import HTTPConnection
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from bench.household_script import as_offered

SCRIPTED_REPLY = "Here is what I found about \"{text}\". Anything else I can look up?"


class Recorder:
    """What the proxy saw: one row per chat completion, plus each request as it was sent
    (messages, tools and the settings)."""

    def __init__(self, scripted: bool = False, written: int | None = None):
        self.rows: list[dict] = []
        self.requests: list[dict] = []
        self.text, self.member, self.forced = -1, 0, None
        self.after = False   # the text's reply has gone: what comes now is read ahead
        self.scripted, self.written, self.sent = scripted, written, ""
        self.lock = threading.Lock()

    def next_text(self, index: int, forced: dict | None, member: int = 0,
                  sent: str = "") -> None:
        with self.lock:
            self.text, self.member, self.forced, self.sent = index, member, forced, sent
            self.after = False

    def replied(self) -> None:
        with self.lock:
            self.after = True

    def stage(self, messages: list[dict]) -> str:
        """``stage``, and "read_ahead" for a first request after the text's reply."""
        found = stage(messages)
        return "read_ahead" if found == "first" and self.after else found

    def take_forced(self, messages: list[dict]) -> dict | None:
        """The text's scripted call, once, and only for its first request."""
        with self.lock:
            if messages and messages[-1].get("role") == "user" and self.forced \
                    and not self.after:
                forced, self.forced = self.forced, None
                return forced
            return None


def stage(messages: list[dict]) -> str:
    """Which request of a text this is: the first (the user's text is last), one after a
    tool result, or another (e.g. a summary); ``Recorder.stage`` tells a read-ahead."""
    last = messages[-1].get("role") if messages else None
    return {"user": "first", "tool": "after_tool"}.get(last, "other")


def as_tool_call(response: dict, forced: dict, text: int) -> dict:
    """``response`` with its answer replaced by ``forced``; usage and timings kept."""
    call = {"type": "function", "id": f"bench{text:02d}",
            "function": {"name": forced["name"], "arguments": forced["arguments"]}}
    choice = response["choices"][0]
    choice["message"] = {"role": "assistant", "content": None, "tool_calls": [call]}
    choice["finish_reason"] = "tool_calls"
    return response


def as_reply(response: dict, text: str) -> dict:
    """``response`` with its answer replaced by a plain reply; usage and timings kept."""
    choice = response["choices"][0]
    choice["message"] = {"role": "assistant", "content": text}
    choice["finish_reason"] = "stop"
    return response


def one_token(body: bytes) -> bytes:
    """The request as sent, asking for one generated token."""
    return at_most(body, 1)


def at_most(body: bytes, tokens: int) -> bytes:
    """The request as sent, asking for at most ``tokens`` generated tokens."""
    request = json.loads(body)
    request.pop("max_completion_tokens", None)
    request["max_tokens"] = request["n_predict"] = tokens
    return json.dumps(request).encode()


def own_call(response: dict) -> bool:
    """Whether the model answered with a tool call of its own."""
    return bool(((response.get("choices") or [{}])[0].get("message") or {}).get("tool_calls"))


def sent_body(recorder: Recorder, body: bytes, forced: dict | None) -> bytes:
    """What llama-server is asked: one token for a scripted answer (a call, or every answer
    with ``scripted``), at most ``written`` tokens for a reply the model writes."""
    if recorder.scripted or (forced and recorder.written):
        return one_token(body)
    return at_most(body, recorder.written) if recorder.written else body


def row_for(recorder: Recorder, request: dict, response: dict | None, wall: float,
            forced: dict | None, replaced: bool = False) -> dict:
    timings = (response or {}).get("timings") or {}
    usage = (response or {}).get("usage") or {}
    return {"request": len(recorder.rows), "text": recorder.text, "member": recorder.member,
            "stage": recorder.stage(request.get("messages") or []),
            "prompt_tokens": usage.get("prompt_tokens"), "cache_n": timings.get("cache_n"),
            "prompt_n": timings.get("prompt_n"), "prompt_ms": timings.get("prompt_ms"),
            "predicted_n": timings.get("predicted_n"),
            "predicted_ms": timings.get("predicted_ms"), "wall_s": round(wall, 3),
            "forced_call": forced["name"] if forced else None, "own_call": replaced,
            "id_slot": request.get("id_slot")}


def make_handler(recorder: Recorder, upstream: tuple[str, int], timeout: float):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path == "/bench/text":
                plan = json.loads(body)
                recorder.next_text(plan["index"], plan.get("call"), plan.get("member", 0),
                                   plan.get("text", ""))
                return self._answer(200, b"{}")
            if self.path == "/bench/after":
                recorder.replied()
                return self._answer(200, b"{}")
            if not self.path.endswith("/chat/completions"):
                return self._pass("POST", body)   # mediabot's short probes of the slots
            self._forward(body)

        def do_GET(self):
            """Passed on as it came: mediabot asks llama-server's ``/props`` (its slots)."""
            self._pass("GET")

        def _pass(self, method: str, body: bytes | None = None):
            """Passed on as it came, not recorded: not one of the household's requests."""
            connection = HTTPConnection(*upstream, timeout=timeout)
            connection.request(method, self.path, body,
                               {"Content-Type": "application/json"} if body else {})
            reply = connection.getresponse()
            status, data = reply.status, reply.read()
            connection.close()
            self._answer(status, data)

        def _forward(self, body: bytes):
            request = json.loads(body)
            forced = recorder.take_forced(request.get("messages") or [])
            ahead = recorder.stage(request.get("messages") or []) == "read_ahead"
            started = time.perf_counter()
            connection = HTTPConnection(*upstream, timeout=timeout)
            sent = one_token(body) if ahead else sent_body(recorder, body, forced)
            connection.request("POST", self.path, sent, {"Content-Type": "application/json"})
            reply = connection.getresponse()
            status, data = reply.status, reply.read()
            connection.close()
            wall = time.perf_counter() - started
            response = json.loads(data) if status == 200 else None
            replaced = bool(response is not None and not forced and recorder.written
                            and own_call(response) and not ahead)
            if response is not None and forced:
                call = as_offered(forced, request.get("tools") or [])
                data = json.dumps(as_tool_call(response, call, recorder.text)).encode()
            elif response is not None and not ahead and (recorder.scripted or replaced):
                reply = SCRIPTED_REPLY.format(text=recorder.sent)
                data = json.dumps(as_reply(response, reply)).encode()
            with recorder.lock:
                recorder.rows.append(row_for(recorder, request, response, wall, forced,
                                             replaced))
                recorder.requests.append(request)   # as sent: replayed cold later
            self._answer(status, data)

        def _answer(self, status: int, data: bytes):
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


class Proxy:
    """The proxy on 127.0.0.1 (any free port) in a thread of the bench process."""

    def __init__(self, upstream_port: int, timeout: float = 900.0, scripted: bool = False,
                 written: int | None = None):
        self.recorder = Recorder(scripted, written)
        handler = make_handler(self.recorder, ("127.0.0.1", upstream_port), timeout)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> "Proxy":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
