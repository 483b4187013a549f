"""Why a request could not reuse the previous one's KV cache: the first part of the prompt
that differs between consecutive requests, for ``bench/prompt_cache.py``.

llama-server reuses the longest common token prefix of the new prompt and the slot's
previous prompt; everything after the first difference is evaluated again. So each request
is compared with the one before it, message by message (which message, and for the system
message which line), and, through the server's own ``/apply-template`` and ``/tokenize``,
as rendered text: how many tokens the two rendered prompts share (the most the cache could
reuse). A server that does not answer those endpoints leaves the token figure out.
"""

import json
import urllib.request
from collections import Counter

CLOCK_MARK = "It is now "


def first_difference(before: dict, after: dict) -> str:
    """A short label for where ``after``'s prompt first departs from ``before``'s."""
    if before.get("tools") != after.get("tools"):
        return "tool schemas changed"
    old, new = before.get("messages") or [], after.get("messages") or []
    k = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), None)
    if k is None:
        return "prefix intact (messages appended)" if len(new) >= len(old) else "prompt shorter"
    if k == 0 and old[0].get("role") == new[0].get("role") == "system":
        return "system message: " + _changed_line(old[0].get("content"), new[0].get("content"))
    return _history_change(old, new, k)


def _changed_line(old: str | None, new: str | None) -> str:
    old_lines, new_lines = (old or "").split("\n"), (new or "").split("\n")
    for a, b in zip(old_lines, new_lines):
        if a != b:
            return "clock line" if a.startswith(CLOCK_MARK) else f"line {a[:50]!r} -> {b[:50]!r}"
    return "lines added" if len(new_lines) > len(old_lines) else "lines removed"


def _history_change(old: list[dict], new: list[dict], k: int) -> str:
    """The window slid (the new k-th message is an older request's later one), a pruned or
    summary note appeared, or a message was rewritten."""
    dropped = next((j - k for j in range(k + 1, len(old)) if old[j] == new[k]), None)
    if dropped:
        return f"history window slid at message {k} ({dropped} oldest dropped)"
    role = new[k].get("role")
    content = str(new[k].get("content") or "")[:60]
    return f"message {k} ({role}) differs: {content!r}"


def _post(base: str, path: str, payload: dict) -> dict:
    request = urllib.request.Request(base + path, data=json.dumps(payload).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.load(response)


def rendered(base: str, request: dict) -> str:
    payload = {"messages": request.get("messages") or []}
    if request.get("tools"):
        payload["tools"] = request["tools"]
    return _post(base, "/apply-template", payload)["prompt"]


def shared_tokens(base: str, old: str, new: str) -> int:
    """Tokens of the longest common prefix of two rendered prompts."""
    n = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
    return len(_post(base, "/tokenize", {"content": old[:n]})["tokens"]) if n else 0


def diagnose(base: str, requests: list[dict], rows: list[dict]) -> list[dict]:
    """One entry per request after the first: what broke the prefix, and how many tokens of
    the previous rendered prompt the new one shares (``None`` when the server would not
    render)."""
    out, previous = [], None
    for index, request in enumerate(requests):
        try:
            text = rendered(base, request)
        except OSError:
            text = None
        if index:
            shared = (shared_tokens(base, previous, text)
                      if previous is not None and text is not None else None)
            out.append({"request": index, "stage": rows[index]["stage"],
                        "first_difference": first_difference(requests[index - 1], request),
                        "shared_prefix_tokens": shared})
        previous = text
    return out


def tally(diagnoses: list[dict]) -> dict:
    """How often each kind of break happened, by stage ("first" texts matter most)."""
    counts = Counter((d["stage"], _kind(d["first_difference"])) for d in diagnoses)
    return {f"{stage}: {kind}": n for (stage, kind), n in counts.most_common()}


def _kind(label: str) -> str:
    return label.split(" (")[0] if label.startswith(("history window", "message")) else \
        label.split(": line")[0]
