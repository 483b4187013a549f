"""`mediabot chat`: the real engine in a terminal, driven through standard input."""

import os
import subprocess
import sys

from tests.conftest import ADMIN


def write_config(tmp_path, llm_url):
    path = tmp_path / "config.toml"
    path.write_text(f"""
[server]
public_url = "https://sms.example.com"
[database]
path = "{tmp_path / 'chat.db'}"
[llm]
base_url = "{llm_url}/v1"
api_key = "sk-test"
timeout_seconds = 5
max_retries = 0
[[users]]
phone = "{ADMIN}"
name = "Alex"
role = "admin"
""")
    return path


def chat(config, stdin, *args):
    return subprocess.run([sys.executable, "-m", "mediabot.cli", "chat", "--config", str(config),
                           *args], input=stdin, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "MEDIABOT_CONFIG": ""})


def test_chat_answers_each_line_with_memory(tmp_path, fake_llm):
    config = write_config(tmp_path, fake_llm.url)
    fake_llm.enqueue_text("Noted, you love Alien.")
    fake_llm.enqueue_text("Your favourite is Alien.")
    result = chat(config, "I love Alien\n\nwhat do I love?\n", "--as", "(555) 123-0001")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["bot> Noted, you love Alien.",
                                          "bot> Your favourite is Alien."]
    second = fake_llm.requests[1]["messages"]
    assert any("I love Alien" == m.get("content") for m in second)
    assert "Alex" in second[0]["content"], "talking as the configured user"


def test_chat_needs_no_twilio_and_handles_keywords(tmp_path, fake_llm):
    config = write_config(tmp_path, fake_llm.url)
    result = chat(config, "help\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("bot> ") and "RESET" in result.stdout
    assert fake_llm.requests == []


def test_chat_rejects_a_bad_phone(tmp_path, fake_llm):
    config = write_config(tmp_path, fake_llm.url)
    result = chat(config, "", "--as", "not-a-phone")
    assert result.returncode == 2
    assert "Invalid value for --as" in result.stderr
    assert "E.164" in result.stderr and "Traceback" not in result.stderr
