"""`mediabot chat` as its own process: the real engine in a terminal, driven through standard
input."""

import os
import subprocess
import sys

from tests.support.clock import unstamped
from tests.support.config_files import chat_config
from tests.support.prompts import conversation, person_part


def chat(config, stdin, *args):
    return subprocess.run([sys.executable, "-m", "mediabot.cli", "chat", "--config", str(config),
                           *args], input=stdin, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "MEDIABOT_CONFIG": ""})


def test_chat_answers_each_line_with_memory_and_no_log_lines(tmp_path, fake_llm):
    config = chat_config(tmp_path, fake_llm.url)
    fake_llm.enqueue_text("Noted, you love Alien.")
    fake_llm.enqueue_text("Your favourite is Alien.")
    result = chat(config, "I love Alien\n\nwhat do I love?\n", "--as", "(555) 123-0001")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["bot> Noted, you love Alien.",
                                          "bot> Your favourite is Alien."]
    assert result.stderr == "", "INFO lines (prompt built, turn ...) stay out of the dialogue"
    second = conversation(fake_llm.requests[1])
    assert any("I love Alien" == unstamped(m["content"]) for m in second if m["role"] == "user")
    assert "Alex" in person_part(fake_llm.requests[1]), "talking as the configured user"
