"""End to end: a real `mediabot serve` process on loopback, texted the way Twilio does.

The fake OpenAI and Twilio servers run in this test process; the daemon runs as a child
process with a config file pointing at them, exactly as an operator would run it.
"""

import itertools
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time

import requests

from mediabot.trial.sim.loopback import wait_for
from mediabot.webhooks.downloads import BODY_LIMIT
from tests.fakes import arr_webhooks as arr
from tests.support.arr_hooks import NON_ASCII_SECRET
from tests.support.household import ADMIN
from tests.support.household import SERVE_PUBLIC as PUBLIC
from tests.support.serve import Serve
from tests.support.texting import sign


def test_a_signed_sms_gets_its_reply(serve, fake_llm, fake_twilio):
    daemon = serve()
    fake_llm.enqueue_text("**Dune** is downloading — 45% done.")
    response = daemon.text("what's downloading?")
    assert response.status_code == 200 and response.text.endswith("<Response/>")
    assert wait_for(lambda: fake_twilio.sent)
    assert fake_twilio.sent[0]["to"] == ADMIN
    assert fake_twilio.sent[0]["body"] == "Dune is downloading - 45% done."


def test_bad_signatures_are_refused_and_duplicates_answered_once(serve, fake_llm, fake_twilio):
    daemon = serve()
    assert daemon.text("hello", signature="").status_code == 403
    assert daemon.text("hello", signature="bm90IGEgc2lnbmF0dXJl").status_code == 403
    fake_llm.set_responder(lambda body: "Just once.")
    for _ in range(3):
        assert daemon.text("hello", sid="SM" + "5" * 32).status_code == 200
    assert wait_for(lambda: fake_twilio.sent) and wait_for(daemon.settled)
    assert fake_twilio.bodies() == ["Just once."]
    assert len(fake_llm.requests) == 1


def test_three_rapid_texts_make_at_most_two_turns(serve, fake_llm, fake_twilio):
    daemon = serve()
    fake_llm.enqueue_delay(0.4)
    fake_llm.set_responder(lambda body: "ok")
    for body in ("get Dune", "the 2021 one", "in 4K please"):
        daemon.text(body)
        time.sleep(0.1)
    assert wait_for(lambda: len(fake_llm.requests) >= 1 and len(fake_twilio.sent) >= 1)
    assert wait_for(daemon.settled)
    assert 1 <= len(fake_llm.requests) <= 2
    seen = "\n".join(m["content"] for r in fake_llm.requests for m in r["messages"]
                     if m["role"] == "user")
    for body in ("get Dune", "the 2021 one", "in 4K please"):
        assert body in seen, "every text reaches the model"
    for request in fake_llm.requests:
        roles = [m["role"] for m in request["messages"]]
        assert all(not (a == b == "user") for a, b in itertools.pairwise(roles))


def test_kill_9_mid_turn_then_restart_answers_exactly_once(serve, fake_llm, fake_twilio):
    daemon = serve()
    fake_llm.enqueue_delay(3)
    fake_llm.enqueue_text("too late, the process died")
    fake_llm.set_responder(lambda body: "Answered after the restart.")
    daemon.text("are you there?")
    assert wait_for(lambda: len(fake_llm.requests) == 1)
    daemon.stop(signal.SIGKILL)
    daemon.start()
    assert wait_for(lambda: fake_twilio.sent) and wait_for(daemon.settled)
    daemon.stop(signal.SIGKILL)
    daemon.start()
    assert wait_for(daemon.settled)
    assert fake_twilio.bodies() == ["Answered after the restart."]


def test_sigterm_finishes_the_turn_in_flight_and_exits_0(serve, fake_llm, fake_twilio):
    daemon = serve()
    fake_llm.enqueue_delay(1.0)
    fake_llm.enqueue_text("Finished before stopping.")
    daemon.text("slow question")
    assert wait_for(lambda: len(fake_llm.requests) == 1)
    assert daemon.stop(signal.SIGTERM) == 0
    assert fake_twilio.bodies() == ["Finished before stopping."]


