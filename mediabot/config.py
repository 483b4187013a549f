"""Configuration: one TOML file plus ``MEDIABOT_<SECTION>_<KEY>`` environment overrides.

The file is read with ``tomllib`` into frozen dataclasses. A secret may instead be named by
a file holding it (``auth_token_file = "/run/secrets/..."`` or
``MEDIABOT_TWILIO_AUTH_TOKEN_FILE``), as containers pass secrets, so every command reads the
secret the daemon reads. Every problem found becomes one line of a single ``ConfigError``
naming the file, the key, the bad value and the fix, so an operator fixes everything in one
pass. Unknown sections and keys are errors: a typo must not be silently ignored.
"""

import dataclasses
import datetime as dt
import logging
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from mediabot.store.db import Role
from mediabot.text.envfile import parse_env_file
from mediabot.text.language import problem as language_problem
from mediabot.text.localtime import zone_named
from mediabot.text.masking import mask_url_secrets
from mediabot.text.phones import (
    CHANNELS,
    DEFAULT_REGION,
    E164,
    is_region,
    normalise_phone,
    split_channel,
)

log = logging.getLogger(__name__)
DEFAULT_PATH = "config.toml"
ENV_PATH = "MEDIABOT_CONFIG"
ENV_PREFIX = "MEDIABOT_"
ENV_FILE = "env"   # beside the config: MEDIABOT_*=... lines, systemd's EnvironmentFile=
ACCENTS = ("fold", "keep", "")   # "": the language's default (text.sms.accents_for)
ROLES = tuple(role.value for role in Role)   # plain strings, for click.Choice
SECRET_KEYS = frozenset({"api_key", "auth_token", "webhook_secret"})
FILE_SUFFIX = "_file"   # <secret>_file names a file holding the secret


class ConfigError(Exception):
    """Raised with every problem of one config file; ``problems`` holds one line each."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class ServerConfig:
    public_url: str = ""
    host: str = "127.0.0.1"
    port: int = 8080
    # Open connections waitress keeps (its default, 100, let ~100 slow clients shut out
    # Twilio); each one is a file descriptor, and serve raises its own limit to fit.
    connection_limit: int = 500
    # A connection silent this long is closed (waitress's default is 120).
    channel_timeout_seconds: float = 30.0
    # SIGTERM: how long turns in flight may finish; below systemd's TimeoutStopSec=45.
    drain_seconds: float = 20.0
    timezone: str = ""      # IANA name; "" = the host's zone

    @property
    def zone(self) -> dt.tzinfo:
        """The household's zone, in which every time a person reads is shown."""
        return zone_named(self.timezone)


def webhook_url(public_url: str) -> str:
    """The URL Twilio calls and signs: ``public_url`` + "/sms".

    Operators also paste the webhook URL itself into public_url; taken literally, every SMS
    would then be refused with 403, so a URL already ending in /sms is used as it is.
    """
    public = public_url.rstrip("/")
    return public if public.endswith("/sms") else public + "/sms"


@dataclass(frozen=True)
class DatabaseConfig:
    path: str = "mediabot.db"


@dataclass(frozen=True)
class TwilioConfig:
    account_sid: str = ""
    auth_token: str = field(default="", repr=False)
    from_number: str = ""
    messaging_service_sid: str = ""
    api_base_url: str = ""
    validate_signature: bool = True
    timeout_seconds: float = 10.0
    # WhatsApp on the same account: the sender (E.164, or "whatsapp:+1...", or the
    # messaging service "MG..."); what a notice outside the 24-hour window does ("wait",
    # "template", "sms"); the approved Content templates (HX...) for each kind of notice.
    whatsapp_from: str = ""
    whatsapp_outside_window: str = "wait"
    whatsapp_ready_template: str = ""
    whatsapp_approval_template: str = ""


@dataclass(frozen=True)
class LLMConfig:
    base_url: str = "https://api.openai.com/v1"
    api_key: str = field(default="", repr=False)
    model: str = "gpt-4o-mini"
    timeout_seconds: float = 120.0   # a local model on a CPU reads ~1,800 tokens uncached
    max_retries: int = 1
    max_tool_rounds: int = 6
    temperature: float = 0.3
    max_reply_tokens: int = 400


@dataclass(frozen=True)
class HistoryConfig:
    max_messages: int = 20
    max_context_tokens: int = 4000
    fetch_limit: int = 60
    summaries: bool = False
    retention_days: int = 90


