"""A fake OpenAI chat-completions server for the real ``openai`` SDK over loopback HTTP.

Like the real API it answers HTTP 400 with ``{"error": {"message", "type", "param",
"code"}}`` when the request's messages break a sequence rule
(``mediabot.conversation.prompt.message_rules``, the same rules ``validate_messages`` checks), 401
for a wrong API key and 404 for an unknown model. Otherwise it pops the next scripted reply::

    fake = FakeOpenAI().start()
    fake.enqueue_tool_calls([("search_media", {"query": "dune"})])
    fake.enqueue_text("Found Dune (2021).")
    client = OpenAI(base_url=fake.url + "/v1", api_key="test", max_retries=0)
    ...
    fake.requests[-1]["messages"]      # what the model was shown

With the queue empty it asks ``set_responder``'s function, else answers ``default_text``.

``serve_root(path, answer)`` makes it answer a GET at the server's root as another server
does: ``serve_root("/props", LLAMA_PROPS)`` is llama-server (its ``/props`` is not under
``/v1``), ``"/api/version"`` Ollama; ``answer`` is the JSON body, or an int status for a
failure. ``root_asked`` records those GETs' paths, in order.

``use_template(name)`` makes it a template server as well, like vLLM: each request's messages
and tools are rendered through that vendored chat template (``tests.fakes.chat_templates``)
before any reply, a template that raises gets vLLM's 400 with the template's own words, and
``rendered`` holds every prompt text the template produced.
"""

import itertools
import json
import random
import string
import threading
import time
from collections import deque
from dataclasses import dataclass, field, replace

import jinja2
from werkzeug.exceptions import HTTPException, NotFound
from werkzeug.routing import Map, Rule
from werkzeug.wrappers import Request, Response

from mediabot.conversation.prompt.build import estimate_tokens
from mediabot.conversation.prompt.message_rules import find_violation
from mediabot.trial.sim.loopback import LoopbackServer
from tests.fakes.chat_templates import TEMPLATES, render

DEFAULT_MODELS = ("gpt-4o-mini", "gpt-4o")
CREATED = 1_700_000_000


@dataclass
class Reply:
    """One scripted answer: text, tool calls, or an HTTP error; ``delay`` seconds first."""

    content: str | None = None
    tool_calls: list[dict] = field(default_factory=list)
    status: int = 200
    error: dict | None = None
    delay: float = 0.0


@dataclass(frozen=True)
class _Delay:
    seconds: float


def text_reply(text: str) -> Reply:
    return Reply(content=text)


def error_reply(status: int, message: str, *, type: str | None = None,
                code: str | None = None, param: str | None = None) -> Reply:
    kind = type or ("server_error" if status >= 500 else "invalid_request_error")
    return Reply(status=status, error=_error(message, kind, param, code))


def _error(message: str, kind: str = "invalid_request_error", param=None, code=None) -> dict:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