def test_stop_start_unknown_and_twilio_failures(serve, fake_llm, fake_twilio):
    daemon = serve()
    daemon.text("STOP")
    daemon.text("hello?")
    daemon.text("hi", sender="+15559998888")
    assert wait_for(daemon.settled)
    assert fake_twilio.sent == [] and fake_llm.requests == []
    daemon.text("START")
    fake_twilio.fail_next(500)
    fake_llm.enqueue_text("Welcome back.")
    daemon.text("hello again")
    assert wait_for(lambda: fake_twilio.sent, timeout=15)
    assert fake_twilio.bodies() == ["Welcome back."], "Twilio 500 then success: delivered once"
    fake_twilio.fail_next(400, code=21610)
    fake_llm.enqueue_text("This one cannot be delivered.")
    daemon.text("one more")
    assert wait_for(lambda: len(fake_twilio.requests) >= 3) and wait_for(daemon.settled)
    posts = [r for r in fake_twilio.requests if r.get("method", "POST") == "POST"]
    assert len(posts) == 3, "21610 is not retried"


def test_the_info_log_holds_no_secret_and_no_message_body(serve, fake_llm, fake_twilio):
    """A bad day: wrong Sonarr key, Radarr down, the model failing; the log stays clean."""
    from mediabot.trial.sim.arr import API_KEY
    from tests.fakes.arr_stack import ArrStack

    stack = ArrStack()
    radarr_url = stack.servers["radarr"].url
    stack.down("radarr")
    wrong_key = "feedfacefeedfacefeedfacefeedface"
    daemon = serve(f"""
[sonarr]
url = "{stack.servers['sonarr'].url}"
api_key = "{wrong_key}"
[radarr]
url = "{radarr_url}"
api_key = "{API_KEY}"
""")
    try:
        fake_llm.enqueue_tool_calls([("search_media", {"query": "severance"})])
        fake_llm.enqueue_text("Sonarr rejected the key and Radarr is down.")
        daemon.text("secret plans: get severance")
        assert wait_for(lambda: len(fake_twilio.sent) == 1)
        fake_llm.enqueue_tool_calls([("search_media", {"query": "xyzzy private film"})])
        fake_llm.enqueue_text("Nothing matches that.")
        daemon.text("find xyzzy private film")
        assert wait_for(lambda: len(fake_twilio.sent) == 2)
        fake_llm.enqueue_error(500, "The server had an error")
        daemon.text("private question about my family")
        assert wait_for(lambda: len(fake_twilio.sent) == 3)
        assert daemon.stop(signal.SIGTERM) == 0
    finally:
        stack.close()
    log = daemon.log.read_text()
    assert "inbox " in log and "turn user=" in log, "events are logged"
    for secret in (wrong_key, API_KEY, "secret-token", "sk-test", "secret plans",
                   "private question", "Sonarr rejected the key", "xyzzy"):
        assert secret not in log, f"{secret!r} leaked into the INFO log"
    assert "apikey=" not in log.lower()


def test_tampered_and_stale_signatures_store_nothing(serve, fake_llm, fake_twilio, tmp_path):
    import sqlite3

    daemon = serve()
    form = {"MessageSid": "SM" + "1" * 32, "From": ADMIN, "To": "+15550001111", "Body": "hi"}
    good = sign(PUBLIC + "/sms", form)
    tampered = requests.post(daemon.url + "/sms", data={**form, "Body": "delete everything"},
                             headers={"X-Twilio-Signature": good}, timeout=5)
    stale = requests.post(daemon.url + "/sms", data=form, timeout=5,
                          headers={"X-Twilio-Signature": sign("http://127.0.0.1/sms", form)})
    assert (tampered.status_code, stale.status_code) == (403, 403)
    rows = sqlite3.connect(tmp_path / "mediabot.db").execute("SELECT COUNT(*) FROM inbox")
    assert rows.fetchone()[0] == 0
    assert fake_llm.requests == [] and fake_twilio.sent == []


def test_a_long_markdown_reply_with_emoji_arrives_as_short_gsm7(serve, fake_llm, fake_twilio):
    from mediabot.text.sms import is_gsm7

    daemon = serve()
    fake_llm.enqueue_text("## Queue 🎬\n\n**Dune: Part Two** — 45% … “almost” there!\n\n"
                          + "- *Severance* S02E03: 80%, about 10 min left.\n" * 30)
    daemon.text("what's downloading?")
    assert wait_for(lambda: fake_twilio.sent)
    body = fake_twilio.bodies()[0]
    assert is_gsm7(body) and len(body) <= 480
    assert body.startswith("Queue\n")
    assert "**" not in body and "#" not in body and "🎬" not in body
    assert '"almost"' in body and "..." in body


