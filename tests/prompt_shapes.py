"""Every prompt shape the engine can produce, as the STORED history it is built from.

Each ``Shape`` is a history the engine really leaves in the database (the same dicts
``history.save_message`` stores and ``history.get_history`` reads back), plus the build
settings of that moment. ``prompt(shape)`` passes it through the real builder,
``mediabot.conversation.prompt.build.build_prompt``, with the real system prompt and the
real tool schemas, so the conformance suite tests what mediabot would send, not a hand-made copy of
it.

Texts are distinctive on purpose: the suite looks for each one in the rendered template, and
"OK" would be found anywhere.
"""

import datetime as dt
import json
from dataclasses import dataclass

from mediabot.arr.tools import available_tools, tool_schemas
from mediabot.conversation import engine
from mediabot.conversation.prompt.build import build_llm_messages, build_prompt
from mediabot.conversation.prompt.system_prompt import (
    SUMMARY_PROMPT,
    build_system_prompt,
    dropped_note,
)

NOW = dt.datetime(2026, 11, 22, 20, 0, 0)
PENDING = ("Remove The Office (2005) and delete its 62 GB of files? Reply Y to confirm or N "
           "to keep it (expires in 5 min).")
DROPPED = "I've dropped the question about removing The Office (2005)."
SUMMARY = ("Alex asked for Dune Part Two (added) and Severance season 2 (monitored); "
           "prefers 1080p; asked to be told when Slow Horses lands.")


@dataclass(frozen=True)
class Shape:
    name: str
    history: tuple[dict, ...]
    display_name: str | None = "Alex"
    dropped: str | None = None    # the line that told the person their question lapsed
    summary: str | None = None
    max_messages: int = 20
    max_tokens: int = 4000
    tools: bool = True        # False: the shape holds no tool call (text-only templates too)
    request: str = "turn"     # or "summary" (the summarizer's call), "probe" (mediabot check's)


def tool_schemas_for_admin() -> list[dict]:
    return tool_schemas(available_tools("admin", sonarr=True, radarr=True))