@dataclass(frozen=True)
class ConfirmationConfig:
    ttl_seconds: int = 300
    sweep_interval_seconds: int = 60


@dataclass(frozen=True)
class ArrConfig:
    url: str = ""
    api_key: str = field(default="", repr=False)
    root_folder: str = ""
    quality_profile: str = ""
    timeout_seconds: float = 10.0


@dataclass(frozen=True)
class SmsConfig:
    max_reply_chars: int = 480
    allow_emoji: bool = False
    unknown_senders: str = "ignore"
    rate_limit_per_hour: int = 30
    default_region: str = DEFAULT_REGION    # how numbers written without +country are read
    posters: bool = False
    language: str = "en"    # a BCP 47 tag with a catalog in mediabot/locales (text.language)
    # Letters outside GSM-7 ("á", "ç", "ã") in an SMS: "fold" them to their GSM-7 neighbours
    # (160 characters a segment) or "keep" them (the text goes as UCS-2, 70 a segment);
    # "": the recipient's language decides (text.sms.accents_for: "keep" for Portuguese).
    accents: str = ""


@dataclass(frozen=True)
class RequestsConfig:
    """Household rules for adds: admin approval of members' adds, weekly quotas (0 = none),
    and how often one title may be searched for again."""

    approval: str = "none"
    approval_ttl_hours: int = 48
    movies_per_week: int = 0
    seasons_per_week: int = 0
    search_again_hours: int = 6


@dataclass(frozen=True)
class NotificationsConfig:
    webhook_secret: str = field(default="", repr=False)


@dataclass(frozen=True)
class UserConfig:
    phone: str
    name: str = ""
    role: str = Role.MEMBER
    channel: str = ""     # "sms" or "whatsapp" for notices; "": the one they used last
    language: str = ""    # a BCP 47 tag; "": the household's [sms] language


@dataclass(frozen=True)
class Config:
    server: ServerConfig = ServerConfig()
    database: DatabaseConfig = DatabaseConfig()
    twilio: TwilioConfig = TwilioConfig()
    llm: LLMConfig = LLMConfig()
    history: HistoryConfig = HistoryConfig()
    confirmation: ConfirmationConfig = ConfirmationConfig()
    sonarr: ArrConfig | None = None
    radarr: ArrConfig | None = None
    sms: SmsConfig = SmsConfig()
    notifications: NotificationsConfig = NotificationsConfig()
    requests: RequestsConfig = RequestsConfig()
    users: tuple[UserConfig, ...] = ()
    source: str = "<defaults>"


SECTIONS = {
    "server": ServerConfig,
    "database": DatabaseConfig,
    "twilio": TwilioConfig,
    "llm": LLMConfig,
    "history": HistoryConfig,
    "confirmation": ConfirmationConfig,
    "sonarr": ArrConfig,
    "radarr": ArrConfig,
    "sms": SmsConfig,
    "notifications": NotificationsConfig,
    "requests": RequestsConfig,
}
OPTIONAL_SECTIONS = ("sonarr", "radarr")
POSITIVE_KEYS = {
    "server": ("port", "connection_limit", "channel_timeout_seconds", "drain_seconds"),
    "twilio": ("timeout_seconds",),
    "llm": ("timeout_seconds", "max_tool_rounds", "max_reply_tokens"),
    "history": ("max_messages", "max_context_tokens", "fetch_limit", "retention_days"),
    "confirmation": ("ttl_seconds", "sweep_interval_seconds"),
    "sonarr": ("timeout_seconds",),
    "radarr": ("timeout_seconds",),
    "sms": ("max_reply_chars", "rate_limit_per_hour"),
    "requests": ("approval_ttl_hours", "search_again_hours"),
}
MIN_REPLY_TOKENS = 64   # a tool call with its arguments, or a three-sentence SMS
NON_NEGATIVE_KEYS = {"llm": ("max_retries", "temperature"),
                     "requests": ("movies_per_week", "seasons_per_week")}
CHOICES = {("sms", "unknown_senders"): ("ignore", "reply"),
           ("twilio", "whatsapp_outside_window"): ("wait", "template", "sms"),
           ("requests", "approval"): ("none", "members")}
