"""config.toml and raw config tables: writing a config file from tables, a valid Config on the
fakes, the least a daemon's config holds and its problems."""

import json
from pathlib import Path

import pytest

from mediabot.config import ConfigError, parse_config, twilio_needs
from tests.support.household import ADMIN, MEMBER


def write_config(folder: Path, **sections) -> Path:
    """Write ``folder/config.toml`` from tables, in the order given, and return its path:
    ``write_config(tmp_path, server={"public_url": ...}, users=[{"phone": ...}])``. A list of
    tables becomes ``[[name]]`` entries; a Path value is written as its string."""
    path = Path(folder) / "config.toml"
    path.write_text("".join(_toml_table(name, table) for name, table in sections.items()))
    return path


def make_config(*, llm_url: str, sonarr_url: str | None = None, radarr_url: str | None = None,
                twilio_url: str = "", db_path: str = "mediabot.db", **sections):
    """A valid Config pointing at the fakes; ``sections`` override tables (e.g. history={...})."""
    raw = {
        "server": {"public_url": "https://sms.example.com"},
        "database": {"path": db_path},
        "twilio": {"account_sid": "AC" + "0" * 32, "auth_token": "secret-token",
                   "from_number": "+15550001111", "api_base_url": twilio_url},
        "llm": {"base_url": llm_url + "/v1", "api_key": "sk-test", "model": "gpt-4o-mini",
                "timeout_seconds": 5, "max_retries": 0},
        "users": [{"phone": ADMIN, "name": "Alex", "role": "admin"},
                  {"phone": MEMBER, "name": "Sam", "role": "member"}],
    }
    if not twilio_url:
        del raw["twilio"]["api_base_url"]
    if sonarr_url:
        raw["sonarr"] = {"url": sonarr_url, "api_key": "sonarr-key", "timeout_seconds": 2}
    if radarr_url:
        raw["radarr"] = {"url": radarr_url, "api_key": "radarr-key", "timeout_seconds": 2}
    for name, table in sections.items():
        raw.setdefault(name, {}).update(table)
    return parse_config(raw, environ={})


def dead_servers(*, from_number="+15550001111", account_sid="AC1", auth_token="token-123456"):
    """[twilio] and [llm] tables pointing at a closed loopback port, for ``write_config``:
    `mediabot check` then reports them unreachable at once."""
    return {"twilio": {"account_sid": account_sid, "auth_token": auth_token,
                       "from_number": from_number, "api_base_url": "http://127.0.0.1:9"},
            "llm": {"base_url": "http://127.0.0.1:9/v1", "timeout_seconds": 1,
                    "max_retries": 0}}


def _toml_table(name: str, table) -> str:
    if isinstance(table, list):
        return "".join(_toml_keys(f"[[{name}]]", entry) for entry in table)
    return _toml_keys(f"[{name}]", table)


def _toml_keys(header: str, keys: dict) -> str:
    return header + "\n" + "".join(f"{key} = {_toml_value(value)}\n"
                                   for key, value in keys.items())


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    return json.dumps(str(value))


MINIMAL = {     # the least a daemon's config holds
    "server": {"public_url": "https://sms.example.com"},
    "twilio": {"account_sid": "AC123", "auth_token": "tok", "from_number": "+15550001111"},
}


def raw_with(**sections):
    """MINIMAL's tables with ``sections`` added to them (a list of tables replaces)."""
    raw = {k: dict(v) for k, v in MINIMAL.items()}
    for name, table in sections.items():
        if isinstance(table, list):
            raw[name] = table
        else:
            raw.setdefault(name, {}).update(table)
    return raw


def problems_of(raw, environ=None):
    """Every problem of ``raw`` read for the daemon, which talks to Twilio."""
    with pytest.raises(ConfigError) as info:
        parse_config(raw, source="cfg.toml", environ=environ or {}, needs=(twilio_needs,))
    return info.value.problems


def chat_config(tmp_path, llm_url):
    return write_config(tmp_path, server={"public_url": "https://sms.example.com"},
                        database={"path": tmp_path / "chat.db"},
                        llm={"base_url": f"{llm_url}/v1", "api_key": "sk-test",
                             "timeout_seconds": 5, "max_retries": 0},
                        users=[{"phone": ADMIN, "name": "Alex", "role": "admin"}])
