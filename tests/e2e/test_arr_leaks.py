"""Sonarr/Radarr error bodies that quote the request URL (API key and search term in it)
never get past the arr client: not into the log, the stored tool result, the model's
request or ``mediabot history show``. Through the daemon, over real HTTP."""

import json
import logging

import pytest
from click.testing import CliRunner

from mediabot.cli import main
from mediabot.store import db
from mediabot.trial.sim.arr import API_KEY
from mediabot.trial.sim.arr_fixtures import SEVERANCE_TVDB
from tests.support.asking import ask_why
from tests.support.config_files import write_config
from tests.support.household import ADMIN, MEMBER
from tests.support.sent import sent_to
from tests.support.texting import text

TERM = "Zebulon Quartz"
QUERY_MARKS = ("term=", "Zebulon+Quartz", "Zebulon%20Quartz")


@pytest.fixture
def daemon(daemon_for, stack):
    return daemon_for(sonarr_url=stack.servers["sonarr"].url,
                      radarr_url=stack.servers["radarr"].url,
                      sonarr={"api_key": API_KEY}, radarr={"api_key": API_KEY})


def history_show(tmp_path) -> str:
    config = write_config(tmp_path, server={"public_url": "https://sms.example.com"},
                          database={"path": tmp_path / "m.db"})
    result = CliRunner().invoke(main, ["history", "show", ADMIN, "--config", str(config)])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("status, as_json", [(400, True), (401, True), (404, True),
                                             (500, True), (400, False), (500, False)])
def test_an_error_body_quoting_the_url_leaks_neither_key_nor_query(
        daemon, stack, fake_llm, fake_twilio, caplog, tmp_path, status, as_json):
    caplog.set_level(logging.DEBUG)
    for fake in (stack.sonarr, stack.radarr):
        fake.echo_status, fake.echo_json = status, as_json
    fake_llm.enqueue_tool_calls([("search_media", {"query": TERM})])
    fake_llm.enqueue_text("Sorry, the search failed.")
    assert text(daemon.app.test_client(), f"find {TERM}").status_code == 200
    assert daemon.worker.wait_idle(10)

    assert fake_twilio.bodies() == ["Sorry, the search failed."], "the household is answered"
    assert stack.sonarr.requests[-1].status == status, "the echoing body was really served"
    ours = [r for r in caplog.records if r.name != "werkzeug"]  # not the fakes' access log
    assert not [r.getMessage() for r in ours if API_KEY in r.getMessage()
                or any(mark in r.getMessage() for mark in QUERY_MARKS)]
    assert not [r.getMessage() for r in ours
                if r.levelno >= logging.INFO and TERM.lower() in r.getMessage().lower()]
    stored = [m.content for m in db.Message.select().where(db.Message.role == "tool")]
    assert len(stored) == 1 and "error" in json.loads(stored[0])
    seen_by_model = json.dumps(fake_llm.requests[-1])
    shown = history_show(tmp_path)
    for where, what in (("stored tool result", stored[0]), ("model request", seen_by_model),
                        ("history show", shown)):
        assert API_KEY not in what, f"the API key reached the {where}"
        assert not any(mark in what for mark in QUERY_MARKS), f"the query reached the {where}"
    assert TERM not in stored[0], "the search term is not echoed back in the tool result"


def test_a_queue_warning_quoting_a_download_clients_url_keeps_its_key_out(
        daemon, stack, fake_llm, fake_twilio, tmp_path):
    """Sonarr passes on what the download client said, URL and all: the warning reaches the
    model without the client's apikey= or our own key."""
    record = stack.sonarr.queue[0]
    record.update(trackedDownloadStatus="warning", errorMessage=(
        "Unable to connect to SABnzbd at http://sab.lan:8080/sabnzbd/api?mode=queue"
        f"&apikey=SABKEY0123456789 (our key {API_KEY})"))
    fake_llm.enqueue_tool_calls([("download_queue", {})])
    fake_llm.enqueue_text("One download has a problem with SABnzbd.")
    assert text(daemon.app.test_client(), "what's downloading?").status_code == 200
    assert daemon.worker.wait_idle(10)

    stored = db.Message.get(db.Message.role == "tool").content
    assert "Unable to connect to SABnzbd at http://sab.lan:8080/sabnzbd/api" in stored
    for where, what in (("stored tool result", stored), ("history show", history_show(tmp_path)),
                        ("model request", json.dumps(fake_llm.requests[-1]))):
        assert "SABKEY0123456789" not in what and "mode=queue" not in what, where
        assert API_KEY not in what, where


QBIT_PASSWORD = "hunter2"
QBIT_WARNING = (f"Unable to connect to qBittorrent at http://admin:{QBIT_PASSWORD}@qbit.lan:8080"
                "/api/v2 (Forbidden)")


def test_a_download_clients_password_in_a_queue_status_reaches_no_sms_model_or_log(
        house, stack, fake_llm, fake_twilio, caplog):
    """Sonarr quotes qBittorrent's URL, userinfo and all, in a stalled download's status:
    the member's text, every request the model got and the log keep the host, not the
    password (issue 18, point 7)."""
    caplog.set_level(logging.DEBUG)
    stalled = next(r for r in stack.sonarr.queue if r["statusMessages"])
    stalled["statusMessages"][0]["messages"] = [QBIT_WARNING]
    reply = ask_why(house(), fake_llm, "series", SEVERANCE_TVDB)

    assert "S02E06 stuck at 0%: Unable to connect to qBittorrent at http://qbit.lan:8080/api/v2 " \
           "(Forbidden)" in reply, "the member still learns what is wrong, and where"
    assert sent_to(fake_twilio, MEMBER) == [reply]
    for where, what in (("the member's SMS", reply), ("a model request",
                                                     json.dumps(fake_llm.requests)),
                        ("the log", "\n".join(r.getMessage() for r in caplog.records))):
        assert QBIT_PASSWORD not in what and "admin:" not in what, where
