"""The "ready to watch" texts (``arr/notices.py``): only the people who asked are told, once,
whatever Sonarr and Radarr send (per-file and On Import Complete events, upgrades, repeats,
deletes, a season pack), with a series' episodes gathered into one text. Through the
daemon's /hooks, in process and over real HTTP on loopback."""

import datetime as dt

import pytest

from mediabot.arr.notices import episode_ranges
from mediabot.arr.wanted import record_request
from mediabot.store import db
from mediabot.trial.sim.arr_fixtures import DUNE_TWO_TMDB
from mediabot.webhooks.downloads import BODY_LIMIT
from tests.fakes import arr_webhooks as arr
from tests.support.arr_hooks import basic, post_hook, radarr_download, send_hook, sonarr_download
from tests.support.asking import requested
from tests.support.household import ADMIN, MEMBER, SECRET, SEVERANCE


def test_movie_import_texts_only_the_requesters_once(client, fake_twilio, clock):
    db.User.create(phone="+15550009999", display_name="Bystander")
    requested(ADMIN, "radarr", DUNE_TWO_TMDB, "Dune: Part Two", clock)
    requested(MEMBER, "radarr", 99999, "Something else", clock)
    assert post_hook(client, "radarr", radarr_download()).status_code == 200
    assert post_hook(client, "radarr", radarr_download()).status_code == 200, "delivered twice"
    assert [(m["to"], m["body"]) for m in fake_twilio.sent] == [
        (ADMIN, "Dune: Part Two is ready to watch.")]


def test_a_ready_text_is_queued_as_a_notice_about_its_request(client, fake_twilio, clock):
    """What the held-text rule and the WhatsApp templates read: the row's kind and subject."""
    requested(MEMBER, "radarr", DUNE_TWO_TMDB, "Dune: Part Two", clock)
    post_hook(client, "radarr", radarr_download())
    [request], [row] = db.Request.select(), db.Outbox.select()
    assert (row.kind, row.subject) == ("ready", request.id)


def test_notify_me_adds_a_second_recipient(client, fake_twilio, clock):
    requested(ADMIN, "radarr", DUNE_TWO_TMDB, "Dune: Part Two", clock)
    requested(MEMBER, "radarr", DUNE_TWO_TMDB, "Dune: Part Two", clock)
    post_hook(client, "radarr", radarr_download())
    assert sorted(m["to"] for m in fake_twilio.sent) == sorted([ADMIN, MEMBER])


def test_series_burst_is_gathered_into_one_text(daemon_for, fake_twilio, clock):
    daemon = daemon_for(burst_seconds=30, notifications={"webhook_secret": SECRET})
    client = daemon.app.test_client()
    requested(MEMBER, "sonarr", SEVERANCE, "Severance", clock)
    for episode in (1, 2, 3):
        assert post_hook(client, "sonarr", sonarr_download([(2, episode)])).status_code == 200
    assert fake_twilio.sent == [], "still gathering"
    daemon.hooks.flush()
    assert [(m["to"], m["body"]) for m in fake_twilio.sent] == [
        (MEMBER, "Severance: S02E01-E03 are ready.")]
    post_hook(client, "sonarr", sonarr_download([(2, 3)], download_id="D4E5F7"))  # deleted, back
    daemon.hooks.flush()
    assert len(fake_twilio.sent) == 2 and fake_twilio.sent[1]["body"] == (
        "Severance: S02E03 is ready.")


def test_upgrades_notify_nobody(client, fake_twilio, clock):
    requested(ADMIN, "radarr", DUNE_TWO_TMDB, "Dune: Part Two", clock)
    assert post_hook(client, "radarr", radarr_download(upgrade=True)).status_code == 200
    assert fake_twilio.sent == []


def test_opted_out_requester_is_skipped(client, fake_twilio, clock):
    requested(ADMIN, "radarr", DUNE_TWO_TMDB, "Dune: Part Two", clock)
    requested(MEMBER, "radarr", DUNE_TWO_TMDB, "Dune: Part Two", clock)
    db.User.update(opted_out=True).where(db.User.phone == ADMIN).execute()
    post_hook(client, "radarr", radarr_download())
    assert [m["to"] for m in fake_twilio.sent] == [MEMBER]


