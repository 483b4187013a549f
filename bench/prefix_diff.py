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
    k = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), None)
    if k is None:
        return "prefix intact (messages appended)" if len(new) >= len(old) else "prompt shorter"
    if k == 0 and old[0].get("role") == new[0].get("role") == "system":
        return "system message: " + _changed_line(old[0].get("content"), new[0].get("content"))
    return _history_change(old, new, k)


def every_difference(before: dict, after: dict) -> list[str]:
    """All the parts that changed, not only the first: the first difference hides the
    later ones (a new clock line hides a new pruned line and a sliding window)."""
    old, new = before.get("messages") or [], after.get("messages") or []
    found = ["tool schemas"] if before.get("tools") != after.get("tools") else []
    if old and new and old[0].get("role") == new[0].get("role") == "system":
        found += _system_parts(old[0].get("content") or "", new[0].get("content") or "")
        old, new = old[1:], new[1:]
    if new[:len(old)] != old:
        k = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), len(new))
        found.append(_history_change(old, new, k, 1) if k < len(new) else "history shorter")
    return found


def _system_parts(old: str, new: str) -> list[str]:
    """Which paragraphs of the system message changed: the clock line, the pruned-context
    paragraph, or another one (named by its first words)."""
    olds, news = old.split("\n\n"), new.split("\n\n")
    changed = [p for p in news if p not in olds] + [p for p in olds if p not in news]
    kinds = {"clock line" if p.startswith(CLOCK_MARK) else
             "pruned-context paragraph" if p.startswith("Earlier messages were pruned") else
             f"paragraph {p[:40]!r}" for p in changed}
    return sorted(f"system: {kind}" for kind in kinds)


def _changed_line(old: str | None, new: str | None) -> str:
    old_lines, new_lines = (old or "").split("\n"), (new or "").split("\n")
    for a, b in zip(old_lines, new_lines, strict=False):
        if a != b:
            return "clock line" if a.startswith(CLOCK_MARK) else f"line {a[:50]!r} -> {b[:50]!r}"
    return "lines added" if len(new_lines) > len(old_lines) else "lines removed"


def _history_change(old: list[dict], new: list[dict], k: int, offset: int = 0) -> str:
    """The window slid (the new k-th message is an older request's later one), a pruned or
    summary note appeared, or a message was rewritten."""
    dropped = next((j - k for j in range(k + 1, len(old)) if old[j] == new[k]), None)
    if dropped:
        return f"history window slid at message {k + offset} ({dropped} oldest dropped)"
    role = new[k].get("role")
    content = str(new[k].get("content") or "")
    if k == 0 and role == "user" and content.startswith("[") and content.endswith("]"):
        return "person part (name, language, the pruned line or summary, notes)"
    return f"message {k + offset} ({role}) differs: {content[:60]!r}"


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
    pairs = enumerate(zip(old, new, strict=False))
    n = next((i for i, (a, b) in pairs if a != b), min(len(old), len(new)))
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
                        "every_difference": every_difference(requests[index - 1], request),
                        "shared_prefix_tokens": shared})
        previous = text
    return out


def tally(diagnoses: list[dict]) -> dict:
    """How often each kind of break happened, by stage ("first" texts matter most)."""
    first = Counter((d["stage"], _kind(d["first_difference"])) for d in diagnoses)
    every = Counter((d["stage"], _kind(part)) for d in diagnoses for part in d["every_difference"])
    return {"first": {f"{stage}: {kind}": n for (stage, kind), n in first.most_common()},
            "every": {f"{stage}: {kind}": n for (stage, kind), n in every.most_common()}}


def _kind(label: str) -> str:
    return label.split(" (")[0] if label.startswith(("history window", "message")) else \
        label.split(": line")[0]