def prompt(shape: Shape) -> list[dict]:
    """The messages mediabot sends for this stored history (the real builder's output).

    A turn's prompt is built around the real system prompt; the summarizer's request is built
    by the same builder around SUMMARY_PROMPT, as mediabot.conversation.summarizer
    does; ``mediabot check`` sends its one-message probe as it is.
    """
    if shape.request == "probe":
        return [dict(m) for m in shape.history]
    if shape.request == "summary":
        return build_llm_messages(SUMMARY_PROMPT, list(shape.history))
    schemas = tool_schemas_for_admin()
    system = build_system_prompt(shape.display_name, zone=dt.UTC,
                                 tools=[s["function"]["name"] for s in schemas])
    reserved = -(-len(json.dumps(schemas)) // 4)
    return build_prompt(system, list(shape.history), max_messages=shape.max_messages,
                        max_tokens=shape.max_tokens, summary=shape.summary,
                        reserved_tokens=reserved,
                        turn_note=dropped_note(shape.dropped) if shape.dropped else "").messages


def offered_tools(shape: Shape) -> list[dict] | None:
    """The ``tools`` sent with the shape's request: a turn offers them, the others none."""
    return tool_schemas_for_admin() if shape.request == "turn" else None


# ------------------------------------------------------------------ stored message builders

def user(text: str) -> dict:
    return {"role": "user", "content": text}


def reply(text: str) -> dict:
    return {"role": "assistant", "content": text}


def calls(*specs, content: str | None = None) -> dict:
    """An assistant tool_calls row as stored; a spec is (id, name, arguments as sent)."""
    return {"role": "assistant", "content": content, "tool_calls": [
        {"id": ident, "type": "function",
         "function": {"name": name,
                      "arguments": args if isinstance(args, str) or args is None
                      else json.dumps(args)}}
        for ident, name, args in specs]}


def result(call_id: str, name: str, payload) -> dict:
    """A tool row as the loop stores it (with the call's name)."""
    return {"role": "tool", "tool_call_id": call_id, "name": name,
            "content": payload if isinstance(payload, str) else json.dumps(payload)}


SEARCH = calls(("call_Ab12Cd34Ef56Gh78Ij90Kl12", "search_media",
                {"query": "dune part two", "kind": "movie"}))
SEARCH_RESULT = result("call_Ab12Cd34Ef56Gh78Ij90Kl12", "search_media",
                       {"results": [{"title": "Dune: Part Two", "year": 2024,
                                     "tmdb_id": 693134, "in_library": False}]})
FOUND = reply("I found Dune: Part Two (2024). Shall I add it?")
PARALLEL_ROUND = (
    user("Do we have Severance, and what is downloading?"),
    calls(("call_P1", "library_status", {"query": "severance"}),
          ("call_P2", "download_queue", {})),
    result("call_P1", "library_status", {"title": "Severance", "monitored": True}),
    result("call_P2", "download_queue", {"items": [{"title": "Andor S02E01", "progress": 45}]}))


def _removal_asked(call_id: str) -> list[dict]:
    """An admin's "delete The Office" turn: the call, its waiting result, mediabot's question."""
    return [user("Delete The Office"),
            calls((call_id, "remove_media", {"kind": "series", "id": 73244,
                                             "delete_files": True})),
            result(call_id, "remove_media", {"status": "waiting for the user to reply Y or N",
                                             "asked": PENDING}),
            reply(PENDING)]


def _household_turns(count: int) -> list[dict]:
    """``count`` old exchanges with a tool round each: what the window evicts."""
    rows = []
    for n in range(count):
        ident = f"chatcmpl-tool-{n:032x}"           # vLLM's 46-character ids
        rows += [user(f"Is season {n + 1} of Severance in the library yet?"),
                 calls((ident, "library_status", {"query": "severance", "kind": "series"})),
                 result(ident, "library_status",
                        {"title": "Severance", "season": n + 1, "episodes_present": 9 - n}),
                 reply(f"Season {n + 1} of Severance has {9 - n} episodes on disk.")]
    return rows


SHAPES = (
    Shape("plain exchange", (
        user("Hi there, what can you do for me?"),
        reply("I can find, add and check movies and shows for you."),
        user("Great, what is downloading tonight?")), tools=False),
    Shape("tool round", (
        user("Can you get the new Dune?"), SEARCH, SEARCH_RESULT, FOUND,
        user("Yes please, add the 2024 one"))),
    Shape("mid tool round (prompt ends in a tool result)", (
        user("Can you get the new Dune?"), SEARCH, SEARCH_RESULT)),
    Shape("parallel call stored", (
        *PARALLEL_ROUND,
        reply("Severance is in the library; Andor S02E01 is 45% downloaded."),
        user("Thanks, and is anything new coming on Thursday?"))),
    Shape("parallel call mid round", PARALLEL_ROUND),
    Shape("failed model call after a tool round", (
        user("Can you get the new Dune?"), SEARCH, SEARCH_RESULT,
        user("Hello? Did that work, is Dune coming?"))),
    Shape("crash-closed call", (
        user("Add Dune Part Two please"),
        calls(("call_Crash0000001", "add_movie", {"tmdb_id": 693134})),
        user("Are you still there? Was Dune added?"))),
    Shape("expiry notice after a reply", (
        *_removal_asked("call_Rm1"),
        reply("Your request to remove The Office (2005) expired, so nothing was removed."),
        user("Oh, then what is on this week instead?"))),
    Shape("onboarding", (
        user("hello is this the movie bot"),
        reply(engine.ONBOARDING_QUESTION),
        user("I'm Sam, and can you find Paddington 2?")), display_name=None, tools=False),
    Shape("Y/N confirmation exchange", (
        *_removal_asked("call_Rm2"),
        user("Y"),
        reply("Removed The Office (2005) and deleted its files."),
        user("Thanks! Now what about Slow Horses?"))),
    Shape("lapsed Y after the confirmation expired", (
        user("Delete The Office"), reply(PENDING),
        user("yes"),
        reply("Your request to remove The Office (2005) expired, so nothing was removed. "
              "Ask again if you still want it."),
        user("No matter, is Andor downloading?")), tools=False),
    Shape("window eviction with the pruned line", tuple(
        _household_turns(6) + [user("And what about season 7, any news?")]), max_messages=9),
    Shape("rolling summary", tuple(
        _household_turns(6) + [user("And what about season 7, any news?")]), max_messages=9,
        summary=SUMMARY),
    Shape("text-only eviction", tuple(
        [m for n in range(8) for m in (user(f"Question number {n} about the queue"),
                                        reply(f"Answer number {n}: nothing is stuck."))]
        + [user("Last question: anything stuck now?")]), max_messages=5, tools=False),
    Shape("dropped confirmation note", (
        *_removal_asked("call_Rm3"),
        user("Wait, first tell me what is downloading")), dropped=DROPPED),
    Shape("text beside calls in one assistant message", (
        user("Find me The Bear"),
        calls(("call_Tx1", "search_media", {"query": "the bear", "kind": "series"}),
              content="Let me look that up in Sonarr for you."),
        result("call_Tx1", "search_media", {"results": [{"title": "The Bear", "year": 2022,
                                                         "tvdb_id": 403245}]}),
        reply("The Bear (2022) is not in the library yet. Add it?"),
        user("Yes, all seasons of The Bear"))),
    Shape("null, empty, invalid and non-object arguments", (
        user("What is downloading and coming up?"),
        calls(("call_Nu1", "download_queue", None), ("call_Nu2", "upcoming", ""),
              ("call_Nu3", "search_media", '{"query": "dune'),
              ("call_Nu4", "upcoming", "[7]")),
        result("call_Nu1", "download_queue", {"items": []}),
        result("call_Nu2", "upcoming", {"days": 7, "episodes": []}),
        result("call_Nu3", "search_media", {"error": "the arguments were not valid JSON"}),
        result("call_Nu4", "upcoming", {"error": "arguments must be an object"}),
        reply("Nothing is downloading and nothing airs this week."),
        user("Then search for Dune Part Two properly"))),
    Shape("Ollama call ids repeated across turns", (
        user("What is downloading?"),
        calls(("call_0", "download_queue", {})),
        result("call_0", "download_queue", {"items": [{"title": "Andor S02E02"}]}),
        reply("Andor S02E02 is downloading."),
        user("And what is upcoming?"),
        calls(("call_0", "upcoming", {"days": 7})),
        result("call_0", "upcoming", {"episodes": [{"series": "Slow Horses"}]}),
        reply("Slow Horses has a new episode this week."),
        user("Tell me when Slow Horses is ready"))),
    Shape("rolling summary request (no tools)", (user(
        f"Previous summary: {SUMMARY}\n\nuser: Is season 1 of Severance in the library yet?\n"
        "assistant used: library_status\nassistant: Season 1 of Severance has 9 episodes on "
        "disk.\nuser: Delete The Office\nassistant: " + PENDING),),
        request="summary", tools=False),
    Shape("mediabot check's probe (no system, no tools)", (user("Say OK."),),
          request="probe", tools=False),
    Shape("orphaned burst after a reply", (
        user("get Dune"), reply("Which Dune: 1984 or 2021?"),
        user("the 2021 one"), user("in 4K please"), user("actually 1080p is fine")),
        tools=False),
)


def newest_user_text(shape: Shape) -> str:
    """The person's last message: it must reach the model whatever the builder mends."""
    return next(m["content"] for m in reversed(shape.history) if m["role"] == "user")

