"""`mediabot demo` as its own process: the simulated library with the configured model, in the
terminal, as the whole daemon behind a signed curl, and as the daemon on a simulated phone."""

import os
import shlex
import signal
import subprocess
import sys
import threading

import requests

from mediabot.trial.sim.loopback import wait_for
from tests.support.clock import unstamped
from tests.support.prompts import person_part


def run_demo(tmp_path, stdin, *args, llm_url=None, **env):
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEDIABOT_")}
    environ.update(env)
    if llm_url:
        environ.update(MEDIABOT_LLM_BASE_URL=llm_url + "/v1", MEDIABOT_LLM_API_KEY="sk-test",
                       MEDIABOT_LLM_MAX_RETRIES="0")
    return subprocess.run([sys.executable, "-m", "mediabot.cli", "demo", *args], input=stdin,
                          capture_output=True, text=True, timeout=60, cwd=tmp_path, env=environ)


def test_demo_talks_to_the_model_about_the_simulated_library(tmp_path, fake_llm):
    fake_llm.enqueue_tool_calls([("search_media", {"query": "dune", "kind": "movie"})])
    fake_llm.enqueue_text("I found Dune (2021), which we have, and Dune (1984). Which one?")
    fake_llm.enqueue_tool_calls([("download_queue", {})])
    fake_llm.enqueue_text("Dune: Part Two is downloading.")
    result = run_demo(tmp_path, "get dune\nwhat's downloading?\n", llm_url=fake_llm.url)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "thrown away at exit" in out
    assert '[tool] search_media {"query":"dune","kind":"movie"}' in out
    result_line = next(line for line in out.splitlines() if line.startswith("  [result]"))
    assert "Dune" in result_line and "1984" in result_line, "the simulated lookup answered"
    assert "bot> I found Dune (2021)" in out
    assert "[tool] download_queue {}" in out
    assert "Dune: Part Two" in out.split("[tool] download_queue")[1]
    assert "Sam" in person_part(fake_llm.requests[0]), "the demo user has a name"
    assert not list(tmp_path.glob("*.db")), "no database left in the working directory"


