"""The prompt budget in the server's tokens: a per-model ratio learnt from reported usage.

``[history] max_context_tokens`` is meant in the model server's tokens, but the window is cut
by an estimate (``prompt.build.estimate_tokens``, four characters a token) that is off by a
factor that depends on the model: its tokenizer, its chat template's markup, tool schemas a
template does not render (the server never counts those, so the ratio learns that they are
not sent). After each model turn, the server's ``usage.prompt_tokens`` over our estimate of
the same prompt moves a per-model ratio, an exponentially weighted mean (one odd prompt moves
it little; a new model is learnt within a few texts), clamped to ``[MIN_RATIO, MAX_RATIO]``
so a server reporting nonsense can neither shrink the window to nothing nor open it wide.
The window is then cut at ``max_context_tokens / ratio`` estimated tokens, with the ratio
rounded up to a step of ``STEP``: the running mean moves a little after every turn, and a
budget that moved with it would move the window's start, and so the prompt's cached prefix,
on every text (the prompt layout in ``prompt.build``). Rounding up keeps within the server's budget.

A server that reports no usage leaves the ratio alone (1 until it ever reports). The ratio is
stored per model name, so switching models starts that model's own.
"""

import datetime as dt
import logging
import math

from mediabot.store import db

log = logging.getLogger(__name__)

WEIGHT = 0.3                 # of each new turn's ratio in the running mean
STEP = 0.125                 # the budget moves only when the ratio crosses a step
MIN_RATIO, MAX_RATIO = 0.5, 3.0


def _clamp(ratio: float) -> float:
    return min(MAX_RATIO, max(MIN_RATIO, ratio))


def updated_ratio(previous: float | None, estimated: int, reported: int) -> float:
    """The running ratio after one prompt the server counted as ``reported`` tokens and we
    estimated at ``estimated``; the first sample is taken as it is (clamped)."""
    sample = _clamp(reported / estimated)
    if previous is None:
        return sample
    return _clamp(previous + WEIGHT * (sample - previous))


def estimate_budget(max_tokens: int, ratio: float) -> int:
    """The budget in estimated tokens that is ``max_tokens`` of the server's (the ratio
    rounded up to a ``STEP``, so the budget holds still while the ratio does)."""
    stepped = math.ceil(round(ratio / STEP, 6)) * STEP
    return max(1, round(max_tokens / stepped))


def ratio_for(model: str) -> float:
    """The model's stored ratio, 1.0 (the estimate as it is) before it ever reported usage."""
    row = db.TokenCalibration.get_or_none(db.TokenCalibration.model == model)
    return 1.0 if row is None else row.ratio


def observe(model: str, estimated: int, reported: int | None, now: dt.datetime) -> float:
    """Fold one turn's prompt (our estimate, the server's count) into the model's ratio and
    return the ratio now in force. Nothing is learnt when the server reported no usage or the
    estimate is empty. Raises peewee errors when the database cannot be written."""
    row = db.TokenCalibration.get_or_none(db.TokenCalibration.model == model)
    if not reported or estimated <= 0:
        return 1.0 if row is None else row.ratio
    ratio = updated_ratio(None if row is None else row.ratio, estimated, reported)
    (db.TokenCalibration
     .insert(model=model, ratio=ratio, samples=1, updated_at=now)
     .on_conflict(conflict_target=[db.TokenCalibration.model],
                  update={db.TokenCalibration.ratio: ratio,
                          db.TokenCalibration.samples: db.TokenCalibration.samples + 1,
                          db.TokenCalibration.updated_at: now})
     .execute())
    log.debug("token ratio for %s: %.2f (this prompt %d reported / %d estimated)", model,
              ratio, reported, estimated)
    return ratio
