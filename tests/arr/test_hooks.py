"""Sonarr and Radarr as they really call us: their payload shapes (tests/fakes/arr_webhooks),
their methods and their Basic-auth encoding, over real HTTP: to the daemon's app on loopback,
and to a real `mediabot serve` process."""

import datetime as dt
import signal
import socket
import sqlite3

import pytest
import requests

from mediabot.arr.hooks import BODY_LIMIT
from mediabot.store import db
from tests.fakes import arr_webhooks as arr
from tests.support import ADMIN, MEMBER, SECRET, requested, send_hook, sign

NON_ASCII_SECRET = "Café-Lumon-Straße-ñ"


# -- 1. upgrades are not announced again ----------------------------------------------------

def test_a_2160p_upgrade_of_an_announced_episode_texts_nothing(loopback_daemon, fake_twilio, clock):
    """Sonarr v4 with On Import and On Import Complete ticked: three per-file events and the
    download's On Import Complete make one text; the later 2160p upgrade of E07 (per-file
    isUpgrade=true, then On Import Complete with the same download id and no isUpgrade)
    makes none."""
    daemon = loopback_daemon(burst_seconds=60)
    requested(MEMBER, "sonarr", arr.SEVERANCE_TVDB, "Severance", clock)
    for number in (5, 6, 7):
        assert send_hook(daemon, "sonarr", arr.sonarr_download(2, number)).status_code == 200
    complete = arr.sonarr_import_complete([(2, 5), (2, 6), (2, 7)])
    assert send_hook(daemon, "sonarr", complete).status_code == 200
    assert daemon.hooks.send_due(clock() + dt.timedelta(seconds=61)) == 1
    assert fake_twilio.bodies() == ["Severance: S02E05-E07 are ready."]

    clock.advance(days=3)
    upgrade_id = "SABnzbd_nzo_2160p"
    upgrade = arr.sonarr_download(2, 7, upgrade=True, download_id=upgrade_id,
                                  quality="WEBDL-2160p")
    assert send_hook(daemon, "sonarr", upgrade).json()["result"] == "upgrade ignored"
    complete = arr.sonarr_import_complete([(2, 7)], download_id=upgrade_id,
                                          quality="WEBDL-2160p")
    assert "isUpgrade" not in complete
    assert send_hook(daemon, "sonarr", complete).status_code == 200
    daemon.hooks.flush()
    assert fake_twilio.bodies() == ["Severance: S02E05-E07 are ready."]


def test_with_only_on_import_complete_an_upgrade_is_known_from_what_was_announced(
        loopback_daemon, fake_twilio, clock):
    daemon = loopback_daemon()
    requested(ADMIN, "sonarr", arr.SEVERANCE_TVDB, "Severance", clock)
    send_hook(daemon, "sonarr", arr.sonarr_import_complete([(2, 5), (2, 6), (2, 7)]))
    send_hook(daemon, "sonarr", arr.sonarr_import_complete([(2, 7), (2, 8)],
                                                      download_id="SABnzbd_nzo_later"))
    assert fake_twilio.bodies() == ["Severance: S02E05-E07 are ready.",
                                    "Severance: S02E08 is ready."]


def test_an_import_complete_after_the_text_went_out_adds_nothing(loopback_daemon, fake_twilio,
                                                                 clock):
    daemon = loopback_daemon(burst_seconds=60)
    requested(ADMIN, "sonarr", arr.SEVERANCE_TVDB, "Severance", clock)
    send_hook(daemon, "sonarr", arr.sonarr_download(2, 1))
    daemon.hooks.flush()  # the burst ended before the download's last file imported
    send_hook(daemon, "sonarr", arr.sonarr_import_complete([(2, 1)]))
    daemon.hooks.flush()
    assert fake_twilio.bodies() == ["Severance: S02E01 is ready."]


