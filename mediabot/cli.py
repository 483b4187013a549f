"""The ``mediabot`` command: serve, chat, demo, eval, check, users (list, add, remove, role)
and history (show, clear).

Logging is configured here, once, to stderr (``ops/logs.py``). This is the one place errors
become what the terminal shows, never a traceback: config problems one line each and exit 2;
a ``Refusal`` its line and exit code; an ``OpsError`` as a ``ClickException``, an
``InvalidValue`` as a ``BadParameter`` (``_Commands`` and ``_Command``).
"""

import contextlib
import logging
import sys
from collections.abc import Iterator
from typing import Any

import click

from mediabot import __version__
from mediabot.carrier.configured import carrier_needs
from mediabot.config import ROLES, Config, ConfigError, load_config, model_needs
from mediabot.ops.errors import InvalidValue, OpsError, Refusal
from mediabot.store import db, migrations

log = logging.getLogger(__name__)
CONFIG_HELP = "Config file (default: $MEDIABOT_CONFIG, else ./config.toml)."
VERBOSE_FLAGS = ("-v", "--verbose")
DAEMON_NEEDS = (carrier_needs, model_needs)   # serve, and check, which checks a config for it


def model_answers(command: str, config: Config) -> None:
    """Go on only when the model server answers, accepts the key and serves the model: a
    command that talks to it must not apologise per text (``Refusal``, exit 1)."""
    from mediabot.ops.model_checks import require_model

    with _quiet_logs(logging.CRITICAL):
        require_model(command, config.llm)