MAX_PORT = 65535
SYSTEMD_STOP_SECONDS = 45  # TimeoutStopSec in systemd/mediabot.service


def resolve_path(path: str | None, environ=os.environ) -> Path:
    """``--config``, else ``$MEDIABOT_CONFIG``, else ``./config.toml``."""
    return Path(path or environ.get(ENV_PATH) or DEFAULT_PATH)


def load_config(path: str | os.PathLike | None = None, environ=None, *,
                require_twilio: bool = True, replaced: tuple[str, ...] = (),
                require_model: bool = False, require_arr_keys: bool = True) -> Config:
    """Read, override from the environment and validate; raise ConfigError on any problem.

    ``require_twilio=False`` serves commands that never touch Twilio (``mediabot chat``).
    ``replaced`` names sections the caller substitutes (``demo`` and ``eval`` run against a
    simulated Sonarr/Radarr): they are neither read, nor overridden, nor checked.
    ``require_model`` (serve, check) refuses OpenAI's default URL without a key.
    """
    environ = os.environ if environ is None else environ
    file = resolve_path(os.fspath(path) if path else None, environ)
    # Unless --config names it, a file that is not there may be left out: MEDIABOT_*
    # variables alone are then the config (a container's, with nothing mounted at /config).
    raw = _read_toml(file, missing_ok=path is None)
    missing, raw = raw is None, raw or {}
    beside, problems = _env_file(file.absolute().parent / ENV_FILE)
    environ = without_sections({**_credentials(environ), **beside, **environ}, replaced)
    raw = _database_beside(raw, file.absolute().parent)
    raw = _secret_files_beside(raw, file.absolute().parent)
    raw = {name: table for name, table in raw.items() if name not in replaced}
    if problems:
        raise ConfigError(problems)
    try:
        config = parse_config(raw, source=str(file), environ=environ,
                              require_twilio=require_twilio, require_arr_keys=require_arr_keys)
    except ConfigError as exc:
        if not missing:
            raise
        # No file and not enough in the environment: say first that the file is missing,
        # then (only when some variables were set) what those variables still lack.
        given = any(k.startswith(ENV_PREFIX) and k != ENV_PATH for k in environ)
        raise ConfigError([_no_file(file), *(exc.problems if given else [])]) from None
    if missing:
        log.info("no config file at %s: the MEDIABOT_* variables alone are the config", file)
    if require_model and _validate_model_set(config.llm, str(file)):
        raise ConfigError(_validate_model_set(config.llm, str(file)))
    return config


def _read_toml(file: Path, missing_ok: bool = False) -> dict | None:
    """The config file's tables (None when it is missing and ``missing_ok``); ConfigError
    (one line with the fix) for every way reading it fails: missing, a directory,
    unreadable by this user, not UTF-8, not TOML."""
    try:
        return tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        if missing_ok:
            return None
        raise ConfigError([_no_file(file)]) from None
    except IsADirectoryError:
        raise ConfigError([f"{file}: is a directory, not a file; pass --config "
                           f"{file / DEFAULT_PATH} (the file itself)"]) from None
    except PermissionError:
        raise ConfigError([f"{file}: permission denied; run the command as the user the "
                           f"daemon runs as (sudo -u mediabot mediabot ...), or let that "
                           f"user read it: chown root:mediabot {file} && chmod 0640 "
                           f"{file}"]) from None
    except UnicodeDecodeError:
        raise ConfigError([f"{file}: not UTF-8 text (saved as UTF-16 or another encoding?); "
                           "save it as UTF-8"]) from None
    except OSError as exc:
        raise ConfigError([f"{file}: cannot read it ({exc.strerror}); check the path"]) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"{file}: not valid TOML ({exc}); fix the syntax"]) from None


def _no_file(file: Path) -> str:
    return (f"{file}: no such file; copy config.example.toml to {file} and fill in the "
            "required keys (or pass --config PATH)")


