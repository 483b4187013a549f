"""What a text costs when nothing is cached, for ``bench/prompt_cache.py`` (issue 31).

Nothing is cached after the server restarts, after Ollama unloads an idle model, or when
another app used the server in between: the whole prompt of a text's first request is read
again. Two figures per such request, both from the server itself:

- ``read_cold``: the request as it was sent, replayed with ``cache_prompt: false`` (the slot
  keeps none of its last prompt, so ``timings.cache_n`` is 0) and one token to generate: the
  prompt's tokens (``timings.prompt_n``) and how long reading them took (``prompt_ms``).
  As slow as a cold text, so only a sample of the texts is read again.
- ``breakdown``: what those tokens are, counted with the server's own ``/apply-template`` and
  ``/tokenize``: the system text (the first message's content, tokenized alone), the tools
  block (the prompt rendered with the system message and the tools, minus the same without
  the tools: the schemas plus the words the template puts around them), the schemas' JSON
  alone (between ``<tools>`` and ``</tools>``, where the template has those tags), the
  history (the whole prompt minus the system message and tools), and what is left: the
  template's markup around the system message and the BOS token. The parts add up to the
  whole prompt as the server counts it.

The tool schemas' size on the wire is the ``tools`` array as compact JSON (what the openai SDK
sends), in UTF-8 bytes.
"""

import json
import urllib.request

from bench.harness import median

TOOLS_OPEN, TOOLS_CLOSE = "<tools>", "</tools>"


