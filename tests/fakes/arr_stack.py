"""Both fakes on loopback plus real ArrClients pointed at them, for tests and the bench."""

import datetime as dt
import json
from dataclasses import replace

from mediabot.config import ArrConfig
from mediabot.tools import ArrClient, ToolContext, get_tool, run_tool
from mediabot.sim.arr import API_KEY, FakeRadarr, FakeSonarr
from mediabot.sim.loopback import LoopbackServer


class ArrStack:
    """``sonarr``/``radarr`` are the fakes; ``context()`` builds a ToolContext on them and
    collects its ``record_request`` calls in ``recorded``."""

    def __init__(self, *, sonarr_version: str = "4.0.14.2939", timeout: float = 2.0,
                 now: dt.datetime | None = None):
        self.now = now or dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
        self.sonarr = FakeSonarr(version=sonarr_version, now=self.now)
        self.radarr = FakeRadarr(now=self.now)
        self.servers = {"sonarr": LoopbackServer(self.sonarr).start(),
                        "radarr": LoopbackServer(self.radarr).start()}
        self.timeout = timeout
        self.recorded: list[tuple[str, int, str]] = []

    def config(self, kind: str, **changes) -> ArrConfig:
        base = ArrConfig(url=self.servers[kind].url, api_key=API_KEY,
                         timeout_seconds=self.timeout)
        return replace(base, **changes)

    def client(self, kind: str, **changes) -> ArrClient:
        return ArrClient(kind, self.config(kind, **changes))

    def context(self, role: str = "member", *, sonarr=True, radarr=True, **changes) -> ToolContext:
        """``sonarr``/``radarr``: True (a fresh client), False (not configured) or a client."""
        def pick(kind, value):
            if value is True:
                return self.client(kind, **changes)
            return value or None
        return ToolContext(sonarr=pick("sonarr", sonarr), radarr=pick("radarr", radarr),
                           user_id=7, role=role, record_request=self._record,
                           clock=lambda: self.now)

    def _record(self, service: str, external_id: int, title: str) -> None:
        self.recorded.append((service, external_id, title))

    def down(self, kind: str) -> None:
        self.servers[kind].stop()

    def up(self, kind: str) -> None:
        server = self.servers[kind]
        server.start(port=server.port)

    def close(self) -> None:
        for server in self.servers.values():
            server.stop()


def call_tool(ctx: ToolContext, name: str, **arguments) -> dict:
    """Run a tool the way the engine does (JSON string in, JSON string out), decoded."""
    return json.loads(run_tool(get_tool(name), ctx, json.dumps(arguments)))
