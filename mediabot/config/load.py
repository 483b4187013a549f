"""Reading a config: one TOML file plus ``MEDIABOT_<SECTION>_<KEY>`` environment overrides.

The file is read with ``tomllib`` into the frozen dataclasses of ``schema.py``, then held
to the rules of ``validate.py``. Overrides also come from the ``env`` file beside the config
and from systemd credentials; a real environment variable wins. A secret may instead be named by
a file holding it (``auth_token_file = "/run/secrets/..."`` or
``MEDIABOT_TWILIO_AUTH_TOKEN_FILE``), as containers pass secrets, so every command reads the
secret the daemon reads. A ``MEDIABOT_*`` variable that is empty is not set (a container
template passes its variables set or not). Every problem found becomes one line of a single
``ConfigError`` naming the file, the key, the bad value and the fix, so an operator fixes
everything in one pass. Unknown sections and keys are errors: a typo must not be silently ignored.
"""

import dataclasses
import logging
import math
import os
import tomllib
from pathlib import Path
from typing import Any

from mediabot.config.environment import ENV_FILE, ENV_PATH, ENV_PREFIX, Environ, gather
from mediabot.config.environment import without_sections as without_sections
from mediabot.config.schema import SECRET_KEYS, SECTIONS, Config, ConfigError, DatabaseConfig, Need
from mediabot.config.validate import find_problems, header_unsafe, read_users, show_value
from mediabot.text.envfile import secret_text

log = logging.getLogger(__name__)
DEFAULT_PATH = "config.toml"
FILE_SUFFIX = "_file"   # <secret>_file names a file holding the secret

Raw = dict[str, Any]   # parsed TOML: table name -> table (or anything a typo made of it)


def resolve_path(path: str | None, environ: Environ = os.environ) -> Path:
    """``--config``, else ``$MEDIABOT_CONFIG``, else ``./config.toml``."""
    return Path(path or environ.get(ENV_PATH) or DEFAULT_PATH)


def load_config(path: str | os.PathLike[str] | None = None, environ: Environ | None = None, *,
                needs: tuple[Need, ...] = (), replaced: tuple[str, ...] = (),
                require_arr_keys: bool = True) -> Config:
    """Read, override from the environment and validate; raise ConfigError on any problem.

    What is written must be well formed; what a command needs beyond that it names in
    ``needs`` (``serve`` and ``check``: ``twilio_needs``, ``model_needs``), so demo, eval,
    chat and the users commands run with a file holding only ``[llm]``. Every problem, a
    need's included, is reported at once.
    ``replaced`` names sections the caller substitutes (``demo`` and ``eval`` run against a
    simulated Sonarr/Radarr): they are neither read, nor overridden, nor checked.
    """
    environ = os.environ if environ is None else environ
    file = resolve_path(os.fspath(path) if path else None, environ)
    # Unless --config names it, a file that is not there may be left out: MEDIABOT_*
    # variables alone are then the config (a container's, with nothing mounted at /config).
    found = _read_toml(file, missing_ok=path is None)
    environ, problems = gather(environ, file.absolute().parent / ENV_FILE, replaced)
    raw = _database_beside(found or {}, file.absolute().parent)
    raw = _secret_files_beside(raw, file.absolute().parent)
    raw = {name: table for name, table in raw.items() if name not in replaced}
    if problems:
        raise ConfigError(problems)
    if found is not None:
        return parse_config(raw, source=str(file), environ=environ, needs=needs,
                            require_arr_keys=require_arr_keys)
    return _from_environment(file, raw, environ, needs, require_arr_keys)


def _from_environment(file: Path, raw: Raw, environ: Environ, needs: tuple[Need, ...],
                      require_arr_keys: bool) -> Config:
    """The config when its file is missing: the variables alone. None set, or not enough:
    the missing file comes first, then (only when some were set) what they still lack."""
    given = any(k.startswith(ENV_PREFIX) and k != ENV_PATH for k in environ)
    if not given:
        raise ConfigError([_no_file(file)])
    try:
        config = parse_config(raw, source=str(file), environ=environ, needs=needs,
                              require_arr_keys=require_arr_keys)
    except ConfigError as exc:
        raise ConfigError([_no_file(file), *exc.problems]) from None
    log.info("no config file at %s: the MEDIABOT_* variables alone are the config", file)
    return config


def _read_toml(file: Path, missing_ok: bool = False) -> Raw | None:
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


def _database_beside(raw: Raw, folder: Path) -> Raw:
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


def _secret_files_beside(raw: Raw, folder: Path) -> Raw:
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


def parse_config(raw: Raw, *, source: str = "<config>", environ: Environ | None = None,
                 needs: tuple[Need, ...] = (), require_arr_keys: bool = True) -> Config:
    """Build a Config from a parsed TOML dict (plus environment overrides) and check it,
    with what each of ``needs`` asks for (see ``load_config``)."""
    problems: list[str] = []
    from_env: set[tuple[str, str]] = set()
    raw = _apply_env(dict(raw), environ or {}, source, problems, from_env)
    sections: dict[str, Any] = {}
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
        problems += _unsafe_secrets(name, value, source, from_env)
        value = _read_secret_files(name, value, source, problems, from_env)
        sections[name] = _build_section(name, value, source, problems)
    users = read_users(raw.get("users", []), source, problems, sections.get("sms"))
    config = Config(**{n: s for n, s in sections.items() if s is not None},
                    users=users, source=source)
    problems += find_problems(config, source, require_arr_keys)
    problems += [problem for need in needs for problem in need(config)]
    if problems:
        raise ConfigError(problems)
    return config


