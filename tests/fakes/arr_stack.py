"""Both fakes on loopback plus real ArrClients pointed at them, for tests and the bench."""

import contextlib
import datetime as dt
import json
import socket
import threading
from dataclasses import replace

from mediabot.arr.tools import ArrClient, ToolContext, get_tool, run_tool
from mediabot.config import ArrConfig
from mediabot.trial.sim.arr import API_KEY
from mediabot.trial.sim.stack import SONARR_VERSION, Simulation


class ArrStack(Simulation):
    """The simulation, plus: ``context()`` builds a ToolContext on it and collects its
    ``record_request`` calls in ``recorded``; ``down``/``up`` switch a server off and on."""

    def __init__(self, *, sonarr_version: str = SONARR_VERSION, timeout: float = 2.0,
                 now: dt.datetime | None = None):
        super().__init__(sonarr_version=sonarr_version, timeout=timeout, now=now)
        self.recorded: list[tuple[str, int, str]] = []

    def config(self, kind: str, **changes) -> ArrConfig:
        return replace(self.arr_config(kind), **changes)

    def toml(self) -> str:
        """The [sonarr] and [radarr] tables of a config file pointed at this simulation."""
        return "".join(f'[{kind}]\nurl = "{self.servers[kind].url}"\napi_key = "{API_KEY}"\n'
                       for kind in ("sonarr", "radarr"))

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

    def _record(self, service: str, external_id: int, title: str, seasons: int = 0,
                added: bool = False) -> None:
        self.recorded.append((service, external_id, title))

    def close(self) -> None:
        stop_all(self.servers.values())

    def down(self, kind: str) -> None:
        self.servers[kind].stop()

    def up(self, kind: str) -> None:
        server = self.servers[kind]
        server.start(port=server.port)


def stop_all(servers) -> None:
    """Stop loopback servers at once, and knock on each so its serving loop sees the stop now
    rather than at its next poll (50 ms, which every test that starts a server would pay)."""
    stops = [threading.Thread(target=server.stop) for server in servers]
    for stop in stops:
        stop.start()
    for server in servers:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", server.port),
                                                                    timeout=0.5):
            pass
    for stop in stops:
        stop.join()


def call_tool(ctx: ToolContext, name: str, **arguments) -> dict:
    """Run a tool the way the engine does (JSON string in, JSON string out), decoded."""
    return json.loads(run_tool(get_tool(name), ctx, json.dumps(arguments)).for_model())
