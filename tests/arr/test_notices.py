"""Sonarr/Radarr download webhooks: only the people who asked are told, once."""

import datetime as dt

import pytest

from mediabot.arr.notices import episode_ranges
from mediabot.arr.requests import record_request
from mediabot.store import db
from tests.support import ADMIN, MEMBER, SECRET, SEVERANCE, basic, requested, sonarr_download

DUNE_TWO = 693134


def radarr_download(tmdb_id=DUNE_TWO, title="Dune: Part Two", upgrade=False):
    """Shaped like Radarr's WebhookImportPayload."""
    return {
        "eventType": "Download", "instanceName": "Radarr", "applicationUrl": "",
        "movie": {"id": 12, "title": title, "year": 2024, "releaseDate": "2024-05-14",
                  "folderPath": f"/movies/{title} (2024)", "tmdbId": tmdb_id,
                  "imdbId": "tt15239678", "overview": "Paul Atreides unites with Chani."},
        "remoteMovie": {"tmdbId": tmdb_id, "imdbId": "tt15239678", "title": title,
                        "year": 2024},
        "movieFile": {"id": 40, "relativePath": f"{title} (2024).mkv",
                      "path": f"/movies/{title} (2024)/{title} (2024).mkv",
                      "quality": "Bluray-1080p", "qualityVersion": 1, "size": 21_000_000_000},
        "isUpgrade": upgrade, "downloadClient": "qBittorrent", "downloadClientType": "qBittorrent",
        "downloadId": "A1B2C3",
    }


@pytest.fixture
def daemon(daemon_for):
    return daemon_for(notifications={"webhook_secret": SECRET})


@pytest.fixture
def client(daemon):
    return daemon.app.test_client()


def post(client, service, payload, password=SECRET):
    return client.post(f"/hooks/{service}", json=payload, headers=basic(password))


def test_movie_import_texts_only_the_requesters_once(client, fake_twilio, clock):
    db.User.create(phone="+15550009999", display_name="Bystander")
    requested(ADMIN, "radarr", DUNE_TWO, "Dune: Part Two", clock)
    requested(MEMBER, "radarr", 99999, "Something else", clock)
    assert post(client, "radarr", radarr_download()).status_code == 200
    assert post(client, "radarr", radarr_download()).status_code == 200, "delivered twice"
    assert [(m["to"], m["body"]) for m in fake_twilio.sent] == [
        (ADMIN, "Dune: Part Two is ready to watch.")]


def test_notify_me_adds_a_second_recipient(client, fake_twilio, clock):
    requested(ADMIN, "radarr", DUNE_TWO, "Dune: Part Two", clock)
    requested(MEMBER, "radarr", DUNE_TWO, "Dune: Part Two", clock)
    post(client, "radarr", radarr_download())
    assert sorted(m["to"] for m in fake_twilio.sent) == sorted([ADMIN, MEMBER])


def test_series_burst_is_gathered_into_one_text(daemon_for, fake_twilio, clock):
    daemon = daemon_for(burst_seconds=30, notifications={"webhook_secret": SECRET})
    client = daemon.app.test_client()
    requested(MEMBER, "sonarr", SEVERANCE, "Severance", clock)
    for episode in (1, 2, 3):
        assert post(client, "sonarr", sonarr_download([(2, episode)])).status_code == 200
    assert fake_twilio.sent == [], "still gathering"
    daemon.hooks.flush()
    assert [(m["to"], m["body"]) for m in fake_twilio.sent] == [
        (MEMBER, "Severance: S02E01-E03 are ready.")]
    post(client, "sonarr", sonarr_download([(2, 3)], download_id="D4E5F7"))  # deleted, back
    daemon.hooks.flush()
    assert len(fake_twilio.sent) == 2 and fake_twilio.sent[1]["body"] == (
        "Severance: S02E03 is ready.")


def test_upgrades_notify_nobody(client, fake_twilio, clock):
    requested(ADMIN, "radarr", DUNE_TWO, "Dune: Part Two", clock)
    assert post(client, "radarr", radarr_download(upgrade=True)).status_code == 200
    assert fake_twilio.sent == []


def test_opted_out_requester_is_skipped(client, fake_twilio, clock):
    requested(ADMIN, "radarr", DUNE_TWO, "Dune: Part Two", clock)
    requested(MEMBER, "radarr", DUNE_TWO, "Dune: Part Two", clock)
    db.User.update(opted_out=True).where(db.User.phone == ADMIN).execute()
    post(client, "radarr", radarr_download())
    assert [m["to"] for m in fake_twilio.sent] == [MEMBER]


def test_wrong_or_missing_secret_gets_401(client, fake_twilio, clock):
    requested(ADMIN, "radarr", DUNE_TWO, "Dune: Part Two", clock)
    assert post(client, "radarr", radarr_download(), password="guess").status_code == 401
    assert client.post("/hooks/radarr", json=radarr_download()).status_code == 401
    assert fake_twilio.sent == []


def test_no_secret_configured_refuses_the_hooks(daemon_for, fake_twilio):
    client = daemon_for(notifications={"webhook_secret": ""}).app.test_client()
    assert post(client, "radarr", {"eventType": "Test"}, password="").status_code == 403