def _apply_env(raw: Raw, environ: Environ, source: str, problems: list[str],
               from_env: set[tuple[str, str]] | None = None) -> Raw:
    """MEDIABOT_<SECTION>_<KEY> over the file's values; ``from_env`` collects the
    (section, key) pairs set here. A secret set here replaces the file's ``<secret>_file``
    and the other way round; both set here is reported by ``_read_secret_files``."""
    from_env = set() if from_env is None else from_env
    for var, text in environ.items():
        if not var.startswith(ENV_PREFIX) or var == ENV_PATH:
            continue
        section, key = _section_and_key(var[len(ENV_PREFIX):].lower())
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
            value = _convert_env(text, _expected_type(fields[key].type), fields[key].default)
        except ValueError as exc:
            problems.append(f"environment: {var} = {show_value(key, text)}: {exc}")
            continue
        raw[section] = _set_from_env(raw.get(section), key, value, section, from_env)
    return raw


def _section_and_key(rest: str) -> tuple[str, str]:
    """``sms_gateway_password`` -> (``sms_gateway``, ``password``): the longest section the
    variable starts with, else up to the first underscore (so an unknown one is named)."""
    name = max((n for n in SECTIONS if rest.startswith(n + "_")), key=len, default=None)
    return (name, rest[len(name) + 1:]) if name else rest.partition("_")[::2]


def _set_from_env(table: object, key: str, value: Any, section: str,
                  from_env: set[tuple[str, str]]) -> dict[str, Any]:
    table = dict(table) if isinstance(table, dict) else {}
    table[key] = value
    from_env.add((section, key))
    twin = key[:-len(FILE_SUFFIX)] if _is_file_key(key) else key + FILE_SUFFIX
    if (section, twin) not in from_env:
        table.pop(twin, None)
    return table


def _read_secret_files(section: str, table: dict[str, Any], source: str, problems: list[str],
                       from_env: set[tuple[str, str]]) -> dict[str, Any]:
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


def _origin(section: str, key: str, source: str, from_env: set[tuple[str, str]]) -> str:
    """Where a setting came from, as errors name it: the variable, or the file's key."""
    if (section, key) in from_env:
        return f"environment: {ENV_PREFIX}{section.upper()}_{key.upper()}"
    return f"{source}: [{section}] {key}" if source else f"[{section}] {key}"


def _read_secret(path: str, where: str, secret: str, problems: list[str]) -> str:
    """The file's text, stripped; on failure a stand-in, so that the check for a missing
    secret does not report the same problem twice (the ConfigError is raised anyway)."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = secret_text(handle.read())
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or "not UTF-8 text"
        problems.append(f"{where}: cannot read it ({reason}); check the path, and that the "
                        "user mediabot runs as may read the file")
        return "(unread)"
    if not text:
        problems.append(f"{where}: the file is empty; put the {secret} in it")
    elif bad := header_unsafe(secret, text):
        problems.append(f"{where}: the {secret} in it holds a character HTTP headers cannot "
                        f"carry ({bad}); save the file again with the {secret} alone, as "
                        "plain UTF-8 text")
    return text or "(unread)"


def _unsafe_secrets(section: str, table: dict[str, Any], source: str,
                    from_env: set[tuple[str, str]]) -> list[str]:
    """A problem for each secret given directly (in the file or a variable) that holds a
    character HTTP headers cannot carry; never the secret itself."""
    problems = []
    for key in sorted(SECRET_KEYS & table.keys()):
        if bad := header_unsafe(key, table[key]):
            problems.append(f"{_origin(section, key, source, from_env)}: the {key} holds a "
                            f"character HTTP headers cannot carry ({bad}); set it again, "
                            "copied as plain text")
    return problems


def _convert_env(text: str, expected: type, example: object = None
                 ) -> str | int | float | bool:
    """An environment string as the field's type (``_expected_type``); ValueError says why
    (a number refused names ``example``, the key's default, as one to write)."""
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
            number = float(text)
        except ValueError:
            raise ValueError("expected a number") from None
        if not math.isfinite(number):
            raise ValueError(f"expected a finite number, not {text.strip()}; write a plain "
                             f"number such as {example}") from None
        return number
    return text


def _build_section(name: str, table: dict[str, Any], source: str, problems: list[str]) -> Any:
    """The section's dataclass from its table; each unknown key or wrongly typed value is a
    problem and is left out (its default stands in, so checking can go on)."""
    cls = SECTIONS[name]
    fields = {f.name: f for f in dataclasses.fields(cls)}
    values = {}
    for key, value in table.items():
        if key not in fields:
            problems.append(f"{source}: [{name}] {key} is not a known key; "
                            f"known keys are {', '.join(fields)}")
            continue
        expected = _expected_type(fields[key].type)
        if expected is float and isinstance(value, float) and not math.isfinite(value):
            problems.append(f"{source}: [{name}] {key} = {show_value(key, value)} must be a "
                            f"finite number, not inf or nan; write a plain number such as "
                            f"{fields[key].default}")
            continue
        if not _type_ok(value, expected):
            problems.append(f"{source}: [{name}] {key} = {show_value(key, value)} must be "
                            f"{_TYPE_WORDS[expected]}")
            continue
        values[key] = float(value) if expected is float else value
    return cls(**values)


_TYPE_WORDS = {str: "a string", int: "a whole number", float: "a number", bool: "true or false"}


def _expected_type(kind: object) -> type:
    """The plain type a field holds (annotations may be strings); str for anything else."""
    for candidate in (bool, int, float, str):
        if str(kind) == candidate.__name__ or kind is candidate:
            return candidate
    return str


def _type_ok(value: object, expected: type) -> bool:
    if expected is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if expected is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, expected)
