"""How ``mediabot demo`` and ``mediabot eval`` start: the config without the simulated
servers, the simulation and the demo database around a run, the demo's chat and its
``--serve``, and the eval's task list and progress.

The command line calls these and only prints and exits; what they print goes through the
``echo`` they are given. A config problem is a ``ConfigError``, a daemon that cannot start
a ``StartupError``, as anywhere else.
"""

import contextlib
import os
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping

from mediabot.app import build_engine, open_storage
from mediabot.config import Config, load_config, parse_config, resolve_path
from mediabot.config.load import without_sections
from mediabot.conversation.engine import Engine
from mediabot.daemon import serve
from mediabot.ops.errors import InvalidValue, Refusal
from mediabot.store import db
from mediabot.store.users import find_by_phone
from mediabot.trial.demo import (
    DEMO_PHONE,
    NO_MODEL,
    Echo,
    SmsStage,
    demo_config,
    demo_database,
    demo_port,
    model_missing,
)
from mediabot.trial.evaluation import Attempt
from mediabot.trial.phone_stage import PhoneStage
from mediabot.trial.sim.stack import Simulation
from mediabot.trial.tasks import Task, select

SIMULATED = ("sonarr", "radarr")   # sections a trial replaces: neither read nor checked
LIBRARY = ("The library: The Office, Severance (season 2 downloading), Slow Horses (new "
           "episode soon); Dune, Dune: Part Two (downloading), Project Hail Mary (releasing "
           "soon).")


def trial_config(command: str, config_path: str | None,
                 environ: Mapping[str, str] = os.environ) -> Config:
    """The config file when there is one; else defaults plus MEDIABOT_* from the environment
    (a newcomer may have nothing but a model URL). Twilio, Sonarr and Radarr are simulated,
    so their settings (still placeholders in a fresh config.toml) are not read.

    Raises ConfigError, or a ``Refusal`` (exit 2) saying what to set when ``[llm]`` is
    still the unconfigured default: ``command`` (demo, eval) needs nothing else."""
    if resolve_path(config_path, environ).exists():
        config = load_config(config_path, replaced=SIMULATED)
    else:
        config = parse_config({}, source="<environment>",
                              environ=without_sections(environ, SIMULATED))
    if model_missing(config.llm):
        raise Refusal(NO_MODEL.replace("mediabot demo", f"mediabot {command}", 1), 2)
    return config


@contextlib.contextmanager
def demo_household(config: Config, db_path: str | None, role: str) -> Iterator[Config]:
    """``config`` pointed at a running simulation and the demo database (``db_path``, else
    a throwaway one), with Sam as ``role``; both end with the block."""
    with tempfile.TemporaryDirectory() as tmp, Simulation() as sim:
        yield demo_config(config, sim, demo_database(db_path, tmp), role)


def demo_intro(config: Config, kept: bool) -> list[str]:
    """What the demo is talking to, and the library it holds."""
    sonarr, radarr = config.sonarr, config.radarr
    assert sonarr is not None and radarr is not None, "demo_household() sets both"
    return [f"mediabot demo: simulated Sonarr {sonarr.url} and Radarr {radarr.url}; model "
            f"{config.llm.model} at {config.llm.base_url}; database {config.database.path}"
            f"{'' if kept else ' (thrown away at exit)'}.", LIBRARY]


def open_demo_chat(config: Config, role: str) -> tuple[Engine, db.User, str]:
    """The demo database opened with Sam in it, the engine Sam talks to, and the line that
    tells the person at the terminal what to try."""
    open_storage(config)
    user = find_by_phone(DEMO_PHONE)
    assert user is not None, "demo_config() makes the demo member"
    hint = (f"You are Sam ({role}). Try: \"what's downloading?\", \"get the new dune\", "
            "\"delete the office\". Tool calls show as [tool] lines. Ctrl-D to quit.")
    return build_engine(config), user, hint


def serve_demo(config: Config, echo: Echo, typed: Iterable[str], on_phone: bool = False) -> int:
    """Run the whole daemon against a simulated Twilio (or, ``on_phone``, a simulated
    Android phone as its only carrier) until it stops; its exit code.

    Prints how to text it (with Twilio, a signed curl that plays Twilio); each line of
    ``typed`` goes as Sam's text, and each text the daemon sends is echoed. Raises
    ``StartupError`` as ``serve`` does.
    """
    port = demo_port(config)
    stage: SmsStage | PhoneStage = PhoneStage.start() if on_phone else SmsStage.start(port)
    config = stage.config(config, port)
    for line in stage.banner():
        echo(line)
    stop = threading.Event()
    threading.Thread(target=stage.watch, args=(echo, stop), daemon=True).start()
    threading.Thread(target=stage.deliver_lines, args=(typed, echo), daemon=True).start()
    try:
        return serve(config)
    finally:
        stop.set()
        stage.close()


def tasks_named(names: str | None) -> tuple[Task, ...]:
    """The tasks of ``--tasks``, a comma-separated list (all when None); an ``InvalidValue``
    of ``--tasks`` names an unknown one."""
    try:
        return select([n.strip() for n in names.split(",") if n.strip()] if names else None)
    except ValueError as exc:
        raise InvalidValue(str(exc), "--tasks") from None


def progress_line(attempt: Attempt, done: int, total: int) -> str:
    return (f"[{done}/{total}] {attempt.task}: {'pass' if attempt.passed else 'FAIL'} "
            f"({attempt.seconds:.1f} s)")
