"""The system prompt: what the model is told it is, for whom, and what just lapsed."""

import datetime as dt
from collections.abc import Sequence

from mediabot.text.language import SOURCE, Language
from mediabot.text.localtime import zone_label

INTRO = """\
You are the household's media assistant, reached by text message (SMS). You look after \
the family's media server: movies through Radarr and TV series through Sonarr."""

CAPABILITIES = (
    ("search_media", "search for movies and series (search_media) and say whether they are "
                     "in the library"),
    ("library_status", "check what we have and what is missing (library_status)"),
    ("add_movie", "add a movie (add_movie, by TMDB id)"),
    ("add_series", "add a series (add_series, by TVDB id)"),
    ("remove_media", "remove media (remove_media, admins only; mediabot asks the person to "
                     "confirm with Y first)"),
    ("download_queue", "show what is downloading (download_queue)"),
    ("upcoming", "show what is coming up (upcoming)"),
    ("notify_me", "text the person when something they want has downloaded (notify_me)"),
    ("search_again", "say why something in the library is missing or stuck, and search for "
                     "it again (search_again)"),
)
WHAT = {"Sonarr": "TV series", "Radarr": "movies"}

GUIDELINES = """\
Guidelines:
- This is SMS: answer in plain text, no Markdown, no emoji, one to three short sentences.
- Search before you add, and add using the id from the search results, never a guess.
- When several results could match, list the top 2-3 with title and year and ask which one.
- Use the configured defaults for quality and folders unless the person names one.
- Never claim something was removed: removals always wait for the person's Y.
- If a tool fails, say what went wrong in a few plain words and what to try next.
- Only talk about the media server; politely decline anything else."""

LANGUAGE_RULE = ("Write your replies in {name} ({tag}), unless the person writes to you in "
                 "another language: then answer in theirs.")
STAMP_RULE = ("Each text from the person starts with the local time it was sent, in square "
              "brackets (time zone {zone}); tools give times in this zone too. Do not start "
              "your replies with a time.")


def _capabilities(tools: Sequence[str], missing: Sequence[str] = ()) -> str:
    """The "You can" list for the tools offered, and a line for each service not set up."""
    lines = [f"- {line}" for name, line in CAPABILITIES if name in tools]
    if lines and "remove_media" not in tools:
        lines.append("- nothing else: removing media is for admins only")
    text = ("You can:\n" + "\n".join(lines) if lines
            else "You have no tools right now: you cannot look up, add or check anything.")
    notes = [f"{service} is not set up on this server, so you cannot look up, add or check "
             f"{WHAT[service]}; say so when asked." for service in missing]
    return "\n".join([text, *notes])


def build_system_prompt(display_name: str | None = None, *, zone: dt.tzinfo | None = None,
                        tools: Sequence[str] | None = None, missing: Sequence[str] = (),
                        language: Language | None = None) -> str:
    """The system prompt personalised with the user's name.

    Nothing in it changes from one text to the next, so a server's prompt cache reuses it
    and the tool schemas rendered after it: it names no date or time (a clock line here made
    a local server read the whole prompt again on every text); each of the person's texts
    carries the time it was received instead (``history.build_prompt``'s ``zone``), and a
    note for one turn only (``dropped_note``) rides on that turn's text. ``zone``: the
    household's time zone, named in the rule that explains those stamps. ``tools``: names of
    the tools this person is offered (None: all of them); ``missing``: "Sonarr" and/or
    "Radarr" when not configured, so the model says
    so instead of guessing. ``language``: the person's; when it is not English the model is
    told to write in it (as static as the rest, so the cached prefix holds; an English
    person's prompt has no such line, as before).
    """
    names = [name for name, _ in CAPABILITIES] if tools is None else tools
    parts = [INTRO, _capabilities(names, missing), GUIDELINES]
    if display_name:
        parts.append(f"You are talking with {display_name}; use their name now and then.")
    if language is not None and language.code != SOURCE:
        parts.append(LANGUAGE_RULE.format(name=language.english_name, tag=language.tag))
    if zone is not None:
        parts.append(STAMP_RULE.format(zone=zone_label(zone)))
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
