"""The ``mediabot`` command: serve, chat, demo, eval, check, users (list, add, remove, role)
and history (show, clear).

Logging is configured here, once, to stderr. Config problems end any command with one line
per problem and exit code 2, never a traceback. This is the one place errors become click's:
an ``OpsError`` from ``ops/`` is shown as a ``ClickException``, an ``InvalidValue`` as a
``BadParameter`` (``_Command``).
"""

import contextlib
import logging
import os
import sys
from typing import Any

import click

from mediabot import __version__
from mediabot.config import ROLES, ConfigError, load_config, model_needs, twilio_needs
from mediabot.store import db, migrations

log = logging.getLogger(__name__)
CONFIG_HELP = "Config file (default: $MEDIABOT_CONFIG, else ./config.toml)."
VERBOSE_FLAGS = ("-v", "--verbose")
DAEMON_NEEDS = (twilio_needs, model_needs)   # serve, and check, which checks a config for it
JOURNAL_PRIORITIES = {logging.CRITICAL: 2, logging.ERROR: 3, logging.WARNING: 4,
                      logging.INFO: 6, logging.DEBUG: 7}   # syslog's numbers


class JournalFormatter(logging.Formatter):
    """Under systemd (JOURNAL_STREAM is set) stderr goes to the journal, which stamps each
    line itself and reads a ``<N>`` syslog priority prefix: so no second timestamp, and
    ``journalctl -p warning`` filters by the real level."""

    def __init__(self):
        super().__init__("%(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        priority = JOURNAL_PRIORITIES.get(record.levelno, 6)
        return "\n".join(f"<{priority}>{line}"
                         for line in super().format(record).splitlines() or [""])


def setup_logging(verbose: bool = False, environ=os.environ) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JournalFormatter() if environ.get("JOURNAL_STREAM") else
                         logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, handlers=[handler])
    for noisy in ("arrapi", "urllib3", "httpx", "httpx2", "httpcore", "httpcore2", "openai",
                  "twilio", "werkzeug", "apscheduler"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    # waitress warns "Task queue depth is N" for every request that waits for a thread: in a
    # burst of texts, one line per webhook (thousands a minute), paid while busiest.
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)


def read_config(path: str | None, **kwargs):
    """Load the config or exit 2 with one line per problem."""
    try:
        return load_config(path, **kwargs)
    except ConfigError as exc:
        for line in exc.problems:
            click.echo(f"config error: {line}", err=True)
        sys.exit(2)


def reachable_public_url(config) -> None:
    """Exit 2 with one line when ``public_url`` is still config.example.toml's placeholder:
    Twilio could never reach it, so every text would go unanswered (``check`` fails it too)."""
    from mediabot.ops.local_checks import EXAMPLE_PUBLIC_URL

    if config.server.public_url.rstrip("/") == EXAMPLE_PUBLIC_URL:
        click.echo(f"config error: {config.source}: [server] public_url is still the example's "
                   f"{EXAMPLE_PUBLIC_URL}, which Twilio cannot reach; set it to the https "
                   "address Twilio calls (README: \"Reaching the webhook from home\")", err=True)
        sys.exit(2)


def storage_ready(config) -> None:
    """Exit 2 with one line when the database's folder is missing or running as root would
    create the file the daemon then cannot write (``ops/storage.py``)."""
    from mediabot.ops.storage import effective_uid, storage_problem

    problem = storage_problem(config.database.path, effective_uid())
    if problem:
        click.echo(f"error: {problem}", err=True)
        sys.exit(2)


def model_answers(command: str, llm) -> None:
    """Exit 1 with one line (the URL and why) unless the model server answers, accepts the
    key and serves the model: a command that talks to it must not apologise per text."""
    from mediabot.ops.check_report import FAIL
    from mediabot.ops.model_checks import check_llm
    from mediabot.text.masking import mask_url_secrets, scrub

    with _quiet_logs(logging.CRITICAL):
        line = check_llm(llm)
    if line.status == FAIL:
        url = mask_url_secrets(llm.base_url)
        text = scrub(line.text, [llm.api_key])
        click.echo(f"mediabot {command}: {text if url in text else f'{url}: {text}'}",
                   err=True)
        sys.exit(1)


