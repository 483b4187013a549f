"""The simulated Sonarr and Radarr running together on loopback, for demo, eval and tests."""

import datetime as dt

from mediabot.config import ArrConfig
from mediabot.trial.sim.arr import API_KEY, FakeRadarr, FakeSonarr
from mediabot.trial.sim.loopback import LoopbackServer

SONARR_VERSION = "4.0.14.2939"


class Simulation:
    """A fresh library each time: owned, partly downloaded, missing, upcoming and queued
    titles, with dates relative to ``now`` so "airs in two days" stays true."""

    def __init__(self, *, sonarr_version: str = SONARR_VERSION, timeout: float = 5.0,
                 now: dt.datetime | None = None):
        self.now = now or dt.datetime.now(dt.UTC).replace(microsecond=0)
        self.sonarr = FakeSonarr(version=sonarr_version, now=self.now)
        self.radarr = FakeRadarr(now=self.now)
        self.servers = {"sonarr": LoopbackServer(self.sonarr).start(),
                        "radarr": LoopbackServer(self.radarr).start()}
        self.timeout = timeout

    def arr_config(self, kind: str) -> ArrConfig:
        """What ``[sonarr]``/``[radarr]`` would say to reach this simulation."""
        return ArrConfig(url=self.servers[kind].url, api_key=API_KEY,
                         timeout_seconds=self.timeout)

    def has(self, kind: str, external_id: int) -> bool:
        """Whether the library holds the movie (tmdb id) or series (tvdb id) right now."""
        fake, key = (self.radarr, "tmdbId") if kind == "movie" else (self.sonarr, "tvdbId")
        return any(item.get(key) == external_id for item in fake.library)

    def item(self, kind: str, external_id: int) -> dict | None:
        fake, key = (self.radarr, "tmdbId") if kind == "movie" else (self.sonarr, "tvdbId")
        return next((i for i in fake.library if i.get(key) == external_id), None)

    def close(self) -> None:
        for server in self.servers.values():
            server.stop()

    def __enter__(self) -> "Simulation":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
