"""The figures ``bench/prompt_cache.py`` prints, from the rows its proxy recorded: pure
functions over plain dicts, so ``tests/e2e/test_bench_cache.py`` checks them without a server.

- ``summarise``: one run: the reused share (``cache_n / (cache_n + prompt_n)``, median per
  request and aggregate) at a text's first request, after a tool result, overall (the
  requests a person waits for) and at the prompts read ahead; what the household waits
  for, per text (``waits``): model requests, tokens read and written, the server's own
  seconds, and beside them the read-aheads and the tokens and seconds of every request;
  the new tokens per text (waited for); the genuinely new ones (what even a perfect prefix
  cache must read, over every request, read-aheads included); for a household, the same at
  texts that follow another member's; the cold figures (``cold_prompt``) and the targets
  that apply to the variant.
- ``figures``: per checkout and variant, the median of each figure over the rounds.
- ``compare``: per variant and figure, each checkout's median and its ratio to the first
  checkout's (the baseline's).
"""

from bench.harness import median

# The targets, per variant: (figure, "<=" or ">=", goal). The schemas' target is 1.5 KB on
# the wire; 1,536 bytes. A household at llama-server's defaults (one slot or its own 4)
# should reuse as much as one with its idle slots kept or no host-memory cache.
_HOUSEHOLD = (("first_median", ">=", 0.90), ("tokens_read_per_text_mean", "<=", 350),
              ("requests_per_text", "<=", 1.35))
TARGETS = {
    "solo-20": (("cold_prompt_tokens_median", "<=", 1200),
                ("tokens_read_per_text_mean", "<=", 250),
                ("requests_per_text", "<=", 1.35),
                ("schema_wire_bytes_max", "<=", 1536),
                ("first_median", ">=", 0.90),
                ("overall_aggregate", ">=", 0.90)),
    "household": _HOUSEHOLD,
    "household-p4": _HOUSEHOLD,
    "household-no-idle": _HOUSEHOLD,
    "household-p4-no-idle": _HOUSEHOLD,
    "household-no-ram": (("first_median", ">=", 0.50),),
    "household-slots": (("first_median", ">=", 0.90),),
    "household-slots-no-ram": (("first_median", ">=", 0.50),),
}
# What ``compare`` puts side by side (every numeric figure is in ``figures``).
COMPARED = ("requests_per_text", "read_ahead_per_text", "tokens_read_per_text_mean",
            "tokens_read_per_text_all_mean", "tokens_written_per_text_mean",
            "server_seconds_per_text_mean", "server_seconds_per_text_all_mean",
            "cold_prompt_tokens_median", "cold_prompt_ms_median",
            "schema_wire_bytes_max", "schema_block_tokens_max", "breakdown_system_median",
            "breakdown_tools_block_median", "breakdown_history_median",
            "new_tokens_per_text_median",
            "genuinely_new_tokens_per_text_median", "first_median", "first_aggregate",
            "overall_median", "overall_aggregate", "read_ahead_median",
            "read_ahead_aggregate", "first_after_other_member_median",
            "first_after_other_member_aggregate", "shared_prefix_tokens_across_members_median",
            "prompt_tokens_median", "turn_seconds_median", "requests", "driver_cpu_seconds",
            "server_cpu_seconds")


def share(rows: list[dict]) -> tuple[float | None, float | None]:
    """(median per-request share reused, aggregate share reused) over ``rows``."""
    rows = [r for r in rows if r["cache_n"] is not None and r["prompt_n"] is not None]
    shares = [r["cache_n"] / (r["cache_n"] + r["prompt_n"]) for r in rows
              if r["cache_n"] + r["prompt_n"]]
    total = sum(r["cache_n"] + r["prompt_n"] for r in rows)
    return median(shares), (round(sum(r["cache_n"] for r in rows) / total, 3) if total else None)


def genuinely_new(rows: list[dict], breaks: list[dict]) -> list[int | None]:
    """Per request, the tokens even a perfect cache must evaluate: its prompt minus what it
    shares with the previous request's rendered prompt (``diagnose``), or minus what the
    server did reuse when that is more (it also holds the answer it generated last)."""
    shared = {b["request"]: b["shared_prefix_tokens"] for b in breaks}
    out: list[int | None] = []
    for index, row in enumerate(rows):
        common = shared.get(index, 0) if index else 0
        if common is None or row["prompt_tokens"] is None:
            out.append(None)
            continue
        out.append(max(0, row["prompt_tokens"] - max(common, row["cache_n"] or 0)))
    return out


