"""Issue 31: one prefix for the whole household. Two members' prompts, rendered by every
vendored chat template, are the same through the system text and the tool schemas; what
belongs to one person (name, role, language, what waits for an admin) comes after them.

Qwen-style templates render the tools inside the system turn, after its text, so anything
personal in the system message would come before the tools: the person's part is a
bracketed user message (and its acknowledgement) after the system message. Every template
renders it, and none loses it."""

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from mediabot.arr.tools import available_tools, tool_schemas
from mediabot.conversation.prompt.build import build_prompt
from mediabot.conversation.prompt.system_prompt import person_note, shared_system_prompt
from mediabot.store.db import Role
from mediabot.text.language import load as get_language
from tests.fakes.chat_templates import TEMPLATES, render

ZONE = ZoneInfo("Europe/Amsterdam")
TOOLS = tool_schemas(available_tools(Role.ADMIN, sonarr=True, radarr=True))
SHARED = shared_system_prompt(zone=ZONE, tools=[t["function"]["name"] for t in TOOLS])
WHEN = dt.datetime(2026, 11, 26, 18, 30)   # naive UTC, as stored


def prompt_for(person: str, text: str) -> list[dict]:
    history = [{"role": "user", "content": text, "_at": WHEN}]
    return build_prompt(SHARED, history, person=person, zone=ZONE).messages


# Mistral Small 3.2's template writes [AVAILABLE_TOOLS] just before the last user message:
# its prompts differ from there on whatever mediabot sends, so only the system text is shared.
TOOLS_BY_THE_LAST_TEXT = {"mistral-small-3.2"}
# DeepSeek-R1's distills render tool calls and results but never the tool schemas: nothing of
# the tools is in their prompts to share (the system text stopped listing the tools in issue
# 31; their schemas say what each does).
NO_SCHEMAS = {"deepseek-r1-distill-qwen", "deepseek-r1-distill-llama"}

PEOPLE = {
    "sam": person_note("Sam", admin=True, language=get_language("en"),
                       waiting="Requests waiting for an admin's approval: #1 Ana: Dune."),
    "ana": person_note("Ana", admin=False, language=get_language("es")),
}


def test_the_person_part_names_them_and_only_them():
    assert "Sam" in PEOPLE["sam"] and "#1 Ana: Dune" in PEOPLE["sam"]
    assert "member, not an admin" in PEOPLE["ana"] and "Spanish" in PEOPLE["ana"]
    assert "Sam" not in SHARED and "Ana" not in SHARED and "Spanish" not in SHARED
    messages = prompt_for(PEOPLE["ana"], "hola")
    assert messages[0] == {"role": "system", "content": SHARED}
    assert messages[1]["content"] == f"[{PEOPLE['ana']}]"
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]


def test_an_english_admin_without_a_name_has_no_person_part():
    assert person_note(None, admin=True, language=get_language("en")) == ""
    assert [m["role"] for m in prompt_for("", "hi")] == ["system", "user"]


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_every_template_renders_the_shared_part_first_for_every_member(name):
    template = TEMPLATES[name]
    tools = TOOLS if template.tools else None
    mode = "vllm" if template.object_arguments else "passthrough"
    sam = render(name, prompt_for(PEOPLE["sam"], "what's downloading?"), tools, mode=mode)
    ana = render(name, prompt_for(PEOPLE["ana"], "what's downloading?"), tools, mode=mode)
    assert "Sam" in sam and "Spanish" in ana, "the person's part is rendered"
    shared = len(_common_prefix(sam, ana))
    if template.system_needs_final_user:
        return   # Mistral's v3 templates write the system text into the last user turn
    assert sam.index(SHARED.splitlines()[0]) < shared, "the system text is shared"
    if tools and name not in TOOLS_BY_THE_LAST_TEXT:
        last_tool = max(sam.rfind('"search_again"'), sam.rfind("search_again"))
        if name in NO_SCHEMAS:
            assert last_tool < 0, f"{name} renders the tools now: take it out of NO_SCHEMAS"
            return
        assert 0 < last_tool < shared, f"{name}: the tools are shared"


def _common_prefix(a: str, b: str) -> str:
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return a[:index]
    return a[:min(len(a), len(b))]
