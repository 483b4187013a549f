"""The system prompt: what the model is told it is, for whom, and what just lapsed."""

import datetime as dt
from collections.abc import Sequence

from mediabot.text.language import SOURCE, Language
from mediabot.text.localtime import zone_label

INTRO = ("You are the household's media assistant, reached by SMS; movies are in Radarr, "
         "TV series in Sonarr.")
WHAT = {"Sonarr": "TV series", "Radarr": "movies"}

# The rules the tools' own descriptions cannot carry; what each tool does is in its schema,
# which the model reads right after this text. Each rule is one the code or ``mediabot
# eval`` relies on: SMS-sized plain replies (sms_sized), ids only from a search
# (no_invention, no_invented_titles), asking when several titles match
# (ask_when_ambiguous), a removal waits for the Y (remove_asks_first; the admins-only rule
# is also enforced in code, and a member is told in ``MEMBER_RULE``).
GUIDELINES = """\
- Answer in plain text, no Markdown or emoji, one to three short sentences.
- Add only by an id from search results, never a guess. When several could match, list \
the top 2-3 with title and year and ask which one.
- Never claim something was removed: removals (remove_media, admins only) wait for the \
person's Y.
- If a tool fails, say what went wrong and what to try next.
- Only talk about the media server; politely decline anything else."""
NO_TOOLS = "You have no tools right now: you cannot look up, add or check anything."

LANGUAGE_RULE = ("Write your replies in {name} ({tag}), unless the person writes to you in "
                 "another language: then answer in theirs.")
MEMBER_RULE = ("This person is a member, not an admin, so they cannot remove media (admins "
               "only); say so if they ask.")
STAMP_RULE = ("Each text from the person starts with the local time it was sent, in square "
              "brackets (time zone {zone}); tools give times in this zone too. Do not start "
              "your replies with a time.")


def _missing(missing: Sequence[str]) -> list[str]:
    """A line for each service not set up, so the model says so instead of guessing."""
    return [f"{service} is not set up on this server, so you cannot look up, add or check "
            f"{WHAT[service]}; say so when asked." for service in missing]


def build_system_prompt(display_name: str | None = None, *, zone: dt.tzinfo | None = None,
                        tools: Sequence[str] | None = None, missing: Sequence[str] = (),
                        language: Language | None = None) -> str:
    """The system prompt with the person's part (``person_note``) as its last paragraph:
    the whole of what a model is told, for callers that send one system message (the
    rolling summary, tests). A turn sends ``shared_system_prompt`` and the person's part
    apart (``history.build_prompt``'s ``person``)."""
    person = person_note(display_name, language=language)
    return "\n\n".join(p for p in (shared_system_prompt(zone=zone, tools=tools,
                                                        missing=missing), person) if p)


def shared_system_prompt(*, zone: dt.tzinfo | None = None, tools: Sequence[str] | None = None,
                         missing: Sequence[str] = ()) -> str:
    """The system prompt every member of the household is sent, word for word.

    Nothing in it changes from one text or one person to the next, so a server's prompt
    cache reuses it and the tool schemas rendered after it (the same list for everyone:
    what only admins may do is refused in code) across the whole household: it names no
    date or time (a clock line here made a local server read the whole prompt again on
    every text) and no person (their name and language came before the tools, so two
    members' prompts shared ~120 tokens). Each text carries the time it was received
    (``history.build_prompt``'s ``zone``); a note for one turn only (``dropped_note``)
    rides on that turn's text; the person's part (``person_note``) follows the tools.
    ``zone``: the household's time zone, named in the rule that explains the stamps.
    ``tools``: names of the tools offered (None: the tools are offered; what each does is in
    its schema, not repeated here); none: the model is told it has none. ``missing``:
    "Sonarr" and/or "Radarr" when not configured, so the model says so instead of guessing.
    """
    offered = tools is None or bool(tools)
    parts = [INTRO, "\n".join([GUIDELINES if offered else NO_TOOLS, *_missing(missing)])]
    if zone is not None:
        parts.append(STAMP_RULE.format(zone=zone_label(zone)))
    return "\n\n".join(parts)


def person_note(display_name: str | None = None, *, admin: bool = True,
                language: Language | None = None, waiting: str | None = None) -> str:
    """What belongs to one person: their name, whether they may remove media, the language
    to write in (none for English, as before) and, for an admin who answers approvals,
    what waits. Sent after the shared prompt and the tools; empty when there is nothing."""
    parts = []
    if display_name:
        parts.append(f"You are talking with {display_name}; use their name now and then.")
    if not admin:
        parts.append(MEMBER_RULE)
    if language is not None and language.code != SOURCE:
        parts.append(LANGUAGE_RULE.format(name=language.english_name, tag=language.tag))
    if waiting:
        parts.append(waiting)
    return "\n\n".join(parts)


def dropped_note(dropped: str) -> str:
    """What the model is told in the turn whose text let a removal question lapse
    (``dropped``: the line that told the person so). The model never runs while a removal
    waits for its Y, so this holds for exactly one turn: it is added to that turn's text
    (``history.build_prompt``'s ``turn_note``), never to the system message, where it would
    make a local server read the tools and the whole history again, twice."""
    return ("Their text did not answer mediabot's removal question, so nothing was removed "
            "and the person has been told: \"" + dropped.strip() + "\" Answer their text. If "
            "they still want it removed, call remove_media again and mediabot will ask again.")


SUMMARY_PROMPT = """\
Below is the older part of a text conversation between a household member and their media \
assistant, plus the previous summary if any. Write an updated summary in at most 80 words: \
who they are, what they asked for, what was added or removed, preferences and open questions. \
Plain text only."""
