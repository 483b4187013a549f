"""Webhook bodies are read into events, or refused with one line naming what is wrong."""

import json

import pytest

from mediabot.arr.events import MAX_DEPTH, PayloadError, _depth, read_event
from tests.fakes import arr_webhooks as arr


def read(service, payload):
    return read_event(service, payload if isinstance(payload, bytes) else arr.to_json(payload))


@pytest.mark.parametrize("service, payload, kind", [
    ("sonarr", arr.sonarr_test(), "test"), ("sonarr", arr.v3_test(), "test"),
    ("radarr", arr.radarr_test(), "test"),
    ("sonarr", arr.sonarr_grab([(2, 1)]), "other"), ("radarr", arr.radarr_grab(), "other"),
    ("sonarr", arr.health(), "other"), ("radarr", arr.application_update("Radarr"), "other"),
    ("sonarr", arr.sonarr_series_delete(), "delete"),
    ("radarr", arr.radarr_movie_delete(), "delete"),
    ("sonarr", arr.sonarr_episode_file_delete(2, 7), "file_delete"),
])
def test_every_real_event_shape_is_read(service, payload, kind):
    assert read(service, payload).kind == kind


def test_imports_say_upgrade_true_false_or_nothing():
    per_file = read("sonarr", arr.sonarr_download(2, 7, upgrade=True, download_id="X1"))
    assert (per_file.kind, per_file.external_id, per_file.title, per_file.episodes,
            per_file.upgrade, per_file.download_id) == (
        "import", arr.SEVERANCE_TVDB, "Severance", {(2, 7)}, True, "X1")
    assert read("sonarr", arr.v3_download(2, 1)).upgrade is False
    complete = read("sonarr", arr.season_pack(count=60))
    assert complete.upgrade is None and len(complete.episodes) == 60
    manual = read("sonarr", arr.sonarr_download(2, 1, download_id=None))
    assert manual.download_id is None
    movie = read("radarr", arr.radarr_download(upgrade=True))
    assert (movie.external_id, movie.title, movie.upgrade) == (
        arr.DUNE_TWO_TMDB, "Dune: Part Two", True)
    assert read("sonarr", arr.sonarr_episode_file_delete(2, 7, "upgrade")).delete_reason == (
        "upgrade")


def test_real_payloads_nest_far_less_than_the_limit():
    assert _depth(json.loads(arr.to_json(arr.season_pack()))) <= 6 < MAX_DEPTH


def _bad(path_value):
    payload = arr.sonarr_download(2, 1)
    target = payload
    *parents, key = path_value[0]
    for part in parents:
        target = target[part]
    if path_value[1] is KeyError:
        del target[key]
    else:
        target[key] = path_value[1]
    return payload


@pytest.mark.parametrize("change, line", [
    ((["series", "tvdbId"], 0), "series.tvdbId must be a whole number from 1 to 2147483647, "
                                "got 0"),
    ((["series", "tvdbId"], 2**31), "series.tvdbId must be a whole number from 1 to "
                                    "2147483647, got 2147483648"),
    ((["series", "tvdbId"], "371980"), 'series.tvdbId must be a whole number from 1 to '
                                       '2147483647, got "371980" (a string)'),
    ((["series", "tvdbId"], KeyError), "series.tvdbId must be a whole number from 1 to "
                                       "2147483647, but it is missing"),
    ((["series", "title"], ["Severance"]), "series.title must be a string, got a list"),
    ((["series"], None), "series must be an object, got null"),
    ((["episodes"], {"0": 1}), "episodes must be a list, got an object"),
    ((["episodes", 0, "seasonNumber"], -1), "episodes[0].seasonNumber must be a whole "
                                            "number from 0 to 9999, got -1"),
    ((["episodes", 0, "episodeNumber"], 1.0), "episodes[0].episodeNumber must be a whole "
                                              "number from 0 to 99999, got 1.0"),
    ((["isUpgrade"], 0), "isUpgrade must be true or false, got 0"),
    ((["isUpgrade"], None), "isUpgrade must be true or false, got null"),
    ((["downloadId"], 12345), "downloadId must be a string of at most 255 characters, "
                              "got 12345"),
    ((["eventType"], 5), "eventType must name a Sonarr/Radarr event, got 5"),
])
def test_wrong_fields_are_named_in_one_line(change, line):
    with pytest.raises(PayloadError) as refused:
        read("sonarr", _bad(change))
    assert str(refused.value) == line


@pytest.mark.parametrize("body, line", [
    (b"\xff\xfe{}", "the body is not UTF-8 text"),
    (b"", "the body is not JSON (Expecting value at line 1 column 1)"),
    (b"[1, 2]", "the body must be a JSON object (Sonarr/Radarr webhook JSON)"),
    (b'{"eventType": "Test", "n": -Infinity}', "-Infinity is not a JSON number"),
    (b'{"eventType": "Test", "n": 1e400}', "the number 1e400 is out of range"),
    (b'{"eventType": "Test", "n": ' + b"9" * 5000 + b"}",
     "the number 9999999999999999999999999999999999999... is out of range (more than 64 "
     "bits)"),
    (b'{"eventType": "Test", "a": ' + b'{"b": ' * 40 + b"1" + b"}" * 40 + b"}",
     "the JSON is nested deeper than 32 levels"),
])
def test_bodies_out_of_bounds_are_refused_in_one_line(body, line):
    with pytest.raises(PayloadError) as refused:
        read_event("radarr", body)
    assert str(refused.value) == line


def test_a_body_of_many_tiny_values_is_refused_before_parsing():
    """1 MiB of "{}," would be 350,000 objects (about 50 MB and 1.5 s of checking)."""
    body = b'{"eventType": "Test", "x": [' + b",".join([b"{}"] * 349_000) + b"]}"
    with pytest.raises(PayloadError) as refused:
        read_event("sonarr", body)
    assert str(refused.value) == "the JSON has more than 60000 values"
    big_pack = arr.to_json(arr.sonarr_import_complete([(1, n) for n in range(1, 700)]))
    assert len(big_pack) < 1024 * 1024 and len(read_event("sonarr", big_pack).episodes) == 699


def test_more_episodes_than_any_pack_are_refused():
    payload = {"eventType": "Download", "series": arr.v4_series(),
               "episodes": [{"seasonNumber": 1, "episodeNumber": n} for n in range(1, 5002)]}
    with pytest.raises(PayloadError, match="episodes lists 5001; at most 5000 are accepted"):
        read("sonarr", payload)


def test_unknown_events_and_unused_fields_pass_for_newer_versions():
    payload = arr.sonarr_download(2, 1)
    payload["somethingNew"] = {"nested": [1.5, "x", None]}
    assert read("sonarr", payload).kind == "import"
    assert read("sonarr", {"eventType": "SeriesAdd", "series": {}}).kind == "other"