def test_a_busy_port_or_an_unwritable_database_is_one_clear_line(tmp_path, fake_llm, fake_twilio):
    daemon = Serve(tmp_path, fake_llm.url, fake_twilio.url)
    env = {**os.environ, "MEDIABOT_TWILIO_AUTH_TOKEN": "secret-token"}
    command = [sys.executable, "-m", "mediabot.cli", "serve", "--config", str(daemon.config)]
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", daemon.port))
        busy.listen()
        result = subprocess.run(command, capture_output=True, text=True, timeout=30, env=env)
    assert result.returncode == 1
    assert f"cannot listen on 127.0.0.1:{daemon.port}" in result.stderr
    assert "[server] host or port" in result.stderr and "Traceback" not in result.stderr
    result = subprocess.run(command, capture_output=True, text=True, timeout=30, env={
        **env, "MEDIABOT_DATABASE_PATH": str(tmp_path / "no" / "such" / "dir" / "m.db")})
    assert result.returncode == 2
    assert "cannot open the database" in result.stderr and "[database] path" in result.stderr
    assert "Traceback" not in result.stderr


def test_every_acknowledged_text_survives_kill_9_under_load(serve, tmp_path):
    """At-least-once intake: a 200 goes out only for a committed row, so SIGKILL in the
    middle of a burst loses no acknowledged MessageSid (WAL, synchronous=NORMAL)."""
    import sqlite3
    import threading

    daemon = serve()
    acknowledged, stop = [], threading.Event()

    def client(k):
        with requests.Session() as session:
            n = 0
            while not stop.is_set():
                sid = f"SM{k:02d}{n:030d}"
                n += 1
                form = {"MessageSid": sid, "AccountSid": "AC" + "0" * 32, "From": ADMIN,
                        "To": "+15550001111", "Body": f"burst {n}", "NumMedia": "0"}
                try:
                    response = session.post(daemon.url + "/sms", data=form, timeout=5,
                                            headers={"X-Twilio-Signature":
                                                     sign(PUBLIC + "/sms", form)})
                except requests.RequestException:
                    return      # the daemon is gone
                if response.status_code == 200:
                    acknowledged.append(sid)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    assert wait_for(lambda: len(acknowledged) >= 300, 30)
    daemon.proc.kill()
    daemon.proc.wait(timeout=10)
    stop.set()
    for thread in threads:
        thread.join(10)
    connection = sqlite3.connect(tmp_path / "mediabot.db")
    stored = {row[0] for row in connection.execute("SELECT message_sid FROM inbox")}
    connection.close()
    missing = [sid for sid in acknowledged if sid not in stored]
    assert len(acknowledged) >= 300 and missing == []


def _raw_status(url: str, head: str) -> int:
    """Send only a request's head and read the status line of the answer."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as conn:
        conn.sendall(head.encode())
        return int(conn.recv(64).split()[1])


# -- the same through a real `mediabot serve` (waitress) ------------------------------------------

def test_mediabot_serve_takes_a_season_pack_by_put_with_a_latin1_password(tmp_path, fake_llm,
                                                                          fake_twilio):
    """Sonarr v4 set to PUT, a URL with a trailing slash and a non-ASCII password, against
    the real process; a body far over the limit is refused before it is read."""
    from tests.support.serve import Serve

    daemon = Serve(tmp_path, fake_llm.url, fake_twilio.url,
                   f'[notifications]\nwebhook_secret = "{NON_ASCII_SECRET}"\n').start()
    try:
        with sqlite3.connect(tmp_path / "mediabot.db") as conn:
            conn.execute("INSERT INTO requests (user_id, service, external_id, title, "
                         "created_at) SELECT id, 'sonarr', ?, 'Severance', "
                         "'2026-11-22 20:00:00' FROM users WHERE phone = ?",
                         (arr.SEVERANCE_TVDB, ADMIN))
        response = arr.deliver(f"{daemon.url}/hooks/sonarr/", arr.season_pack(count=60),
                               password=NON_ASCII_SECRET, method="PUT")
        assert response.status_code == 200, response.text
        assert response.json()["result"] == "gathering"  # episodes gather for 60 s
        assert _raw_status(daemon.url, "POST /hooks/sonarr HTTP/1.1\r\nHost: x\r\n"
                           f"Content-Length: {3 * BODY_LIMIT}\r\n\r\n") == 413, \
            "the server refuses a huge body before reading it, password or not"
        assert daemon.stop() == 0  # a stop sends what is gathering
        assert fake_twilio.bodies() == ["Severance: S02E01-E60 are ready."]
    finally:
        daemon.stop(signal.SIGKILL)
