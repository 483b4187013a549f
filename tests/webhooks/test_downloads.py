"""The webhook's edge (``webhooks/downloads.py``): Sonarr and Radarr as they really call us, with
their payload shapes (tests/fakes/arr_webhooks), methods and Basic-auth encoding; a wrong
or missing password, a body too big or malformed, and events we do not use are each
answered with one plain line and text nobody. In process and over real HTTP on loopback
(tests/e2e/test_serve.py sends a season pack to a real `mediabot serve`)."""

import pytest
import requests

from mediabot.trial.sim.arr_fixtures import DUNE_TWO_TMDB
from mediabot.webhooks.downloads import BODY_LIMIT
from tests.fakes import arr_webhooks as arr
from tests.support.arr_hooks import NON_ASCII_SECRET, basic, post_hook, radarr_download, send_hook
from tests.support.asking import requested
from tests.support.household import ADMIN, SECRET
from tests.support.texting import sign


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


# -- Basic auth as Sonarr/Radarr encode it -------------------------------------------------

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


# -- PUT and a trailing slash --------------------------------------------------------------

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


# -- bodies are checked before use ---------------------------------------------------------

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


def test_wrong_or_missing_secret_gets_401(client, fake_twilio, clock):
    requested(ADMIN, "radarr", DUNE_TWO_TMDB, "Dune: Part Two", clock)
    assert post_hook(client, "radarr", radarr_download(), password="guess").status_code == 401
    assert client.post("/hooks/radarr", json=radarr_download()).status_code == 401
    assert fake_twilio.sent == []


def test_no_secret_configured_refuses_the_hooks(daemon_for, fake_twilio):
    client = daemon_for(notifications={"webhook_secret": ""}).app.test_client()
    assert post_hook(client, "radarr", {"eventType": "Test"}, password="").status_code == 403


def test_malformed_json_is_400_and_sends_nothing(client, fake_twilio, clock):
    requested(ADMIN, "radarr", DUNE_TWO_TMDB, "Dune: Part Two", clock)
    response = client.post("/hooks/radarr", data="{not json", headers={
        **basic(SECRET), "Content-Type": "application/json"})
    assert response.status_code == 400
    assert post_hook(client, "radarr", {"eventType": "Download", "movie": {}}).status_code == 400
    assert fake_twilio.sent == []


def test_test_event_and_unknown_events(client):
    assert post_hook(client, "sonarr", {"eventType": "Test", "series": {}}).status_code == 200
    assert post_hook(client, "sonarr", {"eventType": "Grab"}).status_code == 200
    assert post_hook(client, "radarr", {"eventType": "SomethingNew"}).status_code == 200
    assert post_hook(client, "lidarr", {"eventType": "Test"}).status_code == 404
