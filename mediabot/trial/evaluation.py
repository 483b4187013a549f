"""``mediabot eval``: run the household tasks against the configured model, score them.

Every attempt gets a fresh simulated library and a fresh database, and talks to the model
through the real engine (the same prompt, tools and confirmation rules as the daemon). A
model is not deterministic, so each task runs ``repeat`` times and the table shows its pass
rate, with the model calls, the prompt tokens the server reported, our own estimate of them
(4 characters a token, what ``[history] max_context_tokens`` is counted in) and the latency.
"""

import json
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

from mediabot.app import build_services, open_storage
from mediabot.arr.tools import current_arguments, current_name
from mediabot.config import Config
from mediabot.conversation import confirmations as confirm
from mediabot.conversation import history
from mediabot.conversation.engine import Engine
from mediabot.conversation.prompt.build import estimate_tokens
from mediabot.model import calibration
from mediabot.model.chat import ChatModel, Completion
from mediabot.store import db, users
from mediabot.trial.demo import DEMO_PHONE, demo_config, messages_since
from mediabot.trial.sim.stack import Simulation
from mediabot.trial.tasks import EVERY_STEP, VERSION, Seen, Task


@dataclass
class ModelCall:
    estimated_tokens: int
    reported_tokens: int | None
    seconds: float
    cached_tokens: int | None = None


class RecordingModel:
    """Wraps the engine's model: every call's prompt estimate, reported usage and time."""

    def __init__(self, model: ChatModel) -> None:
        self._model = model
        self.calls: list[ModelCall] = []

    def complete(self, messages: list[dict], tools: list[dict] | None = None,
                 **kwargs: Any) -> Completion:
        """The wrapped call; a failed one is counted too, with no reported usage."""
        started, reported, cached = time.monotonic(), None, None
        estimate = estimate_tokens(
            messages + ([{"role": "system", "content": json.dumps(tools)}] if tools else []))
        try:
            completion = self._model.complete(messages, tools, **kwargs)
            reported, cached = completion.prompt_tokens, completion.cached_tokens
            return completion
        finally:
            self.calls.append(ModelCall(estimate, reported, time.monotonic() - started,
                                        cached))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


@dataclass
class Attempt:
    task: str
    passed: bool
    failures: list[str]
    model_calls: int
    estimated_tokens: int
    reported_tokens: int | None      # the server's count over the calls it answered
    estimated_answered: int          # our estimate over those same calls
    seconds: float
    cached_tokens: int | None = None  # of reported_tokens, reused from the server's cache
    replies: list[str] = field(default_factory=list)
    calibrated_answered: float = 0.0  # the estimate times the ratio learnt before each call
    ratio: float | None = None        # the server's tokens per estimated one, learnt so far


def run_attempt(task: Task, config: Config, workdir: Path, index: int,
                ratio: float | None = None) -> Attempt:
    """One run of ``task`` on a fresh library and database; a model failure is a failed
    attempt (its apology is the reply), never an exception. ``ratio`` is what the earlier
    attempts taught the calibration (``calibration.updated_ratio``)."""
    started = time.monotonic()
    with Simulation() as sim:
        path = workdir / f"{task.name}-{index}.db"
        cfg = demo_config(config, sim, str(path), role=task.role)
        open_storage(cfg)
        services = build_services(cfg)
        model = RecordingModel(services.model)
        services.model = cast(ChatModel, model)   # a wrapper that answers as the model does
        engine = Engine(services)
        user = users.find_by_phone(DEMO_PHONE)
        assert user is not None, "demo_config() makes the demo member"
        known = _known_titles(sim)
        failures, replies = [], []
        for number, step in enumerate(task.steps, 1):
            before, asked = history.last_message_id(user.id), len(model.calls)
            reply = engine.handle(user.id, step.text)
            replies.append(reply)
            seen = Seen(reply=reply, calls=_calls_since(user.id, before), sim=sim,
                        pending=confirm.find_pending(user.id) is not None,
                        known_titles=known, model_calls=len(model.calls) - asked,
                        tool_rounds=_tool_rounds_since(user.id, before))
            failures += [f"step {number}: {problem}" for check in step.checks + EVERY_STEP
                         if (problem := check(seen))]
        db.database.close()
    answered = [c for c in model.calls if c.reported_tokens is not None]
    ratio, calibrated = _calibrate(answered, ratio)
    return Attempt(task=task.name, passed=not failures, failures=failures,
                   model_calls=len(model.calls),
                   estimated_tokens=sum(c.estimated_tokens for c in model.calls),
                   reported_tokens=(sum(c.reported_tokens or 0 for c in answered)
                                    if answered else None),
                   estimated_answered=sum(c.estimated_tokens for c in answered),
                   seconds=time.monotonic() - started, replies=replies,
                   cached_tokens=_cached(model.calls), calibrated_answered=calibrated,
                   ratio=ratio)