def post(base: str, path: str, payload: dict, timeout: float = 600) -> dict:
    request = urllib.request.Request(base + path, data=json.dumps(payload).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.load(response)


def tokens(base: str, text: str, special: bool = False) -> int:
    """How many tokens the server makes of ``text`` (``special``: with BOS, as a prompt)."""
    if not text:
        return 0
    return len(post(base, "/tokenize", {"content": text, "add_special": special})["tokens"])


def render(base: str, messages: list[dict], tools: list | None) -> str:
    payload: dict = {"messages": messages}
    if tools:
        payload["tools"] = tools
    return post(base, "/apply-template", payload)["prompt"]


def read_cold(base: str, request: dict) -> dict:
    """The request read from scratch: prompt tokens, reused tokens (0) and milliseconds."""
    body = {key: value for key, value in request.items()
            if key not in ("max_completion_tokens", "stream", "stream_options")}
    body.update(cache_prompt=False, max_tokens=1, stream=False)
    timings = post(base, "/v1/chat/completions", body).get("timings") or {}
    return {"prompt_n": timings.get("prompt_n"), "cache_n": timings.get("cache_n"),
            "prompt_ms": timings.get("prompt_ms")}


def breakdown(base: str, request: dict) -> dict:
    """The prompt's tokens by part (see the module's docstring); ``total`` is all of it."""
    messages, tools = request.get("messages") or [], request.get("tools")
    system = messages[:1] if messages and messages[0].get("role") == "system" else []
    whole = render(base, messages, tools)
    head = render(base, system, tools) if system else ""
    bare = render(base, system, None) if system else ""
    total = tokens(base, whole, special=True)
    parts = {"system": tokens(base, system[0].get("content") or "") if system else 0,
             "tools_block": tokens(base, head) - tokens(base, bare) if tools else 0,
             "history": total - tokens(base, head, special=True) if system else total}
    parts["template"] = total - sum(parts.values())
    parts["tool_json"] = tokens(base, schema_text(head)) if TOOLS_OPEN in head else None
    return {"total": total, **parts}


def schema_text(rendered: str) -> str:
    """The schemas as the template wrote them, between the last ``<tools>`` and the
    ``</tools>`` after it (Qwen's template first names the tags: "within <tools></tools>
    XML tags")."""
    start = rendered.rindex(TOOLS_OPEN) + len(TOOLS_OPEN)
    return rendered[start:rendered.index(TOOLS_CLOSE, start)].strip("\n")


def wire_bytes(tools: list | None) -> int:
    return len(json.dumps(tools or [], separators=(",", ":"), ensure_ascii=False).encode())


def first_requests(rows: list[dict]) -> list[int]:
    """Indexes of the texts' first requests."""
    return [i for i, row in enumerate(rows) if row["stage"] == "first"]


def spread(items: list, count: int | None) -> list:
    """At most ``count`` of ``items``, evenly spread (all of them when ``count`` is None)."""
    if count is None or count >= len(items):
        return list(items)
    if count <= 0:
        return []
    step = len(items) / count
    return [items[int(k * step)] for k in range(count)]


def cold_figures(base: str, requests: list[dict], rows: list[dict],
                 sample: int | None = None) -> dict:
    """Every text's first request: its parts (``breakdown``, cheap: the server only renders
    and tokenizes); ``sample`` of them (evenly spread; None: all) also read from scratch
    (``read_cold``, as slow as a cold text). The medians, and the tool schemas' size per
    distinct tool list (admins and members differ). Run it last: it empties the slot."""
    per_request = [{"request": index, "text": rows[index]["text"],
                    "member": rows[index].get("member", 0), **breakdown(base, requests[index])}
                   for index in first_requests(rows)]
    for entry in spread(per_request, sample):
        entry["cold"] = read_cold(base, requests[entry["request"]])
    return {"requests": per_request, **summarise_cold(per_request),
            "schemas": schema_sizes(base, requests)}


def summarise_cold(per_request: list[dict]) -> dict:
    """Medians: the cold prompt's tokens (as rendered and tokenized by the server: what it
    reads with nothing cached) and its parts; over the requests read from scratch, the
    milliseconds and tokens a second, and whether the server's count matched the rendered
    one (``cold_read_matches_rendered``: prompt_n == total at every read)."""
    def of(key):
        return median([entry[key] for entry in per_request])

    read = [entry for entry in per_request if "cold" in entry]
    colds = [entry["cold"] for entry in read]
    speeds = [c["prompt_n"] / c["prompt_ms"] * 1000 for c in colds
              if c.get("prompt_n") and c.get("prompt_ms")]
    return {"cold_prompt_tokens_median": of("total"),
            "cold_prompt_ms_median": median([c["prompt_ms"] for c in colds]),
            "cold_read_tokens_median": median([c["prompt_n"] for c in colds]),
            "cold_tokens_per_second_median": median(speeds),
            "cold_reads": len(read),
            "cold_cache_n_max": max((c["cache_n"] or 0 for c in colds), default=None),
            "cold_read_matches_rendered": all(e["cold"]["prompt_n"] == e["total"]
                                              for e in read) if read else None,
            "breakdown_median": {key: of(key) for key in
                                 ("system", "tools_block", "tool_json", "history", "template")},
            "breakdown_of_median_prompt": _middle(per_request)}


def _middle(per_request: list[dict]) -> dict | None:
    """The parts of the request whose total is the median (the lower one of an even count):
    medians of parts do not add up, one request's parts do."""
    if not per_request:
        return None
    ranked = sorted(per_request, key=lambda entry: entry["total"])
    entry = ranked[(len(ranked) - 1) // 2]
    return {key: entry[key] for key in
            ("request", "total", "system", "tools_block", "tool_json", "history", "template")}


def schema_sizes(base: str, requests: list[dict]) -> list[dict]:
    """Each distinct ``tools`` array sent: its tools, bytes on the wire and tokens (the
    block the template renders, and its JSON alone), and how many requests carried it."""
    seen: dict[str, dict] = {}
    for request in requests:
        tools = request.get("tools") or []
        key = json.dumps(tools, sort_keys=True)
        if key in seen:
            seen[key]["requests"] += 1
            continue
        system = [{"role": "system", "content": "x"}]
        head = render(base, system, tools) if tools else ""
        seen[key] = {"tools": [t.get("function", {}).get("name") for t in tools],
                     "wire_bytes": wire_bytes(tools),
                     "block_tokens": (tokens(base, head) - tokens(base, render(base, system,
                                                                               None))
                                      if tools else 0),
                     "json_tokens": tokens(base, schema_text(head)) if TOOLS_OPEN in head
                     else None,
                     "requests": 1}
    return sorted(seen.values(), key=lambda entry: -entry["requests"])