class _Command(click.Command):
    """A command whose ``ops`` errors read as click's own (``ops/errors.py``): raised here,
    inside the command's context, so a bad value gets the command's usage line."""

    def invoke(self, ctx: click.Context) -> Any:
        from mediabot.ops.errors import InvalidValue, OpsError

        try:
            return super().invoke(ctx)
        except InvalidValue as exc:
            raise click.BadParameter(str(exc), ctx=ctx, param_hint=exc.param_hint) from None
        except OpsError as exc:
            raise click.ClickException(str(exc)) from None


class _Group(click.Group):
    command_class = _Command


class _Commands(click.Group):
    """Every command: a database that cannot be opened is one line and exit 1; ``-v`` is
    taken anywhere before ``--`` (``mediabot serve -v`` as well as ``mediabot -v serve``)."""

    command_class = _Command
    group_class = _Group

    def parse_args(self, ctx, args):
        end = args.index("--") if "--" in args else len(args)
        flags = [a for a in args[:end] if a in VERBOSE_FLAGS]
        rest = [a for a in args[:end] if a not in VERBOSE_FLAGS]
        return super().parse_args(ctx, flags[:1] + rest + args[end:])

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except migrations.StorageError as exc:
            raise click.ClickException(str(exc)) from None


@click.group(cls=_Commands)
@click.version_option(__version__, prog_name="mediabot")
@click.option("-v", "--verbose", is_flag=True, help="Log at DEBUG (shows message bodies).")
def main(verbose: bool) -> None:
    """mediabot: manage the household media server by text message."""
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

    config = read_config(config_path, needs=DAEMON_NEEDS)
    storage_ready(config)
    reachable_public_url(config)
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

    config = read_config(config_path)
    storage_ready(config)
    with _quiet_logs(logging.WARNING):
        open_storage(config)
        user = _chat_user(phone, config.sms.default_region)   # local mistakes first
        model_answers("chat", config.llm)
        engine = build_engine(config)
        if sys.stdin.isatty():
            click.echo(f"mediabot chat as {user.display_name or user.phone} ({user.role}). "
                       "Ctrl-D to quit.")
        _converse(engine, user)


def _converse(engine, user: db.User, show_tools: bool = False) -> None:
    """Read lines from stdin and answer each through the engine, as one user."""
    from mediabot.conversation.incoming import read_text
    from mediabot.conversation.prompt.history import last_message_id
    from mediabot.trial.demo import tool_activity

    for line in _lines(sys.stdin.isatty()):
        text = line.strip()
        if not text:
            continue
        before = last_message_id(user.id) if show_tools else 0
        answer = engine.answer(read_text(user, text, household=engine.config.sms.language))
        for activity in tool_activity(user.id, before) if show_tools else ():
            click.echo(activity)
        if answer.reply:
            click.echo(f"bot> {answer.reply}")
        engine.after_turn(answer)


@main.command(short_help="Try mediabot on a simulated Sonarr/Radarr with your model.")
@click.option("--config", "config_path", metavar="PATH", help=CONFIG_HELP)
@click.option("--serve", "serve_mode", is_flag=True,
              help="Run the whole daemon (with a simulated Twilio) and print a signed curl.")
@click.option("--db", "db_path", metavar="PATH",
              help="Keep the demo conversation in this database (default: a throwaway one).")