def _env_file(path: Path) -> tuple[dict[str, str], list[str]]:
    """The ``env`` file beside the config (``MEDIABOT_*=...`` lines, what systemd's
    ``EnvironmentFile=`` gives the daemon), so a command run by hand reads the same
    secrets. None there: nothing. Unreadable: one problem naming the file and the fix."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, []
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or "not UTF-8 text"
        return {}, [f"{path}: cannot read it ({reason}); it holds the daemon's secrets, so "
                    "run the command as the user the daemon runs as (sudo -u mediabot "
                    "mediabot ...)"]
    settings, problems = parse_env_file(text, str(path))
    return {k: v for k, v in settings.items() if k.startswith(ENV_PREFIX)}, problems


def without_sections(environ, sections: tuple[str, ...]) -> dict:
    """``environ`` less the ``MEDIABOT_<SECTION>_*`` overrides of ``sections``."""
    prefixes = tuple(f"{ENV_PREFIX}{name.upper()}_" for name in sections)
    return {k: v for k, v in environ.items() if not (prefixes and k.startswith(prefixes))}


def _database_beside(raw: dict, folder: Path) -> dict:
    """A relative ``[database] path`` (or the default) is relative to the config file's
    folder, not to wherever a command happens to run: ``mediabot users add --config
    /etc/mediabot/config.toml`` must write the database the daemon reads. An environment
    override (``MEDIABOT_DATABASE_PATH``) is applied later and used as given."""
    table = raw.get("database", {})
    if not isinstance(table, dict):
        return raw
    path = table.get("path", DatabaseConfig.path)
    if not isinstance(path, str) or path == ":memory:" or Path(path).is_absolute():
        return raw
    return {**raw, "database": {**table, "path": str(folder / path)}}


def _secret_files_beside(raw: dict, folder: Path) -> dict:
    """A relative ``<secret>_file`` in the file is relative to its folder, as the database."""
    fixed = {}
    for name, table in raw.items():
        if isinstance(table, dict):
            table = {key: str(folder / value) if _is_file_key(key) and isinstance(value, str)
                     and value and not Path(value).is_absolute() else value
                     for key, value in table.items()}
        fixed[name] = table
    return fixed


def _is_file_key(key: str) -> bool:
    return key.endswith(FILE_SUFFIX) and key[:-len(FILE_SUFFIX)] in SECRET_KEYS


def _credentials(environ) -> dict[str, str]:
    """systemd credentials (LoadCredential=MEDIABOT_LLM_API_KEY:/path) as env-style settings.

    Each file in ``$CREDENTIALS_DIRECTORY`` named like an environment override is read as
    one; a real environment variable of the same name wins.
    """
    directory = environ.get("CREDENTIALS_DIRECTORY")
    if not directory or not os.path.isdir(directory):
        return {}
    found = {}
    for entry in os.scandir(directory):
        if entry.name.startswith(ENV_PREFIX) and entry.is_file():
            with open(entry.path, encoding="utf-8") as handle:
                found[entry.name] = handle.read().strip()
    return found


def parse_config(raw: dict, *, source: str = "<config>", environ=None,
                 require_twilio: bool = True, require_arr_keys: bool = True) -> Config:
    """Build a Config from a parsed TOML dict (plus environment overrides)."""
    problems: list[str] = []
    from_env: set[tuple[str, str]] = set()
    raw = _apply_env(dict(raw), environ or {}, source, problems, from_env)
    sections = {}
    for name, value in raw.items():
        if name == "users":
            continue
        if name not in SECTIONS:
            problems.append(f"{source}: unknown section [{name}]; "
                            f"known sections are {', '.join(sorted(SECTIONS))}, [[users]]")
            continue
        if not isinstance(value, dict):
            problems.append(f"{source}: {name} = {value!r} must be a [{name}] table")
            continue
        value = _read_secret_files(name, value, source, problems, from_env)
        sections[name] = _build_section(name, value, source, problems)
    users = _build_users(raw.get("users", []), source, problems, _region(sections.get("sms")))
    config = Config(**{n: s for n, s in sections.items() if s is not None},
                    users=users, source=source)
    problems += _validate(config, source, require_twilio, require_arr_keys)
    if problems:
        raise ConfigError(problems)
    return config


def _apply_env(raw: dict, environ, source: str, problems: list[str],
               from_env: set | None = None) -> dict:
    """MEDIABOT_<SECTION>_<KEY> over the file's values; ``from_env`` collects the
    (section, key) pairs set here. A secret set here replaces the file's ``<secret>_file``
    and the other way round; both set here is reported by ``_read_secret_files``."""
    from_env = set() if from_env is None else from_env
    for var, text in environ.items():
        if not var.startswith(ENV_PREFIX) or var == ENV_PATH:
            continue
        rest = var[len(ENV_PREFIX):].lower()
        section, _, key = rest.partition("_")
        cls = SECTIONS.get(section)
        fields = {f.name: f for f in dataclasses.fields(cls)} if cls else {}
        if cls and _is_file_key(key) and key[:-len(FILE_SUFFIX)] in fields:
            raw[section] = _set_from_env(raw.get(section), key, text, section, from_env)
            continue
        if key not in fields:
            problems.append(f"environment: {var} is not a known setting; "
                            f"use MEDIABOT_<SECTION>_<KEY>, e.g. MEDIABOT_LLM_API_KEY")
            continue
        try:
            value = _convert_env(text, _expected_type(fields[key].type))
        except ValueError as exc:
            problems.append(f"environment: {var} = {_show(key, text)}: {exc}")
            continue
        raw[section] = _set_from_env(raw.get(section), key, value, section, from_env)
    return raw


def _set_from_env(table, key: str, value, section: str, from_env: set) -> dict:
    table = dict(table) if isinstance(table, dict) else {}
    table[key] = value
    from_env.add((section, key))
    twin = key[:-len(FILE_SUFFIX)] if _is_file_key(key) else key + FILE_SUFFIX
    if (section, twin) not in from_env:
        table.pop(twin, None)
    return table


def _read_secret_files(section: str, table: dict, source: str, problems: list[str],
                       from_env: set) -> dict:
    """``table`` with each ``<secret>_file`` replaced by the secret read from that file.

    Fails (into ``problems``, naming the key or variable and the fix) when the file cannot
    be read, is empty, or the secret is also given directly; never shows the secret."""
    table, fields = dict(table), {f.name for f in dataclasses.fields(SECTIONS[section])}
    for key in [k for k in table if _is_file_key(k) and k[:-len(FILE_SUFFIX)] in fields]:
        path, secret = table.pop(key), key[:-len(FILE_SUFFIX)]
        where = _origin(section, key, source, from_env)
        if secret in table:
            twin = _origin(section, secret, "", from_env).removeprefix("environment: ")
            problems.append(f"{where} and {twin} are both set; keep one (the file for a "
                            "container secret, the key otherwise)")
        elif not isinstance(path, str) or not path:
            problems.append(f"{where} = {path!r} must be the path of a file holding {secret}")
        else:
            table[secret] = _read_secret(path, f"{where} = {path!r}", secret, problems)
    return table


def _origin(section: str, key: str, source: str, from_env: set) -> str:
    """Where a setting came from, as errors name it: the variable, or the file's key."""
    if (section, key) in from_env:
        return f"environment: {ENV_PREFIX}{section.upper()}_{key.upper()}"
    return f"{source}: [{section}] {key}" if source else f"[{section}] {key}"


