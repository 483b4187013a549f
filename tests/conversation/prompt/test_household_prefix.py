"""What two members' prompts share, in the two layouts mediabot chooses between by what the
server does with prompts (``model.slots.SlotPins.person_first``).

Where the server keeps one prompt per slot (llama-server with ``--cache-ram 0``, or a slot
per person), one prefix for the whole household: two members' prompts, rendered by every
vendored chat template, are the same through the system text and the tool schemas; what
belongs to one person (name, role, language, what waits for an admin) comes after them.
Qwen-style templates render the tools inside the system turn, after its text, so anything
personal in the system message would come before the tools: the person's part is a
bracketed user message (and its acknowledgement) after the system message. Every template
renders it, and none loses it.

Where the server saves and restores each member's prompt (llama-server's host-memory cache,
as it comes), the person first: the name, role and language end the system text, so members
share the household's rules word for word and nothing personal comes before them, and each
member's next prompt is the same as their last through the tools and the history, which is
what a restore gives back. What waits for an admin (it changes with each request) stays in
the bracketed message after the tools."""

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


def prompt_for(person: str, text: str, *, system: str = SHARED,
               earlier: tuple[str, ...] = ()) -> list[dict]:
    """The prompt of ``text``, after ``earlier`` texts each answered "Done."."""
    history = [message for said in earlier for message in (
        {"role": "user", "content": said, "_at": WHEN},
        {"role": "assistant", "content": "Done.", "_at": WHEN})]
    history.append({"role": "user", "content": text, "_at": WHEN})
    return build_prompt(system, history, person=person, zone=ZONE).messages


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


IDENTITY = {
    "sam": person_note("Sam", admin=True, language=get_language("en")),
    "ana": person_note("Ana", admin=False, language=get_language("es")),
}
WAITING = "Requests waiting for an admin's approval: #1 Ana: Dune."


def person_first(who: str, text: str, earlier: tuple[str, ...] = ()) -> list[dict]:
    return prompt_for(WAITING if who == "sam" else "", text, earlier=earlier,
                      system=f"{SHARED}\n\n{IDENTITY[who]}")


def test_person_first_ends_the_system_text_with_them_and_keeps_what_waits_apart():
    ana, sam = person_first("ana", "hola"), person_first("sam", "hi")
    assert ana[0]["content"] == f"{SHARED}\n\n{IDENTITY['ana']}"
    assert "Spanish" in ana[0]["content"] and "member, not an admin" in ana[0]["content"]
    assert [m["role"] for m in ana] == ["system", "user"], "nothing else for a member"
    assert sam[1]["content"] == f"[{WAITING}]" and WAITING not in sam[0]["content"]


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_person_first_every_template_shares_the_rules_and_keeps_each_members_prompt(name):
    template = TEMPLATES[name]
    tools = TOOLS if template.tools else None
    mode = "vllm" if template.object_arguments else "passthrough"
    sam = render(name, person_first("sam", "what's downloading?"), tools, mode=mode)
    ana = render(name, person_first("ana", "what's downloading?"), tools, mode=mode)
    later = render(name, person_first("sam", "and now?", ("what's downloading?",)), tools,
                   mode=mode)
    assert "Sam" in sam and "Spanish" in ana, "the person's part is rendered"
    if template.system_needs_final_user:
        return   # Mistral's v3 templates write the system text into the last user turn
    shared = len(_common_prefix(sam, ana))
    assert sam.index(SHARED.splitlines()[-1]) < shared, "the household's rules are shared"
    assert sam.index("You are talking with Sam") >= shared - len("You are talking with ")
    own = len(_common_prefix(sam, later))
    assert sam.index("You are talking with Sam") < own, "a member's own part is kept"
    if tools and name not in TOOLS_BY_THE_LAST_TEXT and name not in NO_SCHEMAS:
        last_tool = max(sam.rfind('"search_again"'), sam.rfind("search_again"))
        assert 0 < last_tool < own, f"{name}: a member's next prompt keeps the tools"
    if name not in TOOLS_BY_THE_LAST_TEXT:   # its tools move with the last text in any layout
        assert sam.index("what's downloading?") < own, "and their history"


def _common_prefix(a: str, b: str) -> str:
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return a[:index]
    return a[:min(len(a), len(b))]
