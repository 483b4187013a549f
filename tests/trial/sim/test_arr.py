"""The fakes answer as the real servers do where arrapi and the tools depend on it."""

import pytest
import requests

from mediabot.trial.sim.arr import API_KEY
from mediabot.trial.sim.arr_fixtures import OFFICE_TVDB
from tests.fakes.arr_stack import ArrStack


@pytest.fixture
def stack():
    stack = ArrStack()
    yield stack
    stack.close()


def get(stack, kind, path, key=API_KEY, **params):
    return requests.get(f"{stack.servers[kind].url}/api/v3/{path}",
                        params={"apikey": key, **params}, timeout=2)


def test_wrong_or_missing_key_is_401_with_an_empty_body(stack):
    for key in ("wrong", ""):
        response = get(stack, "sonarr", "system/status", key=key)
        assert response.status_code == 401 and response.content == b""
    headers = {"X-Api-Key": API_KEY}
    assert requests.get(f"{stack.servers['radarr'].url}/api/v3/system/status",
                        headers=headers, timeout=2).json()["appName"] == "Radarr"


def test_paths_are_case_insensitive_and_unknown_routes_404_empty(stack):
    assert get(stack, "sonarr", "qualityProfile").status_code == 200
    assert get(stack, "sonarr", "RootFolder").json()[0]["path"] == "/tv"
    missing = get(stack, "sonarr", "nonsense")
    assert missing.status_code == 404 and missing.content == b""


def test_missing_resource_is_problem_json(stack):
    response = get(stack, "radarr", "movie/999")
    assert response.status_code == 404
    assert response.headers["Content-Type"].startswith("application/problem+json")
    assert response.json()["title"] == "Not Found"


def test_lookup_carries_the_library_id_only_for_library_items(stack):
    hits = get(stack, "sonarr", "series/lookup", term="the office").json()
    assert hits[0]["tvdbId"] == OFFICE_TVDB and hits[0]["id"] == 1
    assert all("id" not in hit for hit in hits[1:])
    assert get(stack, "sonarr", "series/lookup", term="tvdb:1").json() == []
    assert all(v.endswith("Z") for v in (hits[0]["added"], hits[0]["firstAired"]))


def test_duplicate_add_is_a_400_list(stack):
    existing = get(stack, "radarr", "movie/1").json()
    response = requests.post(f"{stack.servers['radarr'].url}/api/v3/movie",
                             params={"apikey": API_KEY}, json=existing, timeout=2)
    assert response.status_code == 400
    assert response.json()[0]["errorMessage"] == "This movie has already been added"


def test_queue_is_paged(stack):
    page = get(stack, "sonarr", "queue", page=2, pageSize=4).json()
    assert page["totalRecords"] == 6 and len(page["records"]) == 2 and page["page"] == 2


def test_language_profiles_exist_only_on_sonarr_v3(stack):
    assert get(stack, "sonarr", "languageprofile").status_code == 404
    v3 = ArrStack(sonarr_version="3.0.10.1567")
    try:
        assert get(v3, "sonarr", "languageprofile").json()[0]["name"] == "English"
    finally:
        v3.close()