class _Command(click.Command):
    """A command whose ``ops`` errors read as click's own (``ops/errors.py``): raised here,
    inside the command's context, so a bad value gets the command's usage line."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except InvalidValue as exc:
            raise click.BadParameter(str(exc), ctx=ctx, param_hint=exc.param_hint) from None
        except OpsError as exc:
            raise click.ClickException(str(exc)) from None


class _Commands(click.Group):
    """Every command: a config problem is one line each and exit 2, a refusal its line and
    code, a database that cannot be opened one line and exit 1; ``-v`` is taken anywhere
    before ``--`` (``mediabot serve -v`` as well as ``mediabot -v serve``)."""

    command_class = _Command
    group_class = type   # users and history are _Commands too

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        end = args.index("--") if "--" in args else len(args)
        flags = [a for a in args[:end] if a in VERBOSE_FLAGS]
        rest = [a for a in args[:end] if a not in VERBOSE_FLAGS]
        return super().parse_args(ctx, flags[:1] + rest + args[end:])

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except migrations.StorageError as exc:
            raise click.ClickException(str(exc)) from None
        except ConfigError as exc:
            for line in exc.problems:
                click.echo(f"config error: {line}", err=True)
            sys.exit(2)
        except Refusal as exc:
            click.echo(str(exc), err=True)
            sys.exit(exc.exit_code)


@click.group(cls=_Commands)
@click.version_option(__version__, prog_name="mediabot")
@click.option("-v", "--verbose", is_flag=True, help="Log at DEBUG (shows message bodies).")
def main(verbose: bool) -> None:
    """mediabot: manage the household media server by text message."""
    from mediabot.ops.logs import setup_logging

    setup_logging(verbose)


@main.command(short_help="Run the daemon (webhook, worker, jobs).")
@click.option("--config", "config_path", metavar="PATH", help=CONFIG_HELP)
def serve(config_path: str | None) -> None:
    """Run the daemon: the /sms webhook, the worker and the scheduled jobs.

    \b
    Example: mediabot serve --config /etc/mediabot/config.toml
    """
    from mediabot.daemon import StartupError
    from mediabot.daemon import serve as run
    from mediabot.ops.local_checks import require_reachable_url
    from mediabot.ops.storage import require_storage

    config = load_config(config_path, needs=DAEMON_NEEDS)
    require_storage(config.database.path)
    require_reachable_url(config)
    try:
        code = run(config)
    except StartupError as exc:
        click.echo(f"Error: {exc}", err=True)   # as a ClickException prints it
        sys.exit(exc.exit_code)
    sys.exit(code)


@main.command(short_help="Talk to the bot in the terminal.")
@click.option("--config", "config_path", metavar="PATH", help=CONFIG_HELP)
@click.option("--as", "phone", metavar="PHONE",
              help="Talk as this user, who must exist (default: the first admin).")
def chat(config_path: str | None, phone: str | None) -> None:
    """Talk to the bot in the terminal with the real engine, no Twilio needed.

    Only warnings and errors are logged (to stderr), so the dialogue stays readable;
    ``mediabot -v chat`` logs everything.

    \b
    Example: mediabot chat --as +15551234567
    """
    from mediabot.app import build_engine, open_storage
    from mediabot.ops.storage import require_storage
    from mediabot.trial.terminal import chat_member, converse

    config = load_config(config_path)
    require_storage(config.database.path)
    with _quiet_logs(logging.WARNING):
        open_storage(config)
        user = chat_member(phone, config.sms.default_region)   # local mistakes first
        model_answers("chat", config)
        engine = build_engine(config)
        if sys.stdin.isatty():
            click.echo(f"mediabot chat as {user.display_name or user.phone} ({user.role}). "
                       "Ctrl-D to quit.")
        converse(engine, user, _typed(), click.echo)


@main.command(short_help="Try mediabot on a simulated Sonarr/Radarr with your model.")
@click.option("--config", "config_path", metavar="PATH", help=CONFIG_HELP)
@click.option("--serve", "serve_mode", is_flag=True,
              help="Run the whole daemon (with a simulated Twilio) and print a signed curl.")
@click.option("--phone", is_flag=True,
              help="--serve with a simulated Android phone (SMS Gateway) instead of Twilio.")
@click.option("--db", "db_path", metavar="PATH",
              help="Keep the demo conversation in this database (default: a throwaway one).")
@click.option("--member", is_flag=True, help="Talk as a member (members cannot remove media).")
def demo(config_path: str | None, serve_mode: bool, phone: bool, db_path: str | None,
         member: bool) -> None:
    """Talk to your model about a simulated media library: no Twilio, Sonarr or Radarr
    needed. Only [llm] in the config (or MEDIABOT_LLM_* in the environment) is used.

    \b
    Example: mediabot demo --member
    """
    from mediabot.trial import launch
    from mediabot.trial.terminal import converse

    config = launch.trial_config("demo", config_path)
    model_answers("demo", config)
    role = db.Role.MEMBER if member else db.Role.ADMIN
    with launch.demo_household(config, db_path, role) as config:
        click.echo("\n".join(launch.demo_intro(config, kept=bool(db_path))))
        if serve_mode or phone:   # StartupError reads as an OpsError
            sys.exit(launch.serve_demo(config, click.echo, sys.stdin, on_phone=phone))
        with _quiet_logs(logging.WARNING):
            engine, user, hint = launch.open_demo_chat(config, role)
            click.echo(hint)
            converse(engine, user, _typed(), click.echo, show_tools=True)


@main.command("eval", short_help="Score the configured model on household tasks.")
@click.option("--config", "config_path", metavar="PATH", help=CONFIG_HELP)
@click.option("--tasks", "task_names", metavar="NAMES",
              help="Comma-separated task names (default: all).")
@click.option("--repeat", default=3, show_default=True, type=click.IntRange(1, 100),
              help="Runs per task (models are not deterministic).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def eval_command(config_path: str | None, task_names: str | None, repeat: int,
                 as_json: bool) -> None:
    """Run a fixed, versioned set of household tasks against the configured model and a
    simulated library, each scored by what happened (tools, library, replies).

    \b
    Example: mediabot eval --tasks add_movie --repeat 1
    """
    import json

    from mediabot.trial.evaluation import render_table, run_eval
    from mediabot.trial.launch import progress_line, tasks_named, trial_config

    config = trial_config("eval", config_path)
    model_answers("eval", config)
    tasks = tasks_named(task_names)
    with _quiet_logs(logging.ERROR):
        result = run_eval(config, tasks, repeat,
                          lambda *done: click.echo(progress_line(*done), err=True))
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        for line in render_table(result):
            click.echo(line)


@main.command(short_help="Check the config and every server mediabot uses.")
@click.option("--config", "config_path", metavar="PATH", help=CONFIG_HELP)
@click.option("--register-webhooks", is_flag=True, help="Register the phone's missing webhooks.")
def check(config_path: str | None, register_webhooks: bool) -> None:
    """Check the config, database, Sonarr, Radarr, the model, the phone and Twilio; exit 1
    on a FAIL. --register-webhooks: the phone's webhooks at [server] public_url/sms/gateway.

    \b
    Example: mediabot check --config /etc/mediabot/config.toml
    """
    from mediabot.ops.checks import run_checks
    from mediabot.text.check_report import FAIL, summary

    config = load_config(config_path, needs=DAEMON_NEEDS)
    with _quiet_logs(logging.ERROR):   # each problem is already a FAIL line
        lines = run_checks(config, register_webhooks=register_webhooks)
    for line in lines:
        click.echo(line.render())
    click.echo(summary(lines))
    sys.exit(1 if any(line.status == FAIL for line in lines) else 0)


def _quiet_logs(level: int) -> contextlib.AbstractContextManager[None]:
    """Raise mediabot's log level for a command whose output already says it all (not -v)."""
    from mediabot.ops.logs import quiet_logs

    return quiet_logs(level, bool(click.get_current_context().find_root().params.get("verbose")))


