"""`mediabot check` on the fakes: a healthy config with overrides, its secrets, and the lines it
prints (the servers fixture of tests/ops/conftest.py)."""

import re

from mediabot.trial.sim.arr import API_KEY

LLM_KEY = "sk-test-llm-key-0001"
TWILIO_TOKEN = "twilio-auth-token-0001"
WEBHOOK_SECRET = "hook-secret-0001"
ACCOUNT_SID = "AC" + "1" * 32
SECRETS = (API_KEY, LLM_KEY, TWILIO_TOKEN, WEBHOOK_SECRET)
PUBLIC_URL = "https://sms.smith-family.net"    # not the example's: see the placeholder test
FROM_NUMBER = "+15557654321"
WHATSAPP_NUMBER = "+15557654000"
SERVICE = "MG" + "2" * 32


def calls_a_tool_when_offered(body):
    """What a tool-capable model does with check's probe."""
    return [("download_queue", {})] if body.get("tools") else "OK."


def write_check_config(tmp_path, urls, **overrides):
    """A healthy config on the fakes; ``overrides`` maps "section.key" to a TOML value or
    None (drop the key; a section name alone drops the section)."""
    sections = {
        "server": {"public_url": f'"{PUBLIC_URL}"'},
        "database": {"path": f'"{tmp_path / "mediabot.db"}"'},
        "twilio": {"account_sid": f'"{ACCOUNT_SID}"', "auth_token": f'"{TWILIO_TOKEN}"',
                   "from_number": f'"{FROM_NUMBER}"', "api_base_url": f'"{urls["twilio"]}"'},
        "llm": {"base_url": f'"{urls["llm"]}"', "api_key": f'"{LLM_KEY}"',
                "model": '"gpt-4o-mini"', "timeout_seconds": "5", "max_retries": "0"},
        "sonarr": {"url": f'"{urls["sonarr"]}"', "api_key": f'"{API_KEY}"',
                   "root_folder": '"/tv"', "quality_profile": '"HD-1080p"',
                   "timeout_seconds": "5"},
        "radarr": {"url": f'"{urls["radarr"]}"', "api_key": f'"{API_KEY}"',
                   "timeout_seconds": "5"},
        "notifications": {"webhook_secret": f'"{WEBHOOK_SECRET}"'},
    }
    for where, value in overrides.items():
        section, _, key = where.partition(".")
        if not key:
            sections.pop(section)
        elif value is None:
            sections[section].pop(key)
        else:
            sections.setdefault(section, {})[key] = value
    text = "".join(f"[{name}]\n" + "".join(f"{k} = {v}\n" for k, v in keys.items()) + "\n"
                   for name, keys in sections.items())
    path = tmp_path / "config.toml"
    path.write_text(text + '[[users]]\nphone = "+15552468000"\nname = "Alex"\nrole = "admin"\n')
    return path


def run_check(tmp_path, servers, caplog=None, **overrides):
    """`mediabot check` on a healthy config with ``overrides``: no secret, API key in a query
    string or traceback in what it printed or logged."""
    from click.testing import CliRunner

    from mediabot.cli import main

    path = write_check_config(tmp_path, servers["urls"], **overrides)
    result = CliRunner().invoke(main, ["check", "--config", str(path)])
    everything = result.output + (caplog.text if caplog is not None else "")
    for secret in SECRETS:
        assert secret not in everything
    assert "apikey=" not in everything.lower()
    assert "Traceback" not in everything
    return result


def check_line(result, subject: str, status: str) -> str:
    """The lines of ``subject`` with ``status``, joined; fails the test when there is none."""
    found = [text for text in result.output.splitlines()
             if re.match(rf"{re.escape(status)}\s+{subject}: ", text)]
    assert found, f"no {status} {subject} line in:\n{result.output}"
    return "\n".join(found)
