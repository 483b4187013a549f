"""Where the ``MEDIABOT_<SECTION>_<KEY>`` overrides come from, gathered into one mapping:
systemd credentials (``$CREDENTIALS_DIRECTORY``), the ``env`` file beside the config (what
systemd's ``EnvironmentFile=`` gives the daemon, so a command run by hand reads the same
secrets), then the real environment, which wins. A variable that is empty (or blank) is not
set: a container template passes every variable it names, set or not (Unraid does), and an
empty ``MEDIABOT_SEERR_URL`` is no ``[seerr]``.
"""

import os
from collections.abc import Mapping
from pathlib import Path

from mediabot.text.envfile import parse_env_file, secret_text

ENV_PATH = "MEDIABOT_CONFIG"
ENV_PREFIX = "MEDIABOT_"
ENV_FILE = "env"   # beside the config: MEDIABOT_*=... lines, systemd's EnvironmentFile=

Environ = Mapping[str, str]


def gather(environ: Environ, env_file: Path,
           replaced: tuple[str, ...] = ()) -> tuple[dict[str, str], list[str]]:
    """The overrides in force, less those of the ``replaced`` sections, and the problems
    reading them (an unreadable ``env`` file)."""
    beside, problems = _env_file(env_file)
    merged = set_only({**_credentials(environ), **beside, **environ})
    return without_sections(merged, replaced), problems


def set_only(environ: Environ) -> dict[str, str]:
    """``environ`` less its empty (or blank) ``MEDIABOT_*`` variables."""
    return {k: v for k, v in environ.items() if not (k.startswith(ENV_PREFIX) and not v.strip())}


def without_sections(environ: Environ, sections: tuple[str, ...]) -> dict[str, str]:
    """``environ`` less the ``MEDIABOT_<SECTION>_*`` overrides of ``sections``."""
    prefixes = tuple(f"{ENV_PREFIX}{name.upper()}_" for name in sections)
    return {k: v for k, v in environ.items() if not (prefixes and k.startswith(prefixes))}


def _env_file(path: Path) -> tuple[dict[str, str], list[str]]:
    """The ``env`` file beside the config (``MEDIABOT_*=...`` lines, what systemd's
    ``EnvironmentFile=`` gives the daemon), so a command run by hand reads the same
    secrets. None there: nothing. Unreadable: one problem naming the file and the fix."""
    try:
        text = path.read_text(encoding="utf-8-sig")   # a Windows editor's BOM is no key
    except FileNotFoundError:
        return {}, []
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or "not UTF-8 text"
        return {}, [f"{path}: cannot read it ({reason}); it holds the daemon's secrets, so "
                    "run the command as the user the daemon runs as (sudo -u mediabot "
                    "mediabot ...)"]
    settings, problems = parse_env_file(text, str(path))
    return {k: v for k, v in settings.items() if k.startswith(ENV_PREFIX)}, problems


def _credentials(environ: Environ) -> dict[str, str]:
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
                found[entry.name] = secret_text(handle.read())
    return found