def _read_secret(path: str, where: str, secret: str, problems: list[str]) -> str:
    """The file's text, stripped; on failure a stand-in, so that the check for a missing
    secret does not report the same problem twice (the ConfigError is raised anyway)."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read().strip()
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or "not UTF-8 text"
        problems.append(f"{where}: cannot read it ({reason}); check the path, and that the "
                        "user mediabot runs as may read the file")
        return "(unread)"
    if not text:
        problems.append(f"{where}: the file is empty; put the {secret} in it")
    return text or "(unread)"


def _convert_env(text: str, expected: type):
    """An environment string as the field's type (``_expected_type``); ValueError says why."""
    if expected is bool:
        lowered = text.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise ValueError("expected true or false")
    if expected is int:
        try:
            return int(text)
        except ValueError:
            raise ValueError("expected a whole number") from None
    if expected is float:
        try:
            return float(text)
        except ValueError:
            raise ValueError("expected a number") from None
    return text


def _build_section(name: str, table: dict, source: str, problems: list[str]):
    cls = SECTIONS[name]
    fields = {f.name: f for f in dataclasses.fields(cls)}
    values = {}
    for key, value in table.items():
        if key not in fields:
            problems.append(f"{source}: [{name}] {key} is not a known key; "
                            f"known keys are {', '.join(fields)}")
            continue
        expected = _expected_type(fields[key].type)
        if not _type_ok(value, expected):
            problems.append(f"{source}: [{name}] {key} = {_show(key, value)} must be "
                            f"{_TYPE_WORDS[expected]}")
            continue
        values[key] = float(value) if expected is float else value
    return cls(**values)