def per_text(rows: list[dict], texts: list[dict], values: list) -> list:
    """``values`` (one per row) summed over each text's requests."""
    return [sum(v or 0 for r, v in zip(rows, values, strict=True) if r["text"] == t["text"])
            for t in texts if any(r["text"] == t["text"] for r in rows)]


def waits(rows: list[dict], texts: list[dict]) -> dict:
    """What the household waits for, per text (the mean over the texts): model requests,
    tokens read (``prompt_n``) and written (``predicted_n``), and the server's own seconds
    (``prompt_ms`` + ``predicted_ms``), all of the requests a person waits for (``waited``);
    beside them the next prompts read ahead once a reply had gone, and the tokens read and
    seconds of every request, those included (``_all``)."""
    count = len(texts) or None
    waited = [r for r in rows if r["stage"] != "read_ahead"]

    def mean(some: list[dict], value) -> float | None:
        return round(sum(per_text(some, texts, [value(r) for r in some])) / count, 2) \
            if count else None

    def seconds(row: dict) -> float:
        return ((row.get("prompt_ms") or 0) + (row.get("predicted_ms") or 0)) / 1000

    return {"requests_per_text": round(len(waited) / count, 3) if count else None,
            "read_ahead_per_text": round((len(rows) - len(waited)) / count, 3)
            if count else None,
            "tokens_read_per_text_mean": mean(waited, lambda r: r["prompt_n"]),
            "tokens_read_per_text_all_mean": mean(rows, lambda r: r["prompt_n"]),
            "tokens_written_per_text_mean": mean(waited, lambda r: r.get("predicted_n")),
            "server_seconds_per_text_mean": mean(waited, seconds),
            "server_seconds_per_text_all_mean": mean(rows, seconds),
            "own_calls_replaced": sum(1 for r in rows if r.get("own_call"))}


def household(rows: list[dict], breaks: list[dict]) -> dict:
    """At texts whose first request follows another member's request on the slot: the share
    reused, and the tokens the two rendered prompts share (what any one-prompt-per-slot
    cache could keep across people); the same for texts following the same member's."""
    shared = {b["request"]: b["shared_prefix_tokens"] for b in breaks}
    firsts = [r for r in rows if r["stage"] == "first" and r["request"]]
    other = [r for r in firsts if rows[r["request"] - 1].get("member") != r.get("member")]
    same = [r for r in firsts if r not in other]
    other_share, same_share = share(other), share(same)
    return {"first_after_other_member_median": other_share[0],
            "first_after_other_member_aggregate": other_share[1],
            "first_after_same_member_median": same_share[0],
            "first_after_same_member_aggregate": same_share[1],
            "texts_after_other_member": len(other),
            "shared_prefix_tokens_across_members_median":
                median([shared.get(r["request"]) for r in other])}


def summarise(rows: list[dict], texts: list[dict], breaks: list[dict] | None = None,
              variant: str = "", cold: dict | None = None) -> dict:
    waited = [r for r in rows if r["stage"] != "read_ahead"]
    first, after, overall, ahead = (share([r for r in rows if r["stage"] == "first"]),
                                    share([r for r in rows if r["stage"] == "after_tool"]),
                                    share(waited),
                                    share([r for r in rows if r["stage"] == "read_ahead"]))
    new_tokens = per_text(waited, texts, [r["prompt_n"] for r in waited])
    genuine = per_text(rows, texts, genuinely_new(rows, breaks or []))
    result = {"requests": len(rows), "texts": len(texts),
              "first_median": first[0], "first_aggregate": first[1],
              "after_tool_median": after[0], "after_tool_aggregate": after[1],
              "overall_median": overall[0], "overall_aggregate": overall[1],
              "read_ahead_median": ahead[0], "read_ahead_aggregate": ahead[1],
              "new_tokens_per_text_median": median(new_tokens),
              "first_prompt_n_median": median([r["prompt_n"] for r in rows
                                               if r["stage"] == "first"
                                               and r["prompt_n"] is not None]),
              "genuinely_new_tokens_per_text_median": median(genuine) if breaks else None,
              "prompt_tokens_median": median([r["prompt_tokens"] for r in waited]),
              "first_prompt_tokens_median": median([r["prompt_tokens"] for r in rows
                                                    if r["stage"] == "first"]),
              "turn_seconds_median": median([t["turn_seconds"] for t in texts]),
              "prompt_ms_median": median([r["prompt_ms"] for r in waited]),
              **waits(rows, texts)}
    if len({r.get("member", 0) for r in rows}) > 1:
        result.update(household(rows, breaks or []))
    if cold is not None:
        result.update(cold_summary(cold))
    result["targets_met"] = targets_met(result, variant)
    return result