def _open_operator_db(config_path: str | None,
                      phone: str | None = None) -> tuple[Config, str]:
    """(config, PHONE in E.164 or "") with the database open, for users/history commands.

    Twilio, Sonarr and Radarr keys are not needed. PHONE is read in [sms] default_region;
    a bad number is a usage error before the database is touched.
    """
    from mediabot.ops.accounts import open_users_db, parse_phone
    from mediabot.ops.storage import require_storage

    group = click.get_current_context().parent   # ``mediabot users --config X list``
    config = load_config(config_path or (group.params.get("config_path") if group else None),
                         require_arr_keys=False)   # never asked: no keys needed
    number = parse_phone(phone, config.sms.default_region) if phone is not None else ""
    require_storage(config.database.path)
    with _quiet_logs(logging.WARNING):
        open_users_db(config)
    return config, number


@main.group(short_help="List, add, remove users and set their roles.")
@click.option("--config", "config_path", metavar="PATH", help=CONFIG_HELP)
def users(config_path: str | None) -> None:
    """List, add and remove the people who may text mediabot, and set their roles."""


@users.command("list", short_help="Every user, with phone, name, role, opt-out.")
@click.option("--config", "config_path", metavar="PATH", help=CONFIG_HELP)
def users_list(config_path: str | None) -> None:
    """Every user: phone, name, role, opted out, and "(config)" for [[users]] entries.

    \b
    Example: mediabot users list
    """
    from mediabot.ops.accounts import roster

    config, _ = _open_operator_db(config_path)
    lines = roster(config)
    for line in lines or ["no users yet; add one with `mediabot users add PHONE --name NAME`"]:
        click.echo(line)


@users.command("add", short_help="Let a phone number text mediabot.")
@click.argument("phone")
@click.option("--name", required=True, help="What mediabot calls them.")
@click.option("--role", type=click.Choice(ROLES), default=db.Role.MEMBER.value, show_default=True)
@click.option("--seerr-user", default="", metavar="ID|EMAIL|NAME",
              help="Their Seerr user, when [seerr] is set: requests are filed as them.")