def test_malformed_json_is_400_and_sends_nothing(client, fake_twilio, clock):
    requested(ADMIN, "radarr", DUNE_TWO, "Dune: Part Two", clock)
    response = client.post("/hooks/radarr", data="{not json", headers={
        **basic(SECRET), "Content-Type": "application/json"})
    assert response.status_code == 400
    assert post(client, "radarr", {"eventType": "Download", "movie": {}}).status_code == 400
    assert fake_twilio.sent == []


def test_test_event_and_unknown_events(client):
    assert post(client, "sonarr", {"eventType": "Test", "series": {}}).status_code == 200
    assert post(client, "sonarr", {"eventType": "Grab"}).status_code == 200
    assert post(client, "radarr", {"eventType": "SomethingNew"}).status_code == 200
    assert post(client, "lidarr", {"eventType": "Test"}).status_code == 404


@pytest.mark.parametrize("episodes,text", [
    ({(2, 1)}, "S02E01"),
    ({(2, 1), (2, 2), (2, 3)}, "S02E01-E03"),
    ({(2, 1), (2, 3), (3, 1), (3, 2)}, "S02E01, S02E03, S03E01-E02"),
])
def test_episode_ranges(episodes, text):
    assert episode_ranges(episodes) == text


def test_a_download_with_no_episodes_texts_nobody(client, fake_twilio, clock):
    requested(MEMBER, "sonarr", SEVERANCE, "Severance", clock)
    assert post(client, "sonarr", sonarr_download([])).status_code == 200
    assert fake_twilio.sent == []


def test_notify_me_through_the_model_adds_a_second_recipient(daemon_for, stack, fake_llm,
                                                             fake_twilio, clock):
    """Alex added Dune: Part Two; Sam asks the bot to be told too; both get the text."""
    from mediabot.trial.sim.arr import API_KEY
    from mediabot.trial.sim.arr_fixtures import DUNE_TWO_TMDB

    daemon = daemon_for(notifications={"webhook_secret": SECRET},
                        radarr={"url": stack.servers["radarr"].url, "api_key": API_KEY})
    requested(ADMIN, "radarr", DUNE_TWO_TMDB, "Dune: Part Two", clock)
    sam = db.User.get(phone=MEMBER).id
    fake_llm.enqueue_tool_calls([("notify_me", {"kind": "movie", "id": DUNE_TWO_TMDB})])
    fake_llm.enqueue_text("I'll text you when Dune: Part Two is ready.")
    assert daemon.engine.handle(sam, "tell me when dune part two is ready") == (
        "I'll text you when Dune: Part Two is ready.")
    client = daemon.app.test_client()
    post(client, "radarr", radarr_download(tmdb_id=DUNE_TWO_TMDB))
    assert sorted(m["to"] for m in fake_twilio.sent) == sorted([ADMIN, MEMBER])
    assert all(m["body"] == "Dune: Part Two is ready to watch." for m in fake_twilio.sent)


def test_gathered_episodes_survive_a_restart_and_go_out_when_due(daemon_for, fake_twilio,
                                                                 clock):
    first = daemon_for(burst_seconds=60, notifications={"webhook_secret": SECRET})
    requested(MEMBER, "sonarr", SEVERANCE, "Severance", clock)
    client = first.app.test_client()
    post(client, "sonarr", sonarr_download([(2, 4)]))
    post(client, "sonarr", sonarr_download([(2, 5)]))
    first.worker.shutdown(1)  # the process dies here: nothing was sent yet
    second = daemon_for(burst_seconds=60, notifications={"webhook_secret": SECRET})
    assert second.hooks.send_due(clock() + dt.timedelta(seconds=30)) == 0, "still gathering"
    assert second.hooks.send_due(clock() + dt.timedelta(seconds=61)) == 1
    assert [(m["to"], m["body"]) for m in fake_twilio.sent] == [
        (MEMBER, "Severance: S02E04-E05 are ready.")]
    assert second.hooks.send_due(clock() + dt.timedelta(seconds=120)) == 0, "sent once"


def test_imports_nobody_asked_for_store_nothing(client, fake_twilio):
    assert post(client, "radarr", radarr_download(tmdb_id=4242)).status_code == 200
    assert db.Notice.select().count() == 0 and fake_twilio.sent == []


def test_an_episode_import_during_shutdown_is_told_at_once_not_lost(daemon_for, fake_twilio,
                                                                    clock):
    """A Sonarr hook still in flight as the daemon stops must not start a burst timer
    that the exiting process never lets fire."""
    daemon = daemon_for(burst_seconds=30, notifications={"webhook_secret": SECRET})
    client = daemon.app.test_client()
    record_request(db.User.get(phone=ADMIN).id, "sonarr", SEVERANCE, "Severance", clock())
    daemon.stop()
    try:
        response = client.post("/hooks/sonarr", json=sonarr_download([(2, 1)]),
                               headers=basic(SECRET))
        assert response.status_code == 200
        assert fake_twilio.bodies() == ["Severance: S02E01 is ready."]
    finally:
        daemon.hooks.flush()  # no timer outlives the test