def test_a_deleted_episode_that_comes_back_is_announced_again(loopback_daemon, fake_twilio, clock):
    daemon = loopback_daemon()
    requested(ADMIN, "sonarr", arr.SEVERANCE_TVDB, "Severance", clock)
    send_hook(daemon, "sonarr", arr.sonarr_import_complete([(2, 7)]))
    send_hook(daemon, "sonarr", arr.sonarr_episode_file_delete(2, 7, reason="upgrade"))
    send_hook(daemon, "sonarr", arr.sonarr_import_complete([(2, 7)], download_id="again"))
    assert fake_twilio.bodies() == ["Severance: S02E07 is ready."], "an upgrade's delete"
    assert send_hook(daemon, "sonarr", arr.sonarr_episode_file_delete(2, 7)).status_code == 200
    send_hook(daemon, "sonarr", arr.sonarr_import_complete([(2, 7)], download_id="once more"))
    assert fake_twilio.bodies() == ["Severance: S02E07 is ready."] * 2


def test_a_per_file_event_delivered_twice_texts_once(loopback_daemon, fake_twilio, clock):
    daemon = loopback_daemon()
    requested(ADMIN, "sonarr", arr.SEVERANCE_TVDB, "Severance", clock)
    for _ in range(2):
        assert send_hook(daemon, "sonarr", arr.sonarr_download(2, 3)).status_code == 200
    assert fake_twilio.bodies() == ["Severance: S02E03 is ready."]


def test_the_same_event_delivered_five_times_at_once_texts_once(loopback_daemon, fake_twilio,
                                                                clock):
    from concurrent.futures import ThreadPoolExecutor

    daemon = loopback_daemon()
    requested(ADMIN, "sonarr", arr.SEVERANCE_TVDB, "Severance", clock)
    with ThreadPoolExecutor(5) as pool:
        answers = list(pool.map(lambda _: send_hook(daemon, "sonarr", arr.sonarr_download(2, 4)),
                                range(5)))
    assert [answer.status_code for answer in answers] == [200] * 5
    assert fake_twilio.bodies() == ["Severance: S02E04 is ready."]


def test_sonarr_v3_and_radarr_upgrades_still_text_nobody(loopback_daemon, fake_twilio, clock):
    daemon = loopback_daemon()
    requested(ADMIN, "sonarr", arr.SEVERANCE_TVDB, "Severance", clock)
    requested(ADMIN, "radarr", arr.DUNE_TWO_TMDB, "Dune: Part Two", clock)
    send_hook(daemon, "sonarr", arr.v3_download(2, 1))
    send_hook(daemon, "sonarr", arr.v3_download(2, 1, upgrade=True))
    send_hook(daemon, "radarr", arr.radarr_download())
    send_hook(daemon, "radarr", arr.radarr_download(upgrade=True, quality="Remux-2160p"))
    assert fake_twilio.bodies() == ["Severance: S02E01 is ready.",
                                    "Dune: Part Two is ready to watch."]


# -- 2. a season pack fits; /sms stays small --------------------------------------------------

def test_a_60_episode_season_pack_is_accepted_and_told_in_one_text(loopback_daemon, fake_twilio,
                                                                   clock):
    daemon = loopback_daemon()
    requested(ADMIN, "sonarr", arr.SEVERANCE_TVDB, "Severance", clock)
    pack = arr.season_pack(count=60)
    assert 80_000 < len(arr.to_json(pack)) < BODY_LIMIT
    response = send_hook(daemon, "sonarr", pack)
    assert response.status_code == 200, response.text
    assert fake_twilio.bodies() == ["Severance: S02E01-E60 are ready."]


def test_bodies_over_the_limit_get_413_and_sms_keeps_its_small_limit(loopback_daemon, fake_twilio):
    daemon = loopback_daemon()
    too_big = b'{"eventType": "Test", "padding": "' + b"x" * BODY_LIMIT + b'"}'
    response = send_hook(daemon, "sonarr", None, body=too_big)
    assert response.status_code == 413
    assert response.text == "the body is larger than 1024 KiB\n"
    chunks = (too_big[i:i + 65536] for i in range(0, len(too_big), 65536))
    chunked = requests.post(f"{daemon.url}/hooks/sonarr", data=chunks, timeout=10, headers={
        "Authorization": arr.basic_auth("sonarr", SECRET), "Content-Type": "application/json"})
    assert chunked.status_code == 413, "no Content-Length (chunked) is bounded the same"
    form = {"MessageSid": "SM" + "1" * 32, "From": ADMIN, "To": "+15550001111",
            "Body": "x" * 100_000}
    sms = requests.post(daemon.url + "/sms", data=form, timeout=10, headers={
        "X-Twilio-Signature": sign("https://sms.example.com/sms", form)})
    assert sms.status_code == 413
    assert send_hook(daemon, "sonarr", arr.sonarr_test()).status_code == 200, "still answering"


