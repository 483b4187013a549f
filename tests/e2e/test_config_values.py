"""End to end: values a config may hold that no server can use are refused when `mediabot
serve` and `mediabot check` start, as processes: a timeout of ``inf``, a secret file saved
with a byte-order mark, a secret holding a character HTTP headers cannot carry."""

import os
import subprocess
import sys

import pytest

from tests.support.serve import Serve

pytestmark = pytest.mark.e2e


def run(daemon: Serve, command: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    environ = {**os.environ, "MEDIABOT_TWILIO_AUTH_TOKEN": "secret-token",
               "MEDIABOT_LLM_API_KEY": "sk-test", **env}
    return subprocess.run([sys.executable, "-m", "mediabot.cli", command, "--config",
                           str(daemon.config)], capture_output=True, text=True, timeout=30,
                          env=environ)


def seerr_section(seerr) -> str:
    return f'\n[seerr]\nurl = "{seerr.url}"\n'


def test_serve_refuses_a_timeout_of_inf_with_one_line_and_exit_2(tmp_path, fake_llm,
                                                                 fake_twilio, seerr):
    """MEDIABOT_SEERR_TIMEOUT_SECONDS=inf once let `serve` start, and every add then failed
    with an OverflowError in the log."""
    daemon = Serve(tmp_path, fake_llm.url, fake_twilio.url, seerr_section(seerr))
    result = run(daemon, "serve", {"MEDIABOT_SEERR_API_KEY": seerr.api_key,
                                   "MEDIABOT_SEERR_TIMEOUT_SECONDS": "inf"})
    assert result.returncode == 2, result.stderr
    assert result.stderr == ("config error: environment: MEDIABOT_SEERR_TIMEOUT_SECONDS = "
                             "'inf': expected a finite number, not inf; write a plain number "
                             "such as 10.0\n")


def test_check_reads_a_seerr_key_file_saved_with_a_byte_order_mark(tmp_path, fake_llm,
                                                                   fake_twilio, seerr):
    """A Windows editor saved the key with a BOM: the key is read without it and Seerr
    takes it (once, every Seerr call failed with a UnicodeEncodeError)."""
    key = tmp_path / "seerr.key"
    key.write_bytes(b"\xef\xbb\xbf" + seerr.api_key.encode() + b"\r\n")
    daemon = Serve(tmp_path, fake_llm.url, fake_twilio.url, seerr_section(seerr))
    result = run(daemon, "check", {"MEDIABOT_SEERR_API_KEY_FILE": str(key)})
    assert any(line.startswith("ok   seerr:") and "key accepted" in line
               for line in result.stdout.splitlines()), result.stdout + result.stderr
    assert "UnicodeEncodeError" not in result.stdout + result.stderr


def test_check_refuses_a_key_file_holding_a_character_headers_cannot_carry(
        tmp_path, fake_llm, fake_twilio, seerr):
    key = tmp_path / "seerr.key"
    key.write_text(seerr.api_key[:8] + "\u00a0" + seerr.api_key[8:], encoding="utf-8")
    daemon = Serve(tmp_path, fake_llm.url, fake_twilio.url, seerr_section(seerr))
    result = run(daemon, "check", {"MEDIABOT_SEERR_API_KEY_FILE": str(key)})
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr == (f"config error: environment: MEDIABOT_SEERR_API_KEY_FILE = "
                             f"'{key}': the api_key in it holds a character HTTP headers "
                             "cannot carry (U+00A0 NO-BREAK SPACE); save the file again with "
                             "the api_key alone, as plain UTF-8 text\n")
    assert seerr.api_key[:8] not in result.stdout + result.stderr