def serve_demo(tmp_path, fake_llm, *flags) -> tuple[subprocess.Popen, list[str]]:
    """``mediabot demo --serve`` (and ``flags``) as a process, and its stdout lines as they
    arrive."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MEDIABOT_")}
    environ.update(MEDIABOT_LLM_BASE_URL=fake_llm.url + "/v1", MEDIABOT_LLM_API_KEY="sk-test",
                   MEDIABOT_LLM_MAX_RETRIES="0")
    process = subprocess.Popen([sys.executable, "-m", "mediabot.cli", "demo", "--serve", *flags],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=environ)
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(iter(process.stdout.readline, "")),
                     daemon=True).start()
    return process, lines


def test_demo_serve_answers_the_printed_signed_curl(tmp_path, fake_llm):
    fake_llm.enqueue_tool_calls([("download_queue", {})])   # answered in the queue's words
    process, lines = serve_demo(tmp_path, fake_llm)
    try:
        assert wait_for(lambda: any("curl -s" in line for line in lines), 20), lines
        argv = shlex.split(next(line for line in lines if "curl -s" in line))
        url = argv[2]
        header = argv[argv.index("-H") + 1].split(": ", 1)
        form = dict(argv[i + 1].split("=", 1)
                    for i, a in enumerate(argv) if a == "--data-urlencode")
        assert wait_for(lambda: _healthy(url), 20)
        answer = requests.post(url, data=form, headers={header[0]: header[1]}, timeout=5)
        assert answer.status_code == 200
        assert wait_for(lambda: any("SMS to +15555550100: 4 downloads: Severance S02E05 63%, "
                                    "12 min left;" in line and "Dune: Part Two (2024) 63%"
                                    in line for line in lines), 20), lines
        assert len(fake_llm.requests) == 1, "the daemon asked the model once for the queue"
        forged = requests.post(url, data={**form, "Body": "delete everything"},
                               headers={header[0]: header[1]}, timeout=5)
        assert forged.status_code == 403, "the printed signature covers the exact message"
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
    assert process.returncode == 0, process.stderr.read()


def _healthy(sms_url: str) -> bool:
    try:
        return requests.get(sms_url.replace("/sms", "/healthz"), timeout=1).status_code == 200
    except requests.RequestException:
        return False


def test_demo_serve_answers_every_typed_line_even_before_it_listens_and_after_a_refusal(
        tmp_path, fake_llm):
    """The banner invites typing at once: a line typed before the daemon listens waits for
    it, a line the daemon refuses is reported, and the reader goes on (issue 18, point 9)."""
    fake_llm.enqueue_text("Dune: Part Two is at 45%.")
    fake_llm.enqueue_text("You're welcome, Sam.")
    process, lines = serve_demo(tmp_path, fake_llm)
    process.stdin.write("what's downloading?\n")   # the interpreter is still starting
    process.stdin.flush()
    try:
        assert wait_for(lambda: "SMS to +15555550100: Dune: Part Two is at 45%.\n" in lines,
                        30), lines
        assert "(the daemon is still starting; \"what's downloading?\" goes as soon as it " \
               "listens)\n" in lines
        process.stdin.write("x" * 10_001 + "\nthanks\n")
        process.stdin.flush()
        assert wait_for(lambda: "SMS to +15555550100: You're welcome, Sam.\n" in lines,
                        30), lines
        assert f"(not sent: the daemon refused '{'x' * 37}...': Body is too long)\n" in lines
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
    assert process.returncode == 0, process.stderr.read()
    asked = [r["messages"][-1]["content"] for r in fake_llm.requests]
    assert [a for a in asked if "thanks" in a or "downloading" in a] == asked and len(asked) == 2


def test_demo_serve_texts_on_whatsapp_a_line_typed_with_wa(tmp_path, fake_llm):
    """A line typed as "wa: ..." is Sam's WhatsApp message: its reply comes back on
    WhatsApp in WhatsApp's markup; a plain line stays SMS."""
    fake_llm.enqueue_text("**Dune: Part Two** is at 45% 🎬")
    fake_llm.enqueue_text("You're welcome, Sam.")
    process, lines = serve_demo(tmp_path, fake_llm)
    process.stdin.write("wa: what's downloading?\n")
    process.stdin.flush()
    try:
        assert wait_for(lambda: "WhatsApp to +15555550100: *Dune: Part Two* is at 45% 🎬\n"
                        in lines, 30), "".join(lines)
        process.stdin.write("thanks\n")
        process.stdin.flush()
        assert wait_for(lambda: "SMS to +15555550100: You're welcome, Sam.\n" in lines, 30), \
            "".join(lines)
        assert any("start it with wa: to send it on WhatsApp" in line for line in lines)
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
    assert process.returncode == 0, process.stderr.read()
    asked = [unstamped(r["messages"][-1]["content"]) for r in fake_llm.requests]
    assert asked == ["what's downloading?", "thanks"]


def test_demo_serve_phone_carries_every_typed_line_through_the_simulated_phone(tmp_path,
                                                                              fake_llm):
    """With --phone there is no Twilio and no public URL: a typed line is Sam's SMS on the
    phone, even one typed before the daemon reads it, and the reply shows as the phone
    sends it; each text is answered once."""
    fake_llm.enqueue_tool_calls([("download_queue", {})])
    fake_llm.enqueue_text("Dune: Part Two is at 45%.")
    fake_llm.enqueue_text("You're welcome, Sam.")
    process, lines = serve_demo(tmp_path, fake_llm, "--phone")
    process.stdin.write("what's downloading?\n")     # the interpreter is still starting
    process.stdin.flush()
    try:
        assert wait_for(lambda: "SMS to +15555550100: Dune: Part Two is at 45%.\n" in lines,
                        30), "".join(lines)
        process.stdin.write("thanks\n")
        process.stdin.flush()
        assert wait_for(lambda: "SMS to +15555550100: You're welcome, Sam.\n" in lines, 30), \
            "".join(lines)
        assert any("simulated Android phone" in line for line in lines)
        assert not any("curl" in line or "Twilio" in line for line in lines), "".join(lines)
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
    assert process.returncode == 0, process.stderr.read()
    asked = [unstamped(r["messages"][-1]["content"]) for r in fake_llm.requests
             if r["messages"][-1]["role"] == "user"]
    assert asked == ["what's downloading?", "thanks"]
    assert [line for line in lines if line.startswith("SMS to")] == [
        "SMS to +15555550100: Dune: Part Two is at 45%.\n",
        "SMS to +15555550100: You're welcome, Sam.\n"], "each reply shown once"

