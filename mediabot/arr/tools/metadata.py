"""Root folders and quality/language profiles of one server, cached for a short while.

These lists change when the operator edits Sonarr's or Radarr's settings, which is rare, yet
every add needs them; fetched each time, one search-and-add cost nine requests. They are
kept per process (one ``Metadata`` per ``ArrClient``) for ``ttl`` seconds. A setting that
names something the cached list lacks (a profile created a minute ago) refetches once before
it is called unknown, so a stale cache never makes a valid name fail.

The clock is a parameter, so tests age the cache without sleeping.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
TTL_SECONDS = 300.0


class Metadata:
    """``get(key, fetch)`` returns the cached list, or ``fetch()``'s when none or too old."""

    def __init__(self, ttl: float = TTL_SECONDS, clock: Callable[[], float] = time.monotonic):
        self.ttl = ttl
        self.clock = clock
        self._lists: dict[str, tuple[float, list]] = {}
        self._lock = threading.Lock()

    def get(self, key: str, fetch: Callable[[], list]) -> list:
        """The list under ``key``: cached when younger than ``ttl``, else ``fetch()``'s.

        The fetch runs outside the lock: two turns missing at once both fetch, which is
        harmless, and a slow server never blocks a reader of another list.
        """
        cached = self._cached(key)
        return cached if cached is not None else self._fetch(key, fetch)

    def pick(self, key: str, fetch: Callable[[], list],
             choose: Callable[[list], T | None]) -> tuple[T | None, list]:
        """``(choose(items), items)``; when ``choose`` finds nothing in a cached list, it is
        asked once more about a fresh one. None in the answer means not there at all."""
        cached = self._cached(key)
        if cached is not None:
            chosen = choose(cached)
            if chosen is not None:
                return chosen, cached
        items = self._fetch(key, fetch)
        return choose(items), items

    def _cached(self, key: str) -> list | None:
        with self._lock:
            entry = self._lists.get(key)
        if entry is None or self.clock() - entry[0] >= self.ttl:
            return None
        return entry[1]

    def _fetch(self, key: str, fetch: Callable[[], list]) -> list:
        fetched_at = self.clock()
        items = fetch()
        with self._lock:
            self._lists[key] = (fetched_at, items)
        return items

    def clear(self) -> None:
        with self._lock:
            self._lists.clear()