def _calibrate(answered: list[ModelCall], ratio: float | None) -> tuple[float | None, float]:
    """Each answered call's estimate as the calibrated budget counts it (times the ratio
    learnt from the calls before it), and the ratio after them all."""
    calibrated = 0.0
    for call in answered:
        calibrated += call.estimated_tokens * (ratio or 1.0)
        ratio = calibration.updated_ratio(ratio, max(1, call.estimated_tokens),
                                          call.reported_tokens or 0)
    return ratio, calibrated


def _cached(calls: list[ModelCall]) -> int | None:
    """Cached prompt tokens over the calls that reported them; None when none did."""
    reported = [c.cached_tokens for c in calls if c.cached_tokens is not None]
    return sum(reported) if reported else None


def run_eval(config: Config, tasks: tuple[Task, ...], repeat: int,
             progress: Callable[[Attempt, int, int], None] | None = None) -> dict[str, Any]:
    """Every task ``repeat`` times; the result as plain data (``--json`` prints it)."""
    attempts: list[Attempt] = []
    with tempfile.TemporaryDirectory() as tmp:
        for task in tasks:
            for index in range(repeat):
                attempt = run_attempt(task, config, Path(tmp), index,
                                      attempts[-1].ratio if attempts else None)
                attempts.append(attempt)
                if progress:
                    progress(attempt, len(attempts), len(tasks) * repeat)
    rows = [_row(task, [a for a in attempts if a.task == task.name]) for task in tasks]
    return {"version": VERSION, "model": config.llm.model, "base_url": config.llm.base_url,
            "repeat": repeat, "tasks": rows, "total": _total(attempts),
            "attempts": [asdict(a) for a in attempts]}


def _row(task: Task, attempts: list[Attempt]) -> dict:
    return {"task": task.name, "about": task.about, **_total(attempts),
            "failures": sorted({f for a in attempts for f in a.failures})}


def _total(attempts: list[Attempt]) -> dict:
    estimated = sum(a.estimated_tokens for a in attempts)
    reported = [a.reported_tokens for a in attempts if a.reported_tokens is not None]
    reported_sum = sum(reported) if reported else None
    compared = sum(a.estimated_answered for a in attempts if a.reported_tokens is not None)
    calibrated = sum(a.calibrated_answered for a in attempts if a.reported_tokens is not None)
    return {"runs": len(attempts), "passed": sum(a.passed for a in attempts),
            "pass_rate": round(sum(a.passed for a in attempts) / len(attempts), 3)
            if attempts else 0.0,
            "model_calls": round(statistics.mean(a.model_calls for a in attempts), 2)
            if attempts else 0,
            "prompt_tokens": reported_sum, "estimated_tokens": estimated,
            "cached_tokens": _cached_total(attempts),
            # over the calls the server reported usage for (a timed-out call reports none)
            "estimate_ratio": round(compared / reported_sum, 2) if reported_sum else None,
            # the server's count over the estimate, as it is and as the budget calibrates it
            "real_ratio": round(reported_sum / compared, 2) if reported_sum and compared
            else None,
            "calibrated_ratio": round(reported_sum / calibrated, 2) if reported_sum and calibrated
            else None,
            "median_seconds": round(statistics.median(a.seconds for a in attempts), 2)
            if attempts else 0.0}