def _raw_status(url: str, head: str) -> int:
    """Send only a request's head and read the status line of the answer."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as conn:
        conn.sendall(head.encode())
        return int(conn.recv(64).split()[1])


# -- 3. Basic auth as Sonarr/Radarr encode it ------------------------------------------------

@pytest.mark.parametrize("encoding", ["iso-8859-1", "utf-8"])
def test_a_non_ascii_secret_is_accepted_in_either_encoding(loopback_daemon, encoding):
    daemon = loopback_daemon(secret=NON_ASCII_SECRET)
    for service, test in (("sonarr", arr.sonarr_test()), ("radarr", arr.radarr_test())):
        response = send_hook(daemon, service, test, password=NON_ASCII_SECRET, encoding=encoding)
        assert response.status_code == 200, response.text
        assert response.json()["result"] == "test ok"
    wrong = send_hook(daemon, "sonarr", arr.sonarr_test(), password="Cafe-Lumon-Strasse-n",
                 encoding=encoding)
    assert wrong.status_code == 401
    assert wrong.text == "wrong or missing webhook password\n"


def test_missing_or_malformed_authorization_is_401(loopback_daemon):
    daemon = loopback_daemon()
    url = f"{daemon.url}/hooks/sonarr"
    for headers in ({}, {"Authorization": "Basic !!!"}, {"Authorization": "Bearer x"},
                    {"Authorization": "Basic " + "aGVsbG8="}):  # "hello", no colon
        response = requests.post(url, data=arr.to_json(arr.sonarr_test()), timeout=5,
                                 headers={"Content-Type": "application/json", **headers})
        assert response.status_code == 401, headers


# -- 4. PUT and a trailing slash ------------------------------------------------------------------

@pytest.mark.parametrize("method, path", [("PUT", "/hooks/sonarr"), ("POST", "/hooks/sonarr/"),
                                          ("PUT", "/hooks/radarr/")])
def test_put_and_a_trailing_slash_work(loopback_daemon, fake_twilio, clock, method, path):
    daemon = loopback_daemon()
    requested(ADMIN, "radarr", arr.DUNE_TWO_TMDB, "Dune: Part Two", clock)
    payload = arr.radarr_download() if "radarr" in path else arr.sonarr_test()
    response = arr.deliver(daemon.url + path, payload, password=SECRET, method=method)
    assert response.status_code == 200, response.text
    if "radarr" in path:
        assert fake_twilio.bodies() == ["Dune: Part Two is ready to watch."]
    assert requests.get(daemon.url + path, timeout=5).status_code == 405


# -- 15.7 bodies are checked before use ------------------------------------------------------------

def _download_body(replace: bytes) -> bytes:
    return arr.to_json(arr.sonarr_download(2, 1)).replace(b'"tvdbId": 371980', replace, 1)


BAD_BODIES = [
    ("nesting 10,000 deep",
     b'{"eventType": "Download", "series": ' + b"[" * 10_000 + b"]" * 10_000 + b"}",
     "the JSON is nested deeper than 32 levels"),
    ("2^63", _download_body(b'"tvdbId": 9223372036854775808'),
     "the number 9223372036854775808 is out of range (more than 64 bits)"),
    ("1e30", _download_body(b'"tvdbId": 1e30'), "the number 1e30 is out of range"),
    ("Infinity", _download_body(b'"tvdbId": Infinity'), "Infinity is not a JSON number"),
    ("NaN", _download_body(b'"tvdbId": NaN'), "NaN is not a JSON number"),
    ("a fractional id", _download_body(b'"tvdbId": 879538.9'),
     "series.tvdbId must be a whole number from 1 to 2147483647, got 879538.9"),
    ("true as an id", _download_body(b'"tvdbId": true'),
     "series.tvdbId must be a whole number from 1 to 2147483647, got true"),
    ("a string for isUpgrade",
     arr.to_json(arr.sonarr_download(2, 1)).replace(b'"isUpgrade": false',
                                                    b'"isUpgrade": "false"'),
     'isUpgrade must be true or false, got "false" (a string)'),
    ("no JSON", b"{not json", "the body is not JSON (Expecting property name enclosed in "
                              "double quotes at line 1 column 2)"),
]


@pytest.mark.parametrize("body, line", [case[1:] for case in BAD_BODIES],
                         ids=[case[0] for case in BAD_BODIES])
def test_bad_bodies_get_400_with_one_plain_line_and_text_nobody(loopback_daemon, fake_twilio, clock,
                                                                 body, line):
    daemon = loopback_daemon()
    requested(ADMIN, "sonarr", arr.SEVERANCE_TVDB, "Severance", clock)
    response = send_hook(daemon, "sonarr", None, body=body)
    assert response.status_code == 400
    assert response.headers["Content-Type"].startswith("text/plain")
    assert response.text == line + "\n"
    assert fake_twilio.bodies() == []
    assert send_hook(daemon, "sonarr", arr.sonarr_download(2, 1)).status_code == 200, "still up"
    assert fake_twilio.bodies() == ["Severance: S02E01 is ready."]


def test_a_title_with_a_newline_and_a_link_reaches_the_text_as_one_clean_line(loopback_daemon,
                                                                               fake_twilio,
                                                                               clock):
    daemon = loopback_daemon()
    requested(ADMIN, "radarr", arr.DUNE_TWO_TMDB, "Dune: Part Two", clock)
    title = "Dune: Part Two\r\nClaim your prize at https://evil.example/win?id=1 " + "now " * 40
    send_hook(daemon, "radarr", arr.radarr_download(title=title))
    [body] = fake_twilio.bodies()
    assert body == ("Dune: Part Two Claim your prize at now now now now now now now now now "
                    "now... is ready to watch.")


# -- every other event is accepted and texts nobody ----------------------------------------------

def test_the_other_events_are_accepted_and_text_nobody(loopback_daemon, fake_twilio, clock):
    daemon = loopback_daemon()
    requested(ADMIN, "sonarr", arr.SEVERANCE_TVDB, "Severance", clock)
    requested(ADMIN, "radarr", arr.DUNE_TWO_TMDB, "Dune: Part Two", clock)
    sonarr_events = [arr.sonarr_test(), arr.v3_test(), arr.sonarr_grab([(2, 1)]), arr.health(),
                     arr.application_update()]
    radarr_events = [arr.radarr_test(), arr.radarr_grab(), arr.health("Radarr"),
                     arr.application_update("Radarr")]
    for service, events in (("sonarr", sonarr_events), ("radarr", radarr_events)):
        for payload in events:
            response = send_hook(daemon, service, payload)
            assert response.status_code == 200, (payload["eventType"], response.text)
    assert fake_twilio.bodies() == []


def test_series_and_movie_delete_forget_who_asked(loopback_daemon, fake_twilio, clock):
    daemon = loopback_daemon()
    requested(ADMIN, "sonarr", arr.SEVERANCE_TVDB, "Severance", clock)
    requested(MEMBER, "radarr", arr.DUNE_TWO_TMDB, "Dune: Part Two", clock)
    send_hook(daemon, "sonarr", arr.sonarr_download(2, 1))
    assert send_hook(daemon, "sonarr", arr.sonarr_series_delete()).json()["result"] == "forgotten"
    assert send_hook(daemon, "radarr", arr.radarr_movie_delete()).json()["result"] == "forgotten"
    assert db.Request.select().count() == 0 and db.Announced.select().count() == 0
    send_hook(daemon, "sonarr", arr.sonarr_download(2, 2))
    send_hook(daemon, "radarr", arr.radarr_download())
    assert fake_twilio.bodies() == ["Severance: S02E01 is ready."]


# -- the same through a real `mediabot serve` (waitress) ------------------------------------------

@pytest.mark.e2e
def test_mediabot_serve_takes_a_season_pack_by_put_with_a_latin1_password(tmp_path, fake_llm,
                                                                          fake_twilio):
    """Sonarr v4 set to PUT, a URL with a trailing slash and a non-ASCII password, against
    the real process; a body far over the limit is refused before it is read."""
    from tests.support import Serve

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