@pytest.mark.parametrize("episodes,text", [
    ({(2, 1)}, "S02E01"),
    ({(2, 1), (2, 2), (2, 3)}, "S02E01-E03"),
    ({(2, 1), (2, 3), (3, 1), (3, 2)}, "S02E01, S02E03, S03E01-E02"),
])
def test_episode_ranges(episodes, text):
    assert episode_ranges(episodes) == text


def test_a_download_with_no_episodes_texts_nobody(client, fake_twilio, clock):
    requested(MEMBER, "sonarr", SEVERANCE, "Severance", clock)
    assert post_hook(client, "sonarr", sonarr_download([])).status_code == 200
    assert fake_twilio.sent == []


def test_notify_me_through_the_model_adds_a_second_recipient(daemon_for, stack, fake_llm,
                                                             fake_twilio, clock):
    """Alex added Dune: Part Two; Sam asks the bot to be told too; both get the text."""
    from mediabot.trial.sim.arr import API_KEY

    daemon = daemon_for(notifications={"webhook_secret": SECRET},
                        radarr={"url": stack.servers["radarr"].url, "api_key": API_KEY})
    requested(ADMIN, "radarr", DUNE_TWO_TMDB, "Dune: Part Two", clock)
    sam = db.User.get(phone=MEMBER).id
    fake_llm.enqueue_tool_calls([("notify_me", {"kind": "movie", "id": DUNE_TWO_TMDB})])
    fake_llm.enqueue_text("I'll text you when Dune: Part Two is ready.")
    assert daemon.engine.handle(sam, "tell me when dune part two is ready") == (
        "I'll text you when Dune: Part Two is ready.")
    client = daemon.app.test_client()
    post_hook(client, "radarr", radarr_download(tmdb_id=DUNE_TWO_TMDB))
    assert sorted(m["to"] for m in fake_twilio.sent) == sorted([ADMIN, MEMBER])
    assert all(m["body"] == "Dune: Part Two is ready to watch." for m in fake_twilio.sent)


def test_gathered_episodes_survive_a_restart_and_go_out_when_due(daemon_for, fake_twilio,
                                                                 clock):
    first = daemon_for(burst_seconds=60, notifications={"webhook_secret": SECRET})
    requested(MEMBER, "sonarr", SEVERANCE, "Severance", clock)
    client = first.app.test_client()
    post_hook(client, "sonarr", sonarr_download([(2, 4)]))
    post_hook(client, "sonarr", sonarr_download([(2, 5)]))
    first.worker.shutdown(1)  # the process dies here: nothing was sent yet
    second = daemon_for(burst_seconds=60, notifications={"webhook_secret": SECRET})
    assert second.hooks.send_due(clock() + dt.timedelta(seconds=30)) == 0, "still gathering"
    assert second.hooks.send_due(clock() + dt.timedelta(seconds=61)) == 1
    assert [(m["to"], m["body"]) for m in fake_twilio.sent] == [
        (MEMBER, "Severance: S02E04-E05 are ready.")]
    assert second.hooks.send_due(clock() + dt.timedelta(seconds=120)) == 0, "sent once"


def test_imports_nobody_asked_for_store_nothing(client, fake_twilio):
    assert post_hook(client, "radarr", radarr_download(tmdb_id=4242)).status_code == 200
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


# -- upgrades are not announced again; repeats text once -----------------------------------

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


# -- a season pack is one text; a title is one clean line; a delete forgets who asked ------

def test_a_60_episode_season_pack_is_accepted_and_told_in_one_text(loopback_daemon, fake_twilio,
                                                                   clock):
    daemon = loopback_daemon()
    requested(ADMIN, "sonarr", arr.SEVERANCE_TVDB, "Severance", clock)
    pack = arr.season_pack(count=60)
    assert 80_000 < len(arr.to_json(pack)) < BODY_LIMIT
    response = send_hook(daemon, "sonarr", pack)
    assert response.status_code == 200, response.text
    assert fake_twilio.bodies() == ["Severance: S02E01-E60 are ready."]


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