_TYPE_WORDS = {str: "a string", int: "a whole number", float: "a number", bool: "true or false"}


def _expected_type(kind):
    for candidate in (bool, int, float, str):
        if str(kind) == candidate.__name__ or kind is candidate:
            return candidate
    return str


def _type_ok(value, expected) -> bool:
    if expected is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if expected is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, expected)


def _region(sms: "SmsConfig | None") -> str:
    """The region [[users]] phones are read in (a bad one is reported by _validate_region)."""
    region = sms.default_region if sms is not None else DEFAULT_REGION
    return region if is_region(region) else DEFAULT_REGION


def _build_users(entries, source: str, problems: list[str],
                 region: str = DEFAULT_REGION) -> tuple[UserConfig, ...]:
    if not isinstance(entries, list):
        problems.append(f"{source}: users must be written as [[users]] tables")
        return ()
    users, seen = [], set()
    for i, entry in enumerate(entries, 1):
        where = f"{source}: [[users]] #{i}"
        if not isinstance(entry, dict):
            problems.append(f"{where} must be a table with phone, name, role")
            continue
        unknown = set(entry) - {"phone", "name", "role", "channel", "language"}
        if unknown:
            problems.append(f"{where}: {', '.join(sorted(unknown))} is not a known key; "
                            "known keys are phone, name, role, channel, language")
        phone = entry.get("phone")
        if not isinstance(phone, str):
            problems.append(f"{where}: phone = {phone!r} must be a string, e.g. "
                            "\"+15551234567\"")
            continue
        try:
            phone = normalise_phone(phone, region)
        except ValueError as exc:
            problems.append(f"{where}: phone = {exc}")
            continue
        if phone in seen:
            problems.append(f"{where}: phone {phone} is listed twice; keep one entry")
            continue
        seen.add(phone)
        role = entry.get("role", Role.MEMBER)
        if role not in ROLES:
            problems.append(f"{where}: role = {role!r} is not a role; use \"admin\" or \"member\"")
            continue
        name = entry.get("name", "")
        if not isinstance(name, str):
            problems.append(f"{where}: name = {name!r} must be a string")
            continue
        channel = entry.get("channel", "")
        if channel not in ("", *CHANNELS):
            problems.append(f"{where}: channel = {channel!r} is not a channel; use \"sms\" "
                            "or \"whatsapp\", or leave it out for the one they used last")
            continue
        language = entry.get("language", "")
        if language != "" and (why := language_problem(language)):
            problems.append(f"{where}: language = {why}")
            continue
        users.append(UserConfig(phone=phone, name=name.strip(), role=role, channel=channel,
                                language=language))
    return tuple(users)


def _validate(config: Config, source: str, require_twilio: bool,
              require_arr_keys: bool = True) -> list[str]:
    problems = []
    url = config.server.public_url
    if not url:
        problems.append(f"{source}: [server] public_url is required; set it to the https URL "
                        "Twilio calls, e.g. \"https://sms.example.com\"")
    elif not _is_http_url(url):
        problems.append(f"{source}: [server] public_url = {_show('url', url)} is not an "
                        "http(s) URL; write it like \"https://sms.example.com\"")
    if require_twilio:
        problems += _validate_twilio(config.twilio, source)
    problems += _validate_port(config.server, source)
    problems += _validate_ranges(config, source)
    problems += _validate_drain(config.server, source)
    problems += _validate_history(config.history, source)
    problems += _validate_timezone(config.server, source)
    problems += _validate_region(config.sms, source)
    problems += _validate_language(config.sms, source)
    for name in OPTIONAL_SECTIONS:
        problems += _validate_arr(name, getattr(config, name), source, require_arr_keys)
    if 0 < config.llm.max_reply_tokens < MIN_REPLY_TOKENS:
        problems.append(f"{source}: [llm] max_reply_tokens = {config.llm.max_reply_tokens} is "
                        f"too few for a tool call or an SMS reply; use at least "
                        f"{MIN_REPLY_TOKENS} (the default is 400)")
    if not _is_http_url(config.llm.base_url):
        problems.append(f"{source}: [llm] base_url = {_show('url', config.llm.base_url)} is "
                        "not an http(s) URL; e.g. \"https://api.openai.com/v1\" or "
                        "\"http://localhost:11434/v1\"")
    if config.twilio.api_base_url and not _is_http_url(config.twilio.api_base_url):
        problems.append(f"{source}: [twilio] api_base_url = "
                        f"{_show('url', config.twilio.api_base_url)} is not an http(s) URL; "
                        "leave it empty to use Twilio's")
    return problems