@click.option("--config", "config_path", metavar="PATH", help=CONFIG_HELP)
def users_add(phone: str, name: str, role: str, seerr_user: str,
              config_path: str | None) -> None:
    """Let PHONE text mediabot.

    \b
    Example: mediabot users add +15551234567 --name Sam --role member --seerr-user sam
    """
    from mediabot.ops.accounts import enrol

    _, number = _open_operator_db(config_path, phone)
    click.echo(enrol(number, name, role, seerr_user))


@users.command("remove", short_help="Remove a user and all stored for them.")
@click.argument("phone")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--config", "config_path", metavar="PATH", help=CONFIG_HELP)
def users_remove(phone: str, yes: bool, config_path: str | None) -> None:
    """Remove PHONE and everything stored for them (messages, requests). Asks first.

    \b
    Example: mediabot users remove +15551234567 --yes
    """
    from mediabot.ops.accounts import count_member_messages, dismiss, lookup_member

    config, number = _open_operator_db(config_path, phone)
    user = lookup_member(number, config)
    if not yes and not click.confirm(f"Remove {user.display_name or number} ({number}) and "
                                     f"their {count_member_messages(user)} stored messages "
                                     "and requests?"):
        click.echo("Nothing removed.")
        return
    _echo_lines(dismiss(config, number))


@users.command("role", short_help="Make a user an admin or a member.")
@click.argument("phone")
@click.argument("role", type=click.Choice(ROLES))
@click.option("--config", "config_path", metavar="PATH", help=CONFIG_HELP)
def users_role(phone: str, role: str, config_path: str | None) -> None:
    """Make PHONE an admin or a member (only admins may delete media).

    \b
    Example: mediabot users role +15551234567 admin
    """
    from mediabot.ops.accounts import change_role

    config, number = _open_operator_db(config_path, phone)
    _echo_lines(change_role(config, number, role))


def _typed() -> Iterator[str]:
    """The lines typed on stdin, with a "you> " prompt before each when it is a terminal."""
    from mediabot.trial.terminal import typed_lines

    return typed_lines(sys.stdin, lambda prompt: click.echo(prompt, nl=False))


def _echo_lines(lines: list[str]) -> None:
    for line in lines:
        click.echo(line, err=line.startswith("warning:"))


@main.group(short_help="Read or clear a user's conversation.")
@click.option("--config", "config_path", metavar="PATH", help=CONFIG_HELP)
def history(config_path: str | None) -> None:
    """Read or clear a user's stored conversation."""


@history.command("show", short_help="A user's recent messages and texts.")
@click.argument("phone")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(min=1),
              help="How many of the newest messages.")
@click.option("--config", "config_path", metavar="PATH", help=CONFIG_HELP)
def history_show(phone: str, limit: int, config_path: str | None) -> None:
    """Print PHONE's recent messages, oldest first, then the texts sent to them and
    what Twilio reported for each (delivered, undelivered 30003, ...).

    \b
    Example: mediabot history show +15551234567 --limit 10
    """
    from mediabot.ops.accounts import show_history

    config, number = _open_operator_db(config_path, phone)
    _echo_lines(show_history(config, number, limit))


@history.command("clear", short_help="Forget a user's conversation.")
@click.argument("phone")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--config", "config_path", metavar="PATH", help=CONFIG_HELP)
def history_clear(phone: str, yes: bool, config_path: str | None) -> None:
    """Forget PHONE's conversation (as if they texted RESET).

    \b
    Example: mediabot history clear +15551234567 --yes
    """
    from mediabot.ops.accounts import clear_member_history, count_member_messages, lookup_member

    config, number = _open_operator_db(config_path, phone)
    user = lookup_member(number, config)
    count = count_member_messages(user)
    if count and not yes and not click.confirm(f"Delete all {count} stored messages of "
                                               f"{number}?"):
        click.echo("Nothing cleared.")
        return
    click.echo(f"cleared {clear_member_history(user)} messages of {number}")


if __name__ == "__main__":  # pragma: no cover
    main()
