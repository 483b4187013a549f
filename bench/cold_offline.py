"""The cold prompt of the bench's evening without generating a token: a quick before and
after for a change to what the model reads (the tools, the results, the history).

The driver and the recording proxy of ``bench/prompt_cache.py`` with scripted replies (every
answer is the script's), against ``CountingUpstream``: it answers each chat completion with
one fixed word and, as ``usage.prompt_tokens``, the prompt as llama-server renders it
(``/apply-template``) and counts it (``/tokenize``), so the engine's token calibration sees
the server's own counts and the window cuts where it would. Anything else (``/props``, the
slot probes) goes to llama-server as it came. Then each text's first request is split into
its parts (``cold_prompt.breakdown``). Nothing is generated and no prompt is evaluated, so a
run takes seconds; ``cache_n`` and timings are not measured (``bench/prompt_cache.py`` is
the bench for those). Run from the repository root:

    .venv/bin/python bench/cold_offline.py [--model smollm2] [--variant solo-20]
        [--baseline main]
"""

import argparse
import json
import sys
import tempfile
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.cache_proxy import Proxy, Recorder, make_handler
from bench.cold_prompt import breakdown, first_requests, render, tokens
from bench.harness import ROOT, free_port, median
from bench.llama_setup import DEFAULT_MODEL, MODELS, ensure_model, ensure_server
from bench.prompt_cache import (
    drive,
    export_revision,
    server_argv,
    start_server,
    stop_server,
    variant_plan,
)


class CountingUpstream:
    """A loopback stand-in for llama-server's chat endpoint that only counts the prompt
    (``llama`` is the real server's base URL, which renders and tokenizes)."""

    def __init__(self, llama: str):
        self.llama = llama
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    def answer(self, request: dict) -> dict:
        count = tokens(self.llama, render(self.llama, request["messages"], request.get("tools")),
                       special=True)
        return {"id": "counted", "object": "chat.completion", "created": int(time.time()),
                "model": request.get("model"),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": "ok"}}],
                "usage": {"prompt_tokens": count, "completion_tokens": 1,
                          "total_tokens": count + 1}}

    def _handler(self):
        """The recording proxy's handler (its pass-through to llama-server and its answers),
        with chat completions answered here."""
        upstream = self
        host, port = self.llama.removeprefix("http://").split(":")

        class Handler(make_handler(Recorder(), (host, int(port)), 120.0)):
            def do_POST(self):
                if not self.path.endswith("/chat/completions"):
                    return super().do_POST()
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self._answer(200, json.dumps(upstream.answer(json.loads(body))).encode())
        return Handler

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def cold_offline(llama: str, source: Path, variant: str, workdir: Path) -> dict:
    """The evening of ``variant`` for the tree ``source``: medians of its texts' first
    requests (total, tools block, history) and each one's total."""
    plan = variant_plan(variant, None)
    upstream = CountingUpstream(llama)
    try:
        with Proxy(upstream.port, scripted=True) as proxy:
            drive(source, {"proxy": proxy.url, "texts": plan["texts"], "timeout": 120,
                           "members": [dict(zip(("phone", "name", "role", "language"), member,
                                                strict=True)) for member in plan["members"]],
                           "reply_tokens": 48, "max_messages": plan["max_messages"],
                           "workdir": str(workdir),
                           "database": str(workdir / f"{variant}-{time.time_ns()}.db")},
                  timeout=600)
    finally:
        upstream.close()
    rows, requests = proxy.recorder.rows, proxy.recorder.requests
    parts = [breakdown(llama, requests[index]) for index in first_requests(rows)]
    return {"variant": variant, "requests": len(rows),
            **{f"{key}_median": median([part[key] for part in parts])
               for key in ("total", "tools_block", "history")},
            "first_requests": [part["total"] for part in parts]}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=tuple(MODELS), default=DEFAULT_MODEL)
    parser.add_argument("--variant", action="append", help="solo-N or household (repeatable; "
                        "default solo-20 and household)")
    parser.add_argument("--baseline", metavar="REV", help="a revision to run beside this tree")
    args = parser.parse_args(argv)
    binary, model = ensure_server(print), ensure_model(print, args.model)
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"current": ROOT}
        if args.baseline:
            trees["baseline"] = Path(tmp) / "baseline"
            export_revision(args.baseline, trees["baseline"])
        server = start_server(server_argv(binary, model, port, MODELS[args.model].swa, False)
                              + ["--threads", "1"], Path(tmp) / "llama.log")
        try:
            print(json.dumps({label: [cold_offline(f"http://127.0.0.1:{port}", tree, variant,
                                                   Path(tmp))
                                      for variant in args.variant or ("solo-20", "household")]
                              for label, tree in trees.items()}, indent=1))
        finally:
            stop_server(server)


if __name__ == "__main__":
    main()