def _validate_ranges(config: Config, source: str) -> list[str]:
    """POSITIVE_KEYS above 0, NON_NEGATIVE_KEYS at least 0, CHOICES among their values."""
    problems = []
    for name, keys in POSITIVE_KEYS.items():
        section = getattr(config, name)
        for key in keys if section is not None else ():
            value = getattr(section, key)
            if value <= 0:
                problems.append(f"{source}: [{name}] {key} = {value!r} must be greater than 0")
    for name, keys in NON_NEGATIVE_KEYS.items():
        for key in keys:
            value = getattr(getattr(config, name), key)
            if value < 0:
                problems.append(f"{source}: [{name}] {key} = {value!r} must be 0 or more")
    for (name, key), allowed in CHOICES.items():
        value = getattr(getattr(config, name), key)
        if value not in allowed:
            problems.append(f"{source}: [{name}] {key} = {value!r} is not allowed; use "
                            + " or ".join(f'"{a}"' for a in allowed))
    return problems


def _validate_drain(server: ServerConfig, source: str) -> list[str]:
    if server.drain_seconds < SYSTEMD_STOP_SECONDS:
        return []
    return [f"{source}: [server] drain_seconds = {server.drain_seconds:g} must be below "
            f"{SYSTEMD_STOP_SECONDS}: systemd kills mediabot after TimeoutStopSec="
            f"{SYSTEMD_STOP_SECONDS} (systemd/mediabot.service), in the middle of the drain; "
            "use 20, the default"]


def _validate_history(history: HistoryConfig, source: str) -> list[str]:
    """The window is built from the fetched rows: fetching fewer than it may hold would drop
    older messages without the pruned line (or a summary) ever naming them."""
    if 0 < history.fetch_limit < history.max_messages:
        return [f"{source}: [history] fetch_limit = {history.fetch_limit} is smaller than "
                f"max_messages = {history.max_messages}; set fetch_limit to at least "
                f"{history.max_messages} (or lower max_messages)"]
    return []


# Names zoneinfo knows that are a fixed offset or an old POSIX rule, not a place: "EST"
# never switches to daylight saving, so every time shown would be an hour off all summer.
NOT_A_PLACE = {"EST": "America/New_York", "MST": "America/Denver", "HST": "Pacific/Honolulu",
               "EST5EDT": "America/New_York", "CST6CDT": "America/Chicago",
               "MST7MDT": "America/Denver", "PST8PDT": "America/Los_Angeles"}


def _validate_timezone(server: ServerConfig, source: str) -> list[str]:
    name = server.timezone
    if name.upper() in NOT_A_PLACE:
        return [f"{source}: [server] timezone = {name!r} is a fixed offset without daylight "
                f"saving; use the place's IANA name, e.g. \"{NOT_A_PLACE[name.upper()]}\""]
    try:
        server.zone  # noqa: B018 - reading it raises ValueError for an unknown zone
    except ValueError:
        return [f"{source}: [server] timezone = {name!r} is not a time zone; use an "
                "IANA name like \"America/New_York\" or \"Europe/London\" (list them with "
                "`timedatectl list-timezones`), or leave it empty for this machine's zone"]
    return []


def _validate_port(server: ServerConfig, source: str) -> list[str]:
    if server.port <= MAX_PORT:
        return []   # 0 and below: _validate_ranges
    return [f"{source}: [server] port = {server.port} is not a TCP port; use one from 1 to "
            f"{MAX_PORT}, e.g. 8080"]


def _validate_model_set(llm: LLMConfig, source: str) -> list[str]:
    """OpenAI's URL (the default) without a key: no [llm] written at all, most likely."""
    if "api.openai.com" not in llm.base_url or llm.api_key:
        return []
    return [f"{source}: [llm] api_key is required for OpenAI ({llm.base_url}); set it (or "
            "MEDIABOT_LLM_API_KEY), or point [llm] base_url and model at your own model "
            "server, e.g. \"http://localhost:11434/v1\""]


