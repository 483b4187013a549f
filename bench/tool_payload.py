"""How much smaller a tool result is than the Sonarr/Radarr JSON it was made from.

Runs the simulated servers (mediabot/sim) on loopback, calls the real tools through arrapi and
prints JSON: for each case the raw response bytes of the endpoint(s) the result came from,
the result's bytes, and their ratio (target <= 0.10); and the size of the tool schemas sent
on every model call (an admin with both services). Run from the repository root:

    .venv/bin/python bench/tool_payload.py
"""

import argparse
import json
import pathlib
import sys

CASES = [
    ("queue", "download_queue", {}, ("queue",)),
    ("calendar", "upcoming", {"days": 60}, ("calendar",)),
    ("lookup_series", "search_media", {"query": "office", "kind": "series"},
     ("series/lookup",)),
    ("lookup_movies", "search_media", {"query": "dune", "kind": "movie"}, ("movie/lookup",)),
    ("lookup_any", "search_media", {"query": "dune"}, ("series/lookup", "movie/lookup")),
]


def measure(stack, tool_name: str, arguments: dict, paths: tuple[str, ...]) -> dict:
    from mediabot.arr.tools import get_tool, run_tool
    fakes = (stack.sonarr, stack.radarr)
    before = [len(fake.requests) for fake in fakes]
    result = run_tool(get_tool(tool_name), stack.context("admin"), arguments).for_model()
    raw = sum(record.response_bytes
              for fake, start in zip(fakes, before, strict=True) for record in fake.requests[start:]
              if record.path.removeprefix("/api/v3/") in paths)
    size = len(result.encode())
    return {"raw_bytes": raw, "result_bytes": size, "ratio": round(size / raw, 3)}


def schema_size() -> dict:
    """Bytes of the ``tools=`` list: json.dumps' default form, what the openai SDK sends
    (compact separators), and the floor: the same tools with every description emptied."""
    from mediabot.arr.tools import available_tools, tool_schemas
    schemas = tool_schemas(available_tools("admin", sonarr=True, radarr=True))
    bare = json.loads(json.dumps(schemas))
    for schema in bare:
        schema["function"]["description"] = ""
        for parameter in schema["function"]["parameters"]["properties"].values():
            parameter["description"] = ""
    wire = len(json.dumps(schemas, separators=(",", ":"), ensure_ascii=False))
    return {"tools": len(schemas), "json_bytes": len(json.dumps(schemas)),
            "wire_bytes": wire, "estimated_tokens": wire // 4,
            "floor_without_descriptions": len(json.dumps(bare))}


def main(argv=None) -> None:
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args(argv)
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
    from tests.fakes.arr_stack import ArrStack
    stack = ArrStack()
    try:
        results = {name: measure(stack, tool, args, paths) for name, tool, args, paths in CASES}
    finally:
        stack.close()
    results["all_within_target"] = all(r["ratio"] <= 0.10 for r in results.values())
    results["tool_schemas"] = schema_size()
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