class FakeOpenAI:
    """Scripted chat completions; ``requests`` records every chat request body, in order.

    ``api_key``: when set, requests must carry it as a Bearer token (401 otherwise).
    ``models``: what ``GET /v1/models`` lists and what chat requests may name (404 otherwise).
    """

    def __init__(self, *, models=DEFAULT_MODELS, api_key: str | None = None,
                 default_text: str = "OK."):
        self.models = list(models)
        self._slot_prompts: dict = {}   # id_slot (None: not named) -> the last prompt there
        # llama-server with one KV buffer and its host-memory cache: a request empties every
        # other slot (--cache-idle-slots), so a prompt left in a slot is gone after another's
        self.empties_idle_slots = False
        # llama-server's host-memory cache (--cache-ram): a prompt another request replaced is
        # given back, the best-matching one, when a prompt naming no slot starts like it
        self.restores_prompts = False
        self._saved: list[str] = []
        self.serves_any_model = False   # llama-server: lists its file, answers to any name
        # a tokenizer that counts this many tokens per token of mediabot's estimate (None: its
        # own count of the JSON); llama-server's ``timings`` object to send with each answer
        self.usage_scale: float | None = None
        self.timings: dict | None = None
        self.api_key = api_key
        self.default_text = default_text
        self._lock = threading.Lock()
        self._queue: deque = deque()
        self._requests: list[dict] = []
        self._responder = None
        self._template: tuple[str, str] | None = None
        self._rendered: list[str] = []
        self._ids = itertools.count(1)
        self._random = random.Random(0)
        self._root: dict[str, object] = {}
        self._root_asked: list[str] = []
        self._server = LoopbackServer(self.wsgi_app)
        self._routes = Map([Rule("/v1/chat/completions", endpoint="chat", methods=["POST"]),
                            Rule("/v1/models", endpoint="models", methods=["GET"]),
                            Rule("/v1/models/<path:model>", endpoint="model", methods=["GET"])])

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> "FakeOpenAI":
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    @property
    def url(self) -> str:
        """Base URL without the ``/v1`` the SDK's ``base_url`` needs."""
        return self._server.url

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # ------------------------------------------------------------------ scripting

    @property
    def requests(self) -> list[dict]:
        with self._lock:
            return list(self._requests)

    @property
    def root_asked(self) -> list[str]:
        with self._lock:
            return list(self._root_asked)

    @property
    def rendered(self) -> list[str]:
        with self._lock:
            return list(self._rendered)

    def reset(self) -> None:
        """Forget the script, the responder, the template and what was recorded (to reuse one
        server)."""
        with self._lock:
            self._queue.clear()
            self._requests.clear()
            self._rendered.clear()
            self._responder = None
            self._template = None
            self._root.clear()
            self._root_asked.clear()
            self._slot_prompts.clear()
            self.empties_idle_slots = False
            self.restores_prompts = False
            self._saved.clear()
            self.usage_scale = None
            self.timings = None

    def use_template(self, name: str | None, *, mode: str = "vllm") -> None:
        """Render every request through template ``name`` (a key of chat_templates.TEMPLATES)
        as a ``mode`` server does ("vllm" or "passthrough"); None turns it off."""
        if name is not None and name not in TEMPLATES:
            raise ValueError(f"no vendored template {name!r}; choose from {sorted(TEMPLATES)}")
        with self._lock:
            self._template = None if name is None else (name, mode)

    def serve_root(self, path: str, answer: object) -> None:
        """Answer ``GET path`` (at the root, not ``/v1``) with ``answer``: JSON, or an int
        status with an error body."""
        with self._lock:
            self._root[path] = answer

    def enqueue(self, reply: Reply) -> None:
        with self._lock:
            self._queue.append(reply)

    def enqueue_text(self, text: str) -> None:
        self.enqueue(text_reply(text))

    def enqueue_tool_calls(self, calls, *, ids=None, content: str | None = None) -> None:
        """Queue one assistant message calling each ``(name, arguments)`` in ``calls``.

        ``arguments`` is a dict (sent as JSON) or a str sent as is, e.g. invalid JSON.
        ``ids``: None for OpenAI-style ids, "ollama" for Ollama's ``call_`` plus 8 random
        lowercase letters and digits per call (server/routes.go ``toolCallId``), "vllm" for
        its 46-character ids, or an explicit list (e.g. ``["call_0"]`` reused every turn).
        """
        self.enqueue(self.tool_calls_reply(calls, ids=ids, content=content))

    def enqueue_error(self, status: int, message: str, **kwargs) -> None:
        self.enqueue(error_reply(status, message, **kwargs))

    def enqueue_delay(self, seconds: float) -> None:
        """Make the next reply (scripted, responder or default) wait ``seconds`` first."""
        with self._lock:
            self._queue.append(_Delay(seconds))

    def set_responder(self, fn) -> None:
        """``fn(request_json)`` answers when the queue is empty: a Reply, a str, or calls."""
        with self._lock:
            self._responder = fn

    def tool_calls_reply(self, calls, *, ids=None, content: str | None = None) -> Reply:
        calls = list(calls)
        return Reply(content=content, tool_calls=[
            {"id": call_id, "type": "function",
             "function": {"name": name, "arguments": _arguments(arguments)}}
            for call_id, (name, arguments)
            in zip(self._make_ids(ids, len(calls)), calls, strict=True)])

    def _make_ids(self, ids, count: int) -> list[str]:
        if isinstance(ids, (list, tuple)):
            return list(ids)
        numbers = [next(self._ids) for _ in range(count)]
        if ids == "ollama":
            return [self._ollama_id() for _ in range(count)]
        if ids == "vllm":
            return [f"chatcmpl-tool-{n:032x}" for n in numbers]
        if ids is None:
            return [f"call_{n:024d}" for n in numbers]
        raise ValueError(f"ids must be None, 'ollama', 'vllm' or a list, not {ids!r}")

    def _ollama_id(self) -> str:
        alphabet = string.ascii_lowercase + string.digits
        with self._lock:
            return "call_" + "".join(self._random.choice(alphabet) for _ in range(8))

    # ------------------------------------------------------------------ HTTP

    def wsgi_app(self, environ, start_response):
        request = Request(environ)
        if request.method == "GET" and not request.path.startswith("/v1/"):
            return self._answer_root(request.path)(environ, start_response)
        if request.method == "POST" and request.path == "/completion" and "/props" in self._root:
            return self._raw_completion(request)(environ, start_response)
        try:
            endpoint, args = self._routes.bind_to_environ(environ).match()
            response = self._dispatch(request, endpoint, args)
        except NotFound:
            response = _json(404, _error(f"Invalid URL ({request.method} {request.path})"))
        except HTTPException as exc:
            response = _json(exc.code or 400, _error(exc.description or "Bad request"))
        return response(environ, start_response)

    def _dispatch(self, request: Request, endpoint: str, args: dict) -> Response:
        if self.api_key is not None and request.headers.get("Authorization") != \
                f"Bearer {self.api_key}":
            return _json(401, _error("Incorrect API key provided. You can find your API key "
                                     "at https://platform.openai.com/account/api-keys.",
                                     code="invalid_api_key"))
        if endpoint == "models":
            return _json(200, {"object": "list", "data": [_model(m) for m in self.models]})
        if endpoint == "model":
            return (_json(200, _model(args["model"])) if args["model"] in self.models
                    else _model_not_found(args["model"]))
        return self._chat(request)

    def _answer_root(self, path: str) -> Response:
        with self._lock:
            self._root_asked.append(path)
            answer = self._root.get(path)
        if answer is None:
            return _json(404, _error(f"File Not Found: {path}"))
        if isinstance(answer, int):
            return _json(answer, _error("Internal Server Error", "server_error"))
        return Response(json.dumps(answer), mimetype="application/json")

    def _raw_completion(self, request: Request) -> Response:
        """llama-server's own ``POST /completion`` (a prompt, no template), where it serves
        ``/props``: ``timings.cache_n`` is what the named slot still held of the prompt."""
        body = request.get_json(silent=True) or {}
        prompt = str(body.get("prompt") or "")
        with self._lock:
            self._root_asked.append("POST /completion")
        cached = self._cached(prompt, body.get("id_slot")) // 4
        return Response(json.dumps({
            "content": "", "id_slot": body.get("id_slot"), "stop": True,
            "timings": {"cache_n": cached, "prompt_n": max(len(prompt) // 4 - cached, 1)}}),
            mimetype="application/json")

    def _chat(self, request: Request) -> Response:
        body = request.get_json(silent=True)
        if not isinstance(body, dict):
            return _json(400, _error("We could not parse the JSON body of your request."))
        with self._lock:
            self._requests.append(body)
        rejection = _reject(body, None if self.serves_any_model else self.models)
        if rejection is None:
            rejection = self._render(body)
        if rejection is not None:
            return rejection
        reply = self._next_reply(body)
        if reply.delay:
            time.sleep(reply.delay)
        if reply.error is not None:
            return _json(reply.status, reply.error)
        return _json(200, self._completion(body, reply))

    def _render(self, body: dict) -> Response | None:
        """vLLM's 400 when the chosen template refuses the request; None when it renders."""
        with self._lock:
            template = self._template
        if template is None:
            return None
        try:
            text = render(template[0], body["messages"], body.get("tools"), mode=template[1])
        except (jinja2.TemplateError, TypeError, ValueError) as exc:
            return _json(400, {"error": {"message": f"{exc} {exc.__cause__}",
                                         "type": "BadRequestError", "param": None,
                                         "code": 400}})
        with self._lock:
            self._rendered.append(text)
        return None

    def _next_reply(self, body: dict) -> Reply:
        """Pop delays and the next reply; ask the responder, else the default, when empty."""
        delay = 0.0
        with self._lock:
            while self._queue and isinstance(self._queue[0], _Delay):
                delay += self._queue.popleft().seconds
            reply = self._queue.popleft() if self._queue else None
            responder = self._responder
        if reply is None:
            reply = self._coerce(responder(body)) if responder else text_reply(self.default_text)
        return replace(reply, delay=reply.delay + delay)

    def _coerce(self, answer) -> Reply:
        if isinstance(answer, Reply):
            return answer
        if isinstance(answer, str):
            return text_reply(answer)
        return self.tool_calls_reply(answer)

    def _cached(self, prompt: str, slot=None) -> int:
        """Characters of ``prompt`` shared with the previous request's on the same slot (the
        ``id_slot`` it named; all that name none share one), or with ``restores_prompts``
        and no slot named, with any earlier prompt: a server's prompt cache reuses that
        prefix (reported as usage.prompt_tokens_details.cached_tokens)."""
        with self._lock:
            before = [self._slot_prompts.get(slot, "")]
            if self.restores_prompts and slot is None:   # only into a slot it chose itself
                before += self._saved
            self._saved.append(prompt)
            if self.empties_idle_slots:
                self._slot_prompts.clear()
            self._slot_prompts[slot] = prompt
        return max(_shared(old, prompt) for old in before)

    def _prompt_tokens(self, body: dict) -> int:
        messages, tools = body.get("messages"), body.get("tools", [])
        if self.usage_scale is None:
            return len(json.dumps(messages)) // 4 + len(json.dumps(tools)) // 4
        sent = messages + ([{"role": "system", "content": json.dumps(tools)}] if tools else [])
        return round(self.usage_scale * estimate_tokens(sent))

    def _completion(self, body: dict, reply: Reply) -> dict:
        message = {"role": "assistant", "content": reply.content, "refusal": None}
        if reply.tool_calls:
            message["tool_calls"] = reply.tool_calls
        prompt = self._prompt_tokens(body)
        completion = len(json.dumps(message)) // 4
        cached = self._cached(json.dumps([body.get("tools", []), body.get("messages")]),
                              body.get("id_slot")) // 4
        return {
            **({"timings": self.timings} if self.timings is not None else {}),
            "id": f"chatcmpl-fake{next(self._ids)}", "object": "chat.completion",
            "created": int(time.time()), "model": body["model"], "system_fingerprint": "fp_fake",
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion,
                      "prompt_tokens_details": {"cached_tokens": cached}},
        }


def _reject(body: dict, models: list[str] | None) -> Response | None:
    """The 400/404 the real API gives for this body, or None when it would accept it
    (``models`` None: any model name is served)."""
    if not body.get("model"):
        return _json(400, _error("you must provide a model parameter"))
    if models is not None and body["model"] not in models:
        return _model_not_found(body["model"])
    if "messages" not in body:
        return _json(400, _error("Missing required parameter: 'messages'.", param="messages",
                                 code="missing_required_parameter"))
    if body.get("stream"):
        return _json(400, _error("The fake OpenAI server does not stream.", param="stream"))
    violation = find_violation(body["messages"])
    if violation is not None:
        return _json(400, _error(violation.message, param=violation.param,
                                 code=violation.code))
    return None


def _arguments(arguments) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def _model(name: str) -> dict:
    return {"id": name, "object": "model", "created": CREATED, "owned_by": "fake-openai"}


def _model_not_found(name: str) -> Response:
    return _json(404, _error(f"The model `{name}` does not exist or you do not have access "
                             "to it.", code="model_not_found"))


def _json(status: int, payload: dict) -> Response:
    return Response(json.dumps(payload), status=status, mimetype="application/json",
                    headers={"x-request-id": "req_fake"})


def _shared(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` start with alike."""
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                min(len(a), len(b)))