def _validate_language(sms: SmsConfig, source: str) -> list[str]:
    problems = []
    if why := language_problem(sms.language):
        problems.append(f"{source}: [sms] language = {why}")
    if sms.accents not in ACCENTS:
        problems.append(f"{source}: [sms] accents = {sms.accents!r} is not a choice; use "
                        "\"fold\" (GSM-7 neighbours, 160 characters a segment), \"keep\" "
                        "(UCS-2, 70 a segment), or leave it out for the language's default")
    return problems


def _validate_region(sms: SmsConfig, source: str) -> list[str]:
    if is_region(sms.default_region):
        return []
    hint = ' (the United Kingdom is "GB")' if sms.default_region.upper() == "UK" else ""
    return [f"{source}: [sms] default_region = {sms.default_region!r} is not a region with "
            f"known phone numbers{hint}; use a two-letter ISO 3166 code like \"US\", \"GB\" "
            "or \"DE\""]


def _validate_twilio(twilio: TwilioConfig, source: str) -> list[str]:
    problems = []
    if not twilio.account_sid:
        problems.append(f"{source}: [twilio] account_sid is required; copy it from the Twilio "
                        "console (it starts with AC)")
    if not twilio.auth_token:
        problems.append(f"{source}: [twilio] auth_token is required; copy it from the Twilio "
                        "console into it, MEDIABOT_TWILIO_AUTH_TOKEN (the env file beside the "
                        "config) or a file named by auth_token_file")
    if not twilio.from_number and not twilio.messaging_service_sid and not twilio.whatsapp_from:
        problems.append(f"{source}: [twilio] from_number or messaging_service_sid is required; "
                        "set from_number to your Twilio number, e.g. \"+15550001111\"")
    elif twilio.from_number and not E164.match(twilio.from_number):
        problems.append(f"{source}: [twilio] from_number = {twilio.from_number!r} is not in "
                        "E.164; write it like \"+15550001111\"")
    return problems + _validate_whatsapp(twilio, source)


def _validate_whatsapp(twilio: TwilioConfig, source: str) -> list[str]:
    """``whatsapp_from`` is a number or a messaging service; the templates are Content SIDs;
    a fallback names something that exists."""
    problems = []
    sender = twilio.whatsapp_from
    if sender and not (E164.match(split_channel(sender)[1]) or sender.startswith("MG")):
        problems.append(f"{source}: [twilio] whatsapp_from = {sender!r} is neither a number in "
                        "E.164 (\"whatsapp:+14155238886\") nor a messaging service (MG...)")
    for key in ("whatsapp_ready_template", "whatsapp_approval_template"):
        value = getattr(twilio, key)
        if value and not re.fullmatch(r"HX[0-9a-fA-F]{32}", value):
            problems.append(f"{source}: [twilio] {key} = {value!r} is not a Content SID; copy "
                            "the HX... SID of the approved template from the Content Template "
                            "Builder")
    if (sender and twilio.whatsapp_outside_window == "sms" and not twilio.from_number
            and not twilio.messaging_service_sid):
        problems.append(f"{source}: [twilio] whatsapp_outside_window = \"sms\" needs an SMS "
                        "sender; set from_number, or choose \"wait\" or \"template\"")
    return problems


def _validate_arr(name: str, arr: ArrConfig | None, source: str,
                  require_key: bool = True) -> list[str]:
    if arr is None:
        return []
    problems = []
    if not arr.url:
        problems.append(f"{source}: [{name}] url is required when [{name}] is present; "
                        f"e.g. \"http://localhost:{8989 if name == 'sonarr' else 7878}\", "
                        f"or remove [{name}] to turn its tools off")
    elif not _is_http_url(arr.url):
        problems.append(f"{source}: [{name}] url = {_show('url', arr.url)} is not an http(s) "
                        "URL")
    if require_key and not arr.api_key:
        problems.append(f"{source}: [{name}] api_key is required when [{name}] is present; "
                        f"find it under Settings > General > Security in {name.title()}, "
                        f"or set MEDIABOT_{name.upper()}_API_KEY")
    return problems


def _is_http_url(url: str) -> bool:
    parsed = urlparse(url)
    return parsed.scheme in ("http", "https") and bool(parsed.netloc)


def _show(key: str, value) -> str:
    """Show a bad value in an error: a secret key's value never, a URL without credentials."""
    if key in SECRET_KEYS:
        return "(hidden)"
    return repr(mask_url_secrets(value) if isinstance(value, str) else value)