@click.option("--member", is_flag=True, help="Talk as a member (members cannot remove media).")
def demo(config_path: str | None, serve_mode: bool, db_path: str | None, member: bool) -> None:
    """Talk to your model about a simulated media library: no Twilio, Sonarr or Radarr
    needed. Only [llm] in the config (or MEDIABOT_LLM_* in the environment) is used.

    \b
    Example: mediabot demo --member
    """
    import tempfile

    from mediabot.trial.demo import NO_MODEL, demo_config, demo_database, model_missing
    from mediabot.trial.sim.stack import Simulation

    config = _demo_source_config(config_path)
    if model_missing(config.llm):
        click.echo(NO_MODEL, err=True)
        sys.exit(2)
    model_answers("demo", config.llm)
    role = db.Role.MEMBER if member else db.Role.ADMIN
    with tempfile.TemporaryDirectory() as tmp, Simulation() as sim:
        config = demo_config(config, sim, demo_database(db_path, tmp), role)
        click.echo(f"mediabot demo: simulated Sonarr {sim.servers['sonarr'].url} and Radarr "
                   f"{sim.servers['radarr'].url}; model {config.llm.model} at "
                   f"{config.llm.base_url}; database {config.database.path}"
                   f"{'' if db_path else ' (thrown away at exit)'}.")
        click.echo("The library: The Office, Severance (season 2 downloading), Slow Horses "
                   "(new episode soon); Dune, Dune: Part Two (downloading), Project Hail Mary "
                   "(releasing soon).")
        if serve_mode:
            sys.exit(_demo_serve(config))
        _demo_chat(config, role)


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

    from mediabot.trial.demo import NO_MODEL, model_missing
    from mediabot.trial.evaluation import render_table, run_eval
    from mediabot.trial.tasks import select

    config = _demo_source_config(config_path)
    if model_missing(config.llm):
        click.echo(NO_MODEL.replace("mediabot demo", "mediabot eval", 1), err=True)
        sys.exit(2)
    model_answers("eval", config.llm)
    try:
        tasks = select([n.strip() for n in task_names.split(",") if n.strip()]
                       if task_names else None)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--tasks") from None

    def progress(attempt, done, total):
        click.echo(f"[{done}/{total}] {attempt.task}: {'pass' if attempt.passed else 'FAIL'} "
                   f"({attempt.seconds:.1f} s)", err=True)

    with _quiet_logs(logging.ERROR):
        result = run_eval(config, tasks, repeat, progress)
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        for line in render_table(result):
            click.echo(line)


def _demo_source_config(config_path: str | None):
    """The config file when there is one; else defaults plus MEDIABOT_* from the environment
    (a newcomer may have nothing but a model URL). Twilio, Sonarr and Radarr are simulated,
    so their settings (still placeholders in a fresh config.toml) are not read."""
    import os

    from mediabot.config import parse_config, resolve_path
    from mediabot.config.load import without_sections

    simulated = ("sonarr", "radarr")
    if resolve_path(config_path).exists():
        return read_config(config_path, replaced=simulated)
    try:
        return parse_config({}, source="<environment>",
                            environ=without_sections(os.environ, simulated))
    except ConfigError as exc:
        for line in exc.problems:
            click.echo(f"config error: {line}", err=True)
        sys.exit(2)


def _demo_chat(config, role: str) -> None:
    from mediabot.app import build_engine, open_storage
    from mediabot.store.users import find_by_phone
    from mediabot.trial.demo import DEMO_PHONE

    with _quiet_logs(logging.WARNING):
        open_storage(config)
        user = find_by_phone(DEMO_PHONE)
        assert user is not None, "demo_config() makes the demo member"
        click.echo(f"You are Sam ({role}). Try: \"what's downloading?\", \"get the new dune\", "
                   "\"delete the office\". Tool calls show as [tool] lines. Ctrl-D to quit.")
        _converse(build_engine(config), user, show_tools=True)


