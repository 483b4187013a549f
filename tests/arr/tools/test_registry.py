"""The registry the engine uses: visibility by role and service, OpenAI schemas, argument
checking and run_tool's never-raise contract. No server is needed for most of these."""

import json

import pytest

from mediabot.arr.tools import (
    ToolContext,
    ToolError,
    available_tools,
    describe_action,
    get_tool,
    parse_arguments,
    run_tool,
    tool_schemas,
)
from mediabot.arr.tools.base import Service, Tier, Tool
from mediabot.store.db import Role

ALL = ["search_media", "add_media", "remove_media", "download_queue", "upcoming",
       "search_again"]


def names(tools) -> list[str]:
    return [tool.name for tool in tools]


def test_admins_see_every_tool_and_members_cannot_see_remove():
    assert names(available_tools("admin", sonarr=True, radarr=True)) == ALL
    assert "remove_media" not in names(available_tools("member", sonarr=True, radarr=True))


def test_tools_follow_the_configured_services():
    movies_only = names(available_tools("admin", sonarr=False, radarr=True))
    assert "add_media" in movies_only and "search_again" in movies_only
    assert available_tools("admin", sonarr=False, radarr=False) == []


def test_schemas_are_in_openai_format():
    [schema] = tool_schemas([get_tool("remove_media")])
    assert schema["type"] == "function"
    function = schema["function"]
    assert function["name"] == "remove_media" and function["description"]
    assert list(function["parameters"]["properties"]) == ["id", "delete_files"]
    assert function["parameters"]["properties"]["id"] == {"type": "string", "description": ""}
    assert "required" not in function["parameters"], "the tool names a missing id itself"
    assert len(json.dumps(tool_schemas(available_tools("admin", sonarr=True,
                                                       radarr=True)))) < 5000


def test_a_description_says_only_what_the_name_type_and_choices_do_not():
    """Issue 31: a parameter whose name, type and choices say it all (query, kind, the ids,
    days) gets an empty description, but never none: Command R+'s template writes every
    parameter's description and fails without one (the conformance suite renders it).
    Every tool says in words what its name does not, and no description repeats a name."""
    for schema in tool_schemas(available_tools("admin", sonarr=True, radarr=True)):
        function = schema["function"]
        assert function["description"].strip(), function["name"]
        assert function["name"] not in function["description"], function["name"]
        for name, parameter in function["parameters"]["properties"].items():
            assert isinstance(parameter.get("description"), str), f"{function['name']}.{name}"
            assert name not in parameter["description"], f"{function['name']}.{name}"
            if not parameter["description"]:
                assert "type" in parameter or "anyOf" in parameter, f"{function['name']}.{name}"


# Sent on every model call (3,877 bytes before). The 8 tools and 14 parameters of the first
# tool contract (docs/architecture.md, "Tools"), with their types, enums and required lists
# but every description emptied, take
# 2,155 bytes (bench/tool_payload.py prints it), so issue 11's 1.5 KB needs a smaller contract.
# Issue 14 added a ninth tool, search_again (394 bytes with its separator), on top of that.
SCHEMA_BUDGET = 2900 + 394
# Issue 31: add_movie and add_series became add_media, descriptions say only what the names
# do not, quality_profile is no longer shown (2,962 -> 2,394 bytes, compact separators); then
# notify_me folded into add_media, library_status into search_media, one tmdb_id/tvdb_id pair
# for every tool that names a title (2,394 -> 1,529): the 1.5 KB. Then one id per
# title, its kind in it ("tv78107", "m841"), where each took tmdb_id and tvdb_id
# (1,529 -> 1,373).
MERGED_BUDGET = 1373


def test_one_add_tool_for_both_kinds_and_the_former_names_still_run():
    compact = json.dumps(tool_schemas(available_tools("admin", sonarr=True, radarr=True)),
                         separators=(",", ":"))
    assert len(compact) <= MERGED_BUDGET
    assert "quality_profile" not in compact
    assert get_tool("add_movie") is get_tool("add_series") is get_tool("add_media")
    assert parse_arguments(get_tool("add_movie"), {"tmdb_id": 5, "quality_profile": "Any"}) \
        == {"id": "m5", "seasons": "all", "quality_profile": "Any"}
    ctx = ToolContext(sonarr=None, radarr=None)
    for raw in ("{}", '{"id": 841}', '{"id": "x12"}', '{"id": "tv"}', '{"id": "m-5"}',
                '{"id": "m0841"}', '{"id": null}', '{"id": "tv78107 "}'):
        assert json.loads(run_tool(get_tool("add_media"), ctx, raw).for_model()) == {
            "error": "id must be one search_media gave, like tv78107 or m841"}, raw
    assert json.loads(run_tool(get_tool("add_media"), ctx,
                               '{"tmdb_id": 5, "tvdb_id": 6}').for_model()) == {
        "error": "unknown argument tmdb_id; the arguments are: id, seasons, quality_profile"}