def _cached_total(attempts: list[Attempt]) -> int | None:
    cached = [a.cached_tokens for a in attempts if a.cached_tokens is not None]
    return sum(cached) if cached else None


def _cache_line(total: dict) -> str:
    """How much of the prompts the server read from its cache (a local server that keeps
    it answers much sooner; docs: "Local models: keep the prompt cache")."""
    cached, prompt = total.get("cached_tokens"), total.get("prompt_tokens")
    if cached is None or not prompt:
        return "cached: n/a (the server reports no usage.prompt_tokens_details.cached_tokens)"
    return (f"cached: {cached} of {prompt} prompt tokens came from the server's cache "
            f"({cached / prompt:.0%})")


def _calibration_line(total: dict) -> str:
    """The server's tokens over the estimate, before and after the per-model calibration
    the prompt budget uses (mediabot.model.calibration)."""
    before, after = total.get("real_ratio"), total.get("calibrated_ratio")
    if before is None or after is None:
        return "real/estimate: n/a (the server reports no usage.prompt_tokens)"
    return (f"real/estimate: {before:.2f} before calibration, {after:.2f} after (the prompt "
            "budget is kept in the server's tokens with the ratio learnt per model)")


def render_table(result: dict) -> list[str]:
    """The result as a fixed-width table, one line per task and a total."""
    header = (f"{'task':<22} {'pass':>7} {'calls':>6} {'prompt tok':>10} {'est/real':>8} "
              f"{'median s':>8}")
    lines = [f"mediabot eval {result['version']}: {result['model']} at {result['base_url']}, "
             f"{result['repeat']} run(s) per task", header, "-" * len(header)]
    for row in result["tasks"] + [{"task": "TOTAL", **result["total"]}]:
        if row["task"] == "TOTAL":
            lines.append("-" * len(header))
        tokens = "n/a" if row["prompt_tokens"] is None else str(row["prompt_tokens"])
        ratio = "n/a" if row["estimate_ratio"] is None else f"{row['estimate_ratio']:.2f}"
        lines.append(f"{row['task']:<22} {row['passed']:>3}/{row['runs']:<3} "
                     f"{row['model_calls']:>6} {tokens:>10} {ratio:>8} {row['median_seconds']:>8}")
    failing = [(row["task"], f) for row in result["tasks"] for f in row["failures"]]
    if failing:
        lines.append("")
        lines += [f"{task}: {failure}" for task, failure in failing]
    lines.append("")
    lines.append(_cache_line(result["total"]))
    lines.append(_calibration_line(result["total"]))
    lines.append("est/real: our 4-characters-a-token estimate over the server's prompt tokens "
                 "(above 1 we overcount; the budget corrects it from what the server reports).")
    return lines


def _known_titles(sim: Simulation) -> frozenset[tuple[str, int]]:
    items = (sim.sonarr.library + sim.sonarr.catalog + sim.radarr.library + sim.radarr.catalog)
    return frozenset((item["title"].lower(), item["year"]) for item in items
                     if item.get("title") and item.get("year"))


def _tool_rounds_since(user_id: int, after_id: int) -> int:
    """The model's answers since ``after_id`` that were tool calls (one request each)."""
    return sum(bool(message.get("tool_calls")) for message in messages_since(user_id, after_id))


def _calls_since(user_id: int, after_id: int) -> list[tuple[str, dict]]:
    """The calls made since ``after_id``, by the tools' current names and in the arguments'
    current shape (a call by a former name ran the tool it was merged into, with its
    arguments as that tool takes them)."""
    calls = []
    for message in messages_since(user_id, after_id):
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except ValueError:
                arguments = {}
            name = current_name(function.get("name") or "")
            calls.append((name, current_arguments(name, arguments)
                          if isinstance(arguments, dict) else {}))
    return calls
