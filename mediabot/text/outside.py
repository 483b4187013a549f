"""The one rule for text from outside before it stands in a text or a prompt.

A title from Sonarr's or Radarr's catalogue, a download's release name, an overview, a
Seerr user's Display Name: none of it was chosen by the household. Quoted as it is, a line
break forges extra lines inside one of mediabot's fixed texts ("Bob asked for X. Reply
APPROVE 2" followed by a fake "mediabot: URGENT ... reply DELETE ALL" line), and a link or
a phone number puts something tappable on an admin's phone. ``outside_text`` makes such a
string one line (control, format and separator characters become spaces), takes out links
(any scheme, ``www.``, a host with a path, a bare host under a common top-level domain,
an email address) and phone numbers (a ``+`` and seven digits or more, or nine digits or
more in groups), and cuts it at a word to a bounded length with "...". Pure: text in,
text out.

Only what a server or another person chose goes through here. Our own texts, the operator's
config (a member's name) and a server's error messages, which keep their hosts for the
admin who must fix them (``masking.scrub`` takes their secrets out), do not.
"""

import re
import unicodedata

NAME_CHARS = 40      # a person's name: "Alex" or "Alexandra Smith-Jones", never a paragraph
TITLE_CHARS = 80     # a title with its year: "Dune: Part Two (2024)"
ELLIPSIS = "..."

# Links in any spelling a phone would make tappable: a scheme (or tel:, sms:, mailto:),
# "www.", an email address, a host with a path, or a bare host under a common top-level
# domain ("bit.ly", "evil.com").
_LINK = re.compile(
    r"(?i)(?:\b[a-z][a-z0-9+.-]*://|\bwww\.|\b(?:tel|sms|mailto|sip):)[^\s()\[\]<>\"]*"
    r"|[\w.+-]+@(?:[a-z0-9-]+\.)+[a-z]{2,}\b"
    r"|\b(?:[a-z0-9-]+\.)+[a-z]{2,}/[^\s()\[\]<>\"]*"
    r"|\b(?:[a-z0-9-]+\.)+(?:com|net|org|io|ly|app|xyz|info|biz|link|click|site|online|top|"
    r"ru|cn|tk|gg)\b")
# Digits in groups, each group apart from the next by at most one space, dot, dash or a
# bracket: "+1 (555) 123-4567", "555.123.4567", "+44 20 7946 0958".
_DIGIT_RUN = re.compile(r"(?<![\w+])\+?\(?\d++\)?(?:[ .-]?\(?\d++\)?)*+(?!\w)")   # possessive:
# a long run of digits followed by a letter fails at once instead of trying every split
PHONE_DIGITS = 9            # a national number with its area code has at least this many
PHONE_DIGITS_WITH_PLUS = 7  # "+" and a country code: unmistakably a number to dial
_EMPTY_BRACKETS = re.compile(r"\(\s*\)|\[\s*\]")
_LOOSE_ENDS = re.compile(r"^[\s,;:|/-]+|[\s,;:|/-]+$")


def outside_text(text: str | None, limit: int, fallback: str = "") -> str:
    """``text`` as it may stand in a text or a prompt: one line, no links, no phone
    numbers, at most ``limit`` characters (cut at a word, with "..."); ``fallback`` when
    nothing of it is left (it was empty, or only a link)."""
    spaced = "".join(" " if unicodedata.category(ch)[0] in "CZ" else ch for ch in text or "")
    unlinked = _DIGIT_RUN.sub(_without_phone, _LINK.sub(" ", spaced))
    tidied = _EMPTY_BRACKETS.sub(" ", unlinked)
    return _LOOSE_ENDS.sub("", cut(tidied, limit)) or fallback


def cut(text: str, limit: int) -> str:
    """``text`` with its spaces collapsed, cut at a word to at most ``limit`` characters
    (the last three "...") when longer."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[:limit - len(ELLIPSIS)]
    shortened = head.rsplit(" ", 1)[0] if " " in head else head
    return shortened.rstrip(",;:") + ELLIPSIS


def _without_phone(match: re.Match[str]) -> str:
    """A run of digits that is a phone number becomes a space; any other stays."""
    run = match.group(0)
    digits = sum(ch.isdigit() for ch in run)
    phone = digits >= (PHONE_DIGITS_WITH_PLUS if run.startswith("+") else PHONE_DIGITS)
    return " " if phone else run
