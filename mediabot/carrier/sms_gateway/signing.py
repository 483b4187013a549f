"""The phone's webhook signature, checked before the body is read (pure; time is passed in).

What the app signs (``PayloadSingingPlugin``): ``X-Signature`` is the lower-case hex of
HMAC-SHA256 keyed with the UTF-8 signing key over **the raw body bytes followed directly by
the ``X-Timestamp`` text** (Unix seconds, decimal, from the phone's clock). The phone signs
each attempt afresh, so a retry carries a new timestamp and a replay of an old request falls
outside the window.

``verify`` answers a ``Verdict``: ``OK``, or why not (no signature, a malformed timestamp, a
timestamp outside the window, a wrong signature). The comparison is constant-time
(``hmac.compare_digest``); a wrong signature and a stale timestamp are told apart only by
which check fails first, the stale one being decided before any HMAC is computed. The window
defaults to 5 minutes either way (the app's docs ask for it; the phone keeps network time).
Within the window a captured request could be posted again: the envelope id dedupes that
(``events.py``), so the window only needs to bound how long one is worth keeping.
"""

import hashlib
import hmac
from enum import StrEnum

WINDOW_SECONDS = 300
SIGNATURE_HEADER = "X-Signature"
TIMESTAMP_HEADER = "X-Timestamp"


class Verdict(StrEnum):
    OK = "ok"
    UNSIGNED = "no X-Signature or X-Timestamp header"
    BAD_TIMESTAMP = "X-Timestamp is not Unix seconds"
    STALE = "X-Timestamp is outside the accepted window (replayed, or the phone's clock is off)"
    FORGED = "X-Signature does not match the body (wrong signing key, or altered)"


def sign(key: str, body: bytes, timestamp: str) -> str:
    """The ``X-Signature`` the phone sends for ``body`` at ``timestamp``."""
    return hmac.new(key.encode("utf-8"), body + timestamp.encode("ascii"),
                    hashlib.sha256).hexdigest()


def verify(key: str, body: bytes, signature: str | None, timestamp: str | None, *,
           now: float, window: float = WINDOW_SECONDS) -> Verdict:
    """Whether the phone signed exactly ``body`` with ``key`` within ``window`` seconds of
    ``now`` (Unix seconds). An empty key verifies nothing (the app never signs with one)."""
    if not signature or not timestamp or not key:
        return Verdict.UNSIGNED
    if not timestamp.isascii() or not timestamp.isdigit():
        return Verdict.BAD_TIMESTAMP
    if abs(now - int(timestamp)) > window:
        return Verdict.STALE
    given = signature.strip().lower()
    if not given.isascii() or not hmac.compare_digest(sign(key, body, timestamp), given):
        return Verdict.FORGED
    return Verdict.OK