@pytest.mark.parametrize("former, raw, now", [
    ("notify_me", {"kind": "movie", "id": 5}, {"id": "m5", "seasons": "all"}),
    ("notify_me", {"kind": "series", "id": 6}, {"id": "tv6", "seasons": "all"}),
    ("remove_media", {"kind": "series", "id": 6, "delete_files": True},
     {"id": "tv6", "delete_files": True}),
    ("search_again", '{"kind": "movie", "id": 7}', {"id": "m7"}),
    ("add_series", {"tvdb_id": 78107, "seasons": [2]}, {"id": "tv78107", "seasons": [2]}),
    ("add_media", {"tmdb_id": 841}, {"id": "m841", "seasons": "all"}),
    ("remove_media", {"tvdb_id": 6}, {"id": "tv6", "delete_files": False}),
    ("search_again", {"tmdb_id": 7}, {"id": "m7"}),
    ("library_status", {"query": "dune", "kind": "any"}, {"query": "dune", "kind": "any"}),
    ("library_status", {"query": "dune", "kind": "series"}, {"query": "dune",
                                                              "kind": "series"}),
])
def test_calls_stored_in_a_former_shape_still_run(former, raw, now):
    """History and held confirmations keep the calls as the model made them: by a former
    name (notify_me, library_status), with ``kind`` and ``id`` for the title, or with
    ``tmdb_id``/``tvdb_id``: each is today's one id."""
    assert parse_arguments(get_tool(former), raw) == now


def test_a_former_shape_that_does_not_fit_is_named():
    with pytest.raises(ToolError) as caught:
        parse_arguments(get_tool("search_again"), {"kind": "book", "id": 5})
    assert str(caught.value) == "unknown argument kind; the arguments are: id"
    with pytest.raises(ToolError) as caught:
        parse_arguments(get_tool("search_again"), {"id": 5})
    assert str(caught.value) == "id must be one search_media gave, like tv78107 or m841"


def test_tool_schemas_stay_small_and_keep_validation_out_of_the_prompt():
    schemas = tool_schemas(available_tools("admin", sonarr=True, radarr=True))
    assert len(json.dumps(schemas)) <= SCHEMA_BUDGET
    text = json.dumps(schemas)
    for keyword in ("additionalProperties", "minimum", "maxLength", "default", "pattern",
                    "x-error"):
        assert f"\"{keyword}\":" not in text
    with pytest.raises(ToolError, match="days must be at most 60"):   # still enforced
        parse_arguments(get_tool("upcoming"), {"days": 61})
    with pytest.raises(ToolError, match="unknown argument season"):
        parse_arguments(get_tool("add_media"), {"tvdb_id": 5, "season": 2})


@pytest.mark.parametrize("raw, expected", [
    ('{"id": "tv5"}', {"id": "tv5", "seasons": "all"}),
    ({"id": "tv5", "seasons": [1, 3]}, {"id": "tv5", "seasons": [1, 3]}),
    ('{"id": "tv5", "seasons": "latest", "quality_profile": "Any"}',
     {"id": "tv5", "seasons": "latest", "quality_profile": "Any"}),
    ('{"tvdb_id": 5}', {"id": "tv5", "seasons": "all"}),
    ({"tvdb_id": 5, "seasons": [1, 3]}, {"id": "tv5", "seasons": [1, 3]}),
    ('{"tvdb_id": 5, "seasons": "latest", "quality_profile": "Any"}',
     {"id": "tv5", "seasons": "latest", "quality_profile": "Any"}),
])
def test_valid_arguments_get_defaults(raw, expected):
    assert parse_arguments(get_tool("add_media"), raw) == expected


@pytest.mark.parametrize("raw, problem", [
    ('{"id": "tv5"', "the arguments are not valid JSON"),
    ("[1]", "the arguments must be a JSON object"),
    ('{"id": 73244}', "id must be one search_media gave, like tv78107 or m841"),
    ('{"id": "73244"}', "id must be one search_media gave, like tv78107 or m841"),
    ('{"id": true}', "id must be one search_media gave, like tv78107 or m841"),
    ('{"id": "tv0"}', "id must be one search_media gave, like tv78107 or m841"),
    ('{"tvdb_id": 0}', "id must be one search_media gave, like tv78107 or m841"),
    ('{"tvdb_id": "73244"}', "unknown argument tvdb_id; the arguments are: id, seasons, "
                             "quality_profile"),
    ('{"id": "tv5", "season": 2}', "unknown argument season; the arguments are: id, seasons, "
                                   "quality_profile"),
    ('{"tvdb_id": 5, "season": 2}', "unknown argument season; the arguments are: id, "
                                    "seasons, quality_profile"),
    ('{"id": "tv5", "seasons": "some"}', "seasons must be one of 'all', 'latest', 'future'"),
    ('{"id": "tv5", "seasons": []}', "seasons must not be an empty list"),
    ('{"tvdb_id": 5, "seasons": [1, "2"]}', "seasons[1] must be a whole number"),
])
def test_invalid_arguments_name_the_problem(raw, problem):
    with pytest.raises(ToolError) as caught:
        parse_arguments(get_tool("add_media"), raw)
    assert problem in str(caught.value)


