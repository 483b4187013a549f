"""The ``mediabot`` command: serve, chat, check, users, history.

Logging is configured here, once, to stderr. Config problems end any command with one line
per problem and exit code 2, never a traceback.
"""

import logging
import sys

import click

from . import __version__, db
from .config import ConfigError, load_config

log = logging.getLogger(__name__)
CONFIG_HELP = "Config file (default: $MEDIABOT_CONFIG, else ./config.toml)."


def setup_logging(verbose: bool = False) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for noisy in ("arrapi", "urllib3", "httpx", "httpcore", "openai", "twilio", "werkzeug"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def read_config(path: str | None, **kwargs):
    """Load the config or exit 2 with one line per problem."""
    try:
        return load_config(path, **kwargs)
    except ConfigError as exc:
        for line in exc.problems:
            click.echo(f"config error: {line}", err=True)
        sys.exit(2)


@click.group()
@click.version_option(__version__, prog_name="mediabot")
@click.option("-v", "--verbose", is_flag=True, help="Log at DEBUG (shows message bodies).")
def main(verbose: bool) -> None:
    """mediabot: manage the household media server by text message."""
    setup_logging(verbose)


@main.command()
@click.option("--config", "config_path", metavar="PATH", help=CONFIG_HELP)
def serve(config_path: str | None) -> None:
    """Run the daemon: the /sms webhook, the worker and the scheduled jobs."""
    from .daemon import serve as run

    config = read_config(config_path)
    sys.exit(run(config))


@main.command()
@click.option("--config", "config_path", metavar="PATH", help=CONFIG_HELP)
@click.option("--as", "phone", metavar="PHONE", help="Talk as this user (default: first admin).")
def chat(config_path: str | None, phone: str | None) -> None:
    """Talk to the bot in the terminal with the real engine, no Twilio needed."""
    from .app import build_engine, open_storage

    config = read_config(config_path, require_twilio=False)
    open_storage(config)
    user = _chat_user(phone)
    engine = build_engine(config)
    interactive = sys.stdin.isatty()
    if interactive:
        click.echo(f"mediabot chat as {user.display_name or user.phone} ({user.role}). "
                   "Ctrl-D to quit.")
    for line in _lines(interactive):
        text = line.strip()
        if not text:
            continue
        reply = engine.handle(user.id, text)
        if reply:
            click.echo(f"bot> {reply}")
        engine.after_turn(user.id)


def _lines(interactive: bool):
    while True:
        if interactive:
            click.echo("you> ", nl=False)
        line = sys.stdin.readline()
        if not line:
            return
        yield line


def _chat_user(phone: str | None) -> db.User:
    from .phones import normalise_phone

    if phone:
        try:
            phone = normalise_phone(phone)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--as") from None
        user, _ = db.User.get_or_create(phone=phone, defaults={"role": "member"})
        return user
    user = (db.User.select().order_by((db.User.role != "admin"), db.User.id).first()
            or db.User.get_or_create(phone="+10000000000",
                                     defaults={"display_name": "Operator", "role": "admin"})[0])
    return user


if __name__ == "__main__":  # pragma: no cover
    main()
