"""One id per title, its kind in it: what search_media's hits carry, what the tools take,
and the shapes of the calls made before it, turned into it."""

import pytest

from mediabot.arr.tools.base import ToolError
from mediabot.arr.tools.title_ids import (
    MALFORMED,
    TitleId,
    former_ids,
    kind_of,
    parse_title_id,
    title_id,
)


def test_a_series_is_tv_and_its_tvdb_id_a_movie_m_and_its_tmdb_id():
    assert title_id("series", 78107) == "tv78107" and title_id("movie", 841) == "m841"
    assert parse_title_id("tv78107") == TitleId("series", 78107)
    assert parse_title_id("m841") == TitleId("movie", 841)
    assert str(parse_title_id("m841")) == "m841"


@pytest.mark.parametrize("number", [None, 0, -5, True, "841"])
def test_no_id_is_made_of_a_number_the_server_did_not_give(number):
    assert title_id("movie", number) is None


@pytest.mark.parametrize("value", ["x12", "tv", "m-5", "m", "", "m0", "m0841", "TV78107",
                                   "tv78107\n", " m841", "tv78.1", 841, None, ["m841"]])
def test_anything_else_is_answered_with_the_form_to_send(value):
    with pytest.raises(ToolError) as caught:
        parse_title_id(value)
    assert str(caught.value) == MALFORMED == ("id must be one search_media gave, like "
                                              "tv78107 or m841")


@pytest.mark.parametrize("raw, now", [
    ({"tmdb_id": 5}, {"id": "m5"}),
    ({"tvdb_id": 6, "seasons": [1]}, {"seasons": [1], "id": "tv6"}),
    ({"kind": "movie", "id": 5}, {"id": "m5"}),
    ({"kind": "series", "id": 6, "delete_files": True}, {"delete_files": True, "id": "tv6"}),
    ({"tvdb_id": 0}, {"id": "tv0"}),          # then answered as malformed
])
def test_calls_made_before_name_the_same_title_by_its_one_id(raw, now):
    assert former_ids(raw) == now


@pytest.mark.parametrize("raw", [
    {"id": "tv6"}, {"id": 6}, {"tmdb_id": 5, "tvdb_id": 6}, {"tvdb_id": "6"},
    {"tvdb_id": True}, {"kind": "book", "id": 5}, {"tmdb_id": 5, "id": "m6"},
    {"kind": "movie", "id": "m5"}, {},
])
def test_what_fits_no_former_shape_is_left_for_the_schema_to_answer(raw):
    assert former_ids(raw) == raw


def test_a_results_kind_is_its_ids_or_its_kind_where_it_has_no_id():
    assert kind_of({"id": "tv1", "title": "x"}) == "series"
    assert kind_of({"id": "m1"}) == "movie"
    assert kind_of({"kind": "movie", "title": "no id given"}) == "movie"
    assert kind_of({}) is None