def test_enum_and_empty_string_checks():
    with pytest.raises(ToolError, match="kind must be one of 'movie', 'series', not 'book'"):
        parse_arguments(get_tool("search_media"), '{"query": "x", "kind": "book"}')
    with pytest.raises(ToolError, match="query must not be empty"):
        parse_arguments(get_tool("search_media"), '{"query": "  "}')
    assert parse_arguments(get_tool("download_queue"), "") == {}
    assert parse_arguments(get_tool("upcoming"), None) == {"days": 7}
    assert parse_arguments(get_tool("download_queue"), "null") == {}
    with pytest.raises(ToolError, match="missing required argument query"):
        parse_arguments(get_tool("search_media"), "null")


def test_runaway_arguments_are_refused_without_being_echoed():
    with pytest.raises(ToolError) as caught:
        parse_arguments(get_tool("search_media"), {"query": "x", "kind": "é" * 5000})
    assert len(str(caught.value)) < 120
    with pytest.raises(ToolError, match="query must be at most 200 characters, not 20000"):
        parse_arguments(get_tool("search_media"), {"query": "dune " * 4000})


def test_run_tool_turns_bad_json_into_an_error_result():
    ctx = ToolContext(sonarr=None, radarr=None)
    result = run_tool(get_tool("search_media"), ctx, "{not json").for_model()
    assert json.loads(result)["error"].startswith("the arguments are not valid JSON")


def test_run_tool_without_any_service():
    ctx = ToolContext(sonarr=None, radarr=None)
    for name in ("download_queue", "upcoming", "search_media"):
        assert json.loads(run_tool(get_tool(name), ctx, '{"query": "x"}' if name[0] == "s"
                                   else "{}").for_model()) == {
            "error": "neither Sonarr nor Radarr is set up on this server"}


def test_a_member_cannot_run_or_describe_remove():
    ctx = ToolContext(sonarr=None, radarr=None, role="member")
    tool = get_tool("remove_media")
    assert json.loads(run_tool(tool, ctx, '{"kind": "movie", "id": 1}').for_model()) == {
        "error": "remove_media is only for admins"}
    with pytest.raises(ToolError, match="only for admins"):
        describe_action(tool, ctx, '{"kind": "movie", "id": 1}')


def test_a_crashing_handler_becomes_an_error_result(caplog):
    def broken(ctx, args):
        raise KeyError("boom")
    tool = Tool(name="broken", description="d", parameters={"type": "object", "properties": {}},
                tier=Tier.SAFE, roles=frozenset({Role.MEMBER}), services=(Service.SONARR,),
                handler=broken)
    result = json.loads(run_tool(tool, ToolContext(sonarr=None, radarr=None), "{}").for_model())
    assert result == {"error": "broken failed unexpectedly; the operator can see why in the log"}
    assert "KeyError" in caplog.text


def test_results_are_compact_json():
    def handler(ctx, args):
        return {"a": [1, 2], "b": "é"}
    tool = Tool(name="t", description="d", parameters={"type": "object"}, tier=Tier.SAFE,
                roles=frozenset({Role.MEMBER}), services=(Service.RADARR,), handler=handler)
    assert run_tool(tool, ToolContext(sonarr=None, radarr=None),
                    {}).for_model() == '{"a":[1,2],"b":"é"}'


def test_a_failed_call_is_read_off_its_result_without_parsing_text():
    result = run_tool(get_tool("download_queue"), ToolContext(sonarr=None, radarr=None), "{}")
    assert result.error == "neither Sonarr nor Radarr is set up on this server"
    assert result.message is None and result.offered == () and result.added == ()


def test_what_a_result_says_is_scrubbed_when_it_becomes_text():
    leak = "qBittorrent at http://admin:hunter2@qbit.lan:8080/api?apikey=abc123xyz is down"
    def handler(ctx, args):
        return {"ok": True, "message": leak}
    tool = Tool(name="t", description="d", parameters={"type": "object"}, tier=Tier.SAFE,
                roles=frozenset({Role.MEMBER}), services=(Service.RADARR,), handler=handler)
    result = run_tool(tool, ToolContext(sonarr=None, radarr=None), {})
    assert result.message == "qBittorrent at http://qbit.lan:8080/api is down"
    assert result.for_model() == ('{"ok":true,"message":"qBittorrent at '
                                  'http://qbit.lan:8080/api is down"}')
    assert result.data["message"] == leak   # the data stays as the tool made it
