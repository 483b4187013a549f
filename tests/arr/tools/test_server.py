"""ArrClient: lazy start, timeouts, the API key kept out of URLs and logs, error wording,
and the operator's check lines — against the fake servers over real HTTP."""

import json
import logging
import time

import pytest

from mediabot.arr.tools import ArrClient, ToolError, get_tool, run_tool
from mediabot.config import ArrConfig
from mediabot.trial.sim.arr import API_KEY
from mediabot.trial.sim.arr_fixtures import OFFICE_UK_TVDB
from mediabot.trial.sim.loopback import LoopbackServer
from tests.fakes.arr_stack import ArrStack


@pytest.fixture
def stack():
    stack = ArrStack(timeout=0.5)
    yield stack
    stack.close()


def search(client: ArrClient) -> str:
    return client.run(lambda api: [s.title for s in api.search_series("office")])


def test_building_a_client_touches_nothing(stack):
    stack.down("sonarr")
    client = stack.client("sonarr")
    assert stack.sonarr.requests == []
    stack.up("sonarr")
    assert "The Office" in search(client)
    assert [r.path for r in stack.sonarr.requests] == ["/api/v3/system/status",
                                                       "/api/v3/series/lookup"]


def test_server_down_then_back(stack):
    client = stack.client("sonarr")
    stack.down("sonarr")
    with pytest.raises(ToolError) as caught:
        search(client)
    assert str(caught.value) == f"Sonarr is not answering at {stack.servers['sonarr'].url}"
    stack.up("sonarr")
    assert "The Office" in search(client)


def test_slow_server_times_out_quickly(stack):
    stack.sonarr.delay = 1.5
    started = time.monotonic()
    with pytest.raises(ToolError, match=r"Sonarr did not answer in time at http://127\.0\.0\.1:"):
        search(stack.client("sonarr"))
    assert time.monotonic() - started < 1.4


def test_slow_server_in_a_tool_result(stack):
    client = stack.client("radarr")
    client.api()
    stack.radarr.delay = 1.5
    ctx = stack.context(sonarr=False, radarr=client)
    result = json.loads(run_tool(get_tool("download_queue"), ctx, "{}").for_model())
    assert result["error"].startswith("Radarr did not answer in time")


def test_wrong_key_is_named_without_showing_it(stack, caplog):
    caplog.set_level(logging.DEBUG)
    ctx = stack.context(api_key="wrong-key-123")
    result = json.loads(run_tool(get_tool("search_media"), ctx, '{"query": "dune"}').for_model())
    assert result["error"] == ("Sonarr rejected the API key — check [sonarr] api_key and "
                               "Radarr rejected the API key — check [radarr] api_key")
    assert stack.sonarr.requests[-1].status == 401
    assert "wrong-key-123" not in caplog.text


def test_api_key_never_in_a_url_or_a_log_line(stack, caplog):
    for name in ("", "urllib3", "werkzeug"):
        caplog.set_level(logging.DEBUG, logger=name)
    ctx = stack.context("admin")
    for name, arguments in [("search_media", {"query": "office"}), ("download_queue", {}),
                            ("upcoming", {}), ("add_series", {"tvdb_id": OFFICE_UK_TVDB})]:
        run_tool(get_tool(name), ctx, arguments)
    stack.down("radarr")
    run_tool(get_tool("download_queue"), ctx, {})
    requests = stack.sonarr.requests + stack.radarr.requests
    assert requests and not any(r.key_in_url for r in requests)
    assert "urllib3" in caplog.text and API_KEY not in caplog.text
    assert logging.getLogger("arrapi").getEffectiveLevel() > logging.DEBUG


def test_errors_never_show_the_key_even_in_the_url():
    config = ArrConfig(url="http://127.0.0.1:9/?apikey=" + API_KEY, api_key=API_KEY,
                       timeout_seconds=0.5)
    with pytest.raises(ToolError) as caught:
        search(ArrClient("sonarr", config))
    assert API_KEY not in str(caught.value)


def test_a_web_page_instead_of_sonarr():
    page = LoopbackServer(lambda environ, start: (start("200 OK", [("Content-Type",
                                                  "text/html")]), [b"<html>login</html>"])[1])
    page.start()
    try:
        config = ArrConfig(url=page.url, api_key=API_KEY, timeout_seconds=0.5)
        with pytest.raises(ToolError, match="did not answer like Sonarr does"):
            search(ArrClient("sonarr", config))
    finally:
        page.stop()


def test_a_duplicate_add_race_is_translated(stack):
    client = stack.client("radarr")
    existing = stack.radarr.library[0]
    with pytest.raises(ToolError, match="already in the library"):
        client.run(lambda api: api._raw.post_movie(existing))


def test_missing_item_is_problem_json_and_translated(stack):
    client = stack.client("sonarr")
    with pytest.raises(ToolError, match="no such series"):
        client.run(lambda api: api.get_series(series_id=999), not_found="no such series")


def test_check_all_good(stack):
    lines = stack.client("sonarr", quality_profile="HD-1080p").check()
    assert all(ok for ok, _ in lines) and len(lines) == 4
    assert lines[0][1].startswith("Sonarr 4.0.14.2939 answers at http://127.0.0.1:")
    assert lines[2][1] == "Sonarr root folder /tv (none configured, using the first; 1.8 TB free)"
    assert lines[3][1] == "Sonarr quality profile HD-1080p (configured)"


def test_check_names_each_problem(stack):
    lines = stack.client("radarr", root_folder="/data/movies", quality_profile="HD-4K").check()
    assert [ok for ok, _ in lines] == [True, True, False, False]
    assert "it has: /movies" in lines[2][1] and "it has: Any, SD" in lines[3][1]
    assert stack.client("radarr", api_key="nope").check() == [
        (True, f"Radarr answers at {stack.servers['radarr'].url}"),
        (False, "Radarr rejected the API key — check [radarr] api_key")]
    stack.down("radarr")
    [(ok, line)] = stack.client("radarr").check()
    assert not ok and line.endswith("— is it running? Check [radarr] url")


def test_what_the_user_asked_for_stays_out_of_the_info_log(stack, caplog):
    """'nothing matches ...' quotes the user's words: the model sees it, the log at INFO not."""
    from tests.fakes.arr_stack import call_tool

    caplog.set_level(logging.INFO, logger="mediabot")
    result = call_tool(stack.context(), "search_media", query="zzqx private wish", kind="movie")
    assert "zzqx private wish" in result["error"]
    ours = [r for r in caplog.records if r.name.startswith("mediabot")]
    assert ours, "the failure itself is logged"
    assert all("zzqx" not in r.getMessage() for r in ours if r.levelno >= logging.INFO)


@pytest.mark.parametrize("text, words, expected", [
    ("GET http://arr:8989/api/v3/series/lookup?term=dune&apikey=SECRET failed",
     (), "GET http://arr:8989/api/v3/series/lookup failed"),
    ("'/api/v3/movie?tmdbId=5' said no", (), "'/api/v3/movie' said no"),
    ("key SECRET or apikey=other in a header", (), "key *** or apikey=*** in a header"),
    ("Search for 'Dune Messiah' failed", ("dune messiah",), "Search for '***' failed"),
    ("What? Really?", (), "What? Really?"),
    ("Is it he/she? Or /them?x", (), "Is it he/she? Or /them?x"),   # a query has a key=value
])
def test_scrub_drops_keys_queries_and_the_requests_words(text, words, expected):
    from mediabot.text.masking import scrub

    assert scrub(text, ["SECRET"], words) == expected