def _demo_serve(config) -> int:
    import threading

    from mediabot.daemon import StartupError
    from mediabot.daemon import serve as run
    from mediabot.trial.demo import SmsStage, demo_port

    port = demo_port(config)
    stage = SmsStage.start(port)
    config = stage.config(config, port)
    click.echo("The daemon answers SMS from Sam; replies arrive at a simulated Twilio and are "
               "printed here as 'SMS to ...'. Text it from another terminal (signed like Twilio):")
    click.echo("  " + stage.curl("what's downloading?"))
    click.echo("or type a text here and press Enter (start it with wa: to send it on "
               "WhatsApp). Ctrl-C stops.")
    stop = threading.Event()
    threading.Thread(target=stage.watch, args=(click.echo, stop), daemon=True).start()
    threading.Thread(target=stage.deliver_lines, args=(sys.stdin, click.echo),
                     daemon=True).start()
    try:
        return run(config)
    except StartupError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        stop.set()
        stage.close()


@main.command(short_help="Check the config and every server mediabot uses.")
@click.option("--config", "config_path", metavar="PATH", help=CONFIG_HELP)
def check(config_path: str | None) -> None:
    """Check the config, database, Sonarr, Radarr, the model and Twilio; exit 1 on a FAIL.

    \b
    Example: mediabot check --config /etc/mediabot/config.toml
    """
    from mediabot.ops.check_report import FAIL, summary
    from mediabot.ops.checks import run_checks

    config = read_config(config_path, needs=DAEMON_NEEDS)
    with _quiet_logs(logging.ERROR):   # each problem is already a FAIL line
        lines = run_checks(config)
    for line in lines:
        click.echo(line.render())
    click.echo(summary(lines))
    sys.exit(1 if any(line.status == FAIL for line in lines) else 0)


@contextlib.contextmanager
def _quiet_logs(level: int):
    """Raise mediabot's log level for a command whose output already says it all (not -v)."""
    logger = logging.getLogger("mediabot")
    old = logger.level
    if not click.get_current_context().find_root().params.get("verbose"):
        logger.setLevel(level)
    try:
        yield
    finally:
        logger.setLevel(old)


def _open_operator_db(config_path: str | None, phone: str | None = None):
    """(config, PHONE in E.164 or None) with the database open, for users/history commands.

    Twilio, Sonarr and Radarr keys are not needed. PHONE is read in [sms] default_region;
    a bad number is a usage error before the database is touched.
    """
    from mediabot.ops.accounts import open_users_db, parse_phone

    config = read_config(config_path or _group_config_path(),
                         require_arr_keys=False)   # never asked: no keys needed
    number = parse_phone(phone, config.sms.default_region) if phone is not None else None
    storage_ready(config)
    with _quiet_logs(logging.WARNING):
        open_users_db(config)
    return config, number


def _group_config_path() -> str | None:
    """``--config`` given to the group (``mediabot users --config X list``), if any."""
    ctx = click.get_current_context().parent
    return ctx.params.get("config_path") if ctx is not None else None


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
@click.option("--config", "config_path", metavar="PATH", help=CONFIG_HELP)
def users_add(phone: str, name: str, role: str, config_path: str | None) -> None:
    """Let PHONE text mediabot.

    \b
    Example: mediabot users add +15551234567 --name Sam --role member
    """
    from mediabot.ops.accounts import enrol

    _, number = _open_operator_db(config_path, phone)
    click.echo(enrol(number, name, role))


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


def _lines(interactive: bool):
    while True:
        if interactive:
            click.echo("you> ", nl=False)
        line = sys.stdin.readline()
        if not line:
            return
        yield line


def _chat_user(phone: str | None, region: str) -> db.User:
    """``--as PHONE`` (an existing user), else the first admin, else a stand-in.

    An unknown ``--as`` number is refused rather than added: a user row is what lets a
    number text the daemon, so trying the chat must never grant that silently.
    """
    from mediabot.ops.accounts import parse_phone
    from mediabot.store.users import find_by_phone, first_admin_or_operator

    if phone:
        number = parse_phone(phone, region, param_hint="--as")
        user = find_by_phone(number)
        if user is None:
            raise click.ClickException(
                f"{number} is not a user, so there is nobody to chat as; add them first with "
                f"`mediabot users add {number} --name NAME`, or leave out --as to chat as "
                "the first admin")
        return user
    return first_admin_or_operator()


if __name__ == "__main__":  # pragma: no cover
    main()