def cold_summary(cold: dict) -> dict:
    """The cold figures flattened for ``summarise`` (the per-request detail stays apart)."""
    schemas = cold.get("schemas") or []
    flat = {key: cold.get(key) for key in ("cold_prompt_tokens_median", "cold_prompt_ms_median",
                                           "cold_read_tokens_median",
                                           "cold_tokens_per_second_median", "cold_reads",
                                           "cold_cache_n_max", "cold_read_matches_rendered")}
    flat.update({f"breakdown_{key}_median": value
                 for key, value in (cold.get("breakdown_median") or {}).items()})
    flat["schema_wire_bytes_max"] = max((s["wire_bytes"] for s in schemas), default=None)
    flat["schema_block_tokens_max"] = max((s["block_tokens"] for s in schemas), default=None)
    flat["schema_json_tokens_max"] = max((s["json_tokens"] or 0 for s in schemas),
                                         default=None)
    return flat


def targets_met(result: dict, variant: str) -> dict:
    """Each of the variant's targets: met (True), missed (False) or not measured (None)."""
    met = {}
    for key, sense, goal in TARGETS.get(variant, ()):
        value = result.get(key)
        met[f"{key} {sense} {goal}"] = None if value is None else (
            value <= goal if sense == "<=" else value >= goal)
    return met


def figures(runs: list[dict]) -> dict:
    """{checkout label: {variant: {figure: median over the rounds}}} for numeric figures."""
    grouped: dict[str, dict[str, list[dict]]] = {}
    for run in runs:
        grouped.setdefault(run["label"], {}).setdefault(run["variant"], []).append(run)
    out: dict[str, dict] = {}
    for label, variants in grouped.items():
        for variant, group in variants.items():
            flat = [{**run["summary"], "driver_cpu_seconds": run["driver_cpu_seconds"],
                     "server_cpu_seconds": run["server_cpu_seconds"]} for run in group]
            keys = [k for k, v in flat[0].items() if isinstance(v, int | float)
                    and not isinstance(v, bool)]
            out.setdefault(label, {})[variant] = {
                key: median([f.get(key) for f in flat]) for key in keys}
    return out


def compare(table: dict, labels: list[str]) -> dict:
    """{variant: {figure: {label: value, ..., "ratio <label>/<baseline>": ...}}}; the first
    label is the baseline. Only the figures in ``COMPARED`` that some checkout has."""
    if len(labels) < 2:
        return {}
    base, out = labels[0], {}
    variants = dict.fromkeys(v for label in labels for v in table.get(label, {}))
    for variant in variants:
        rows = {}
        for key in COMPARED:
            values = {label: table.get(label, {}).get(variant, {}).get(key) for label in labels}
            if all(v is None for v in values.values()):
                continue
            rows[key] = {**values, **{f"ratio {label}/{base}": _ratio(values[label],
                                                                      values[base])
                                      for label in labels[1:]}}
        out[variant] = rows
    return out


def tool_results(requests: list[dict]) -> dict:
    """Per tool, the results the model was shown (each distinct one once): how many, and
    their median and largest size in UTF-8 bytes: what a text's tool round adds to every
    later prompt until the window evicts it."""
    seen: dict[str, set[str]] = {}
    for request in requests:
        for message in request.get("messages") or []:
            if message.get("role") == "tool" and isinstance(message.get("content"), str):
                seen.setdefault(message.get("name") or "?", set()).add(message["content"])
    return {name: {"results": len(contents),
                   "bytes_median": median([len(c.encode()) for c in contents]),
                   "bytes_max": max(len(c.encode()) for c in contents)}
            for name, contents in sorted(seen.items())}


def _ratio(value: float | None, base: float | None) -> float | None:
    return None if value is None or not base else round(value / base, 3)
