"""WhatsApp's text rules as pure functions: its own light formatting and its longer limit.

A WhatsApp message is not an SMS: no segments, any Unicode (emoji, curly quotes, other
scripts) at no cost, up to 1600 characters through Twilio's Messaging API, and its own
markup: ``*bold*``, ``_italic_``, ``~strike~`` and ``` ```mono``` ```. The model writes
Markdown, whose ``**bold**`` WhatsApp would show with its stars and ``[text](url)`` as
brackets, so ``format_whatsapp`` rewrites Markdown into WhatsApp's markup rather than
stripping it; anything it does not know is left as written.
"""

import re

from mediabot.text.sms import cut_text

MAX_CHARS = 1600      # Twilio's body limit for one message, WhatsApp included

_FENCE = re.compile(r"^\s*(```|~~~)\w*\s*$")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)(\s+#+)?\s*$")
_BULLET = re.compile(r"^(\s*)[*+\u2022]\s+")
_RULES = [
    (re.compile(r"!\[([^\]\n]*)\]\([^)\s]*\)"), r"\1"),                  # images: alt text
    (re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)"), r"\1 (\2)"),    # links: text (url)
    (re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])"), "_\\1_"),   # *it* -> _it_
    (re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1"), "*\\2*"),             # **bold** -> *bold*
    (re.compile(r"~~(?=\S)(.+?)(?<=\S)~~"), r"~\1~"),                     # ~~x~~ -> ~x~
    (re.compile(r"(?<!`)`([^`\n]+)`(?!`)"), r"```\1```"),                 # `x` -> ```x```
    (re.compile(r"<br\s*/?>", re.IGNORECASE), "\n"),
]


def format_whatsapp(text: str, *, max_chars: int = MAX_CHARS) -> str:
    """A model's Markdown answer as one WhatsApp message of at most ``max_chars``.

    Headings become bold lines, bullets "- ", Markdown emphasis WhatsApp's own, links
    "text (url)"; emoji and every script are kept. A long text is cut at a sentence or line
    end. Returns "" only for a text with nothing but whitespace.
    """
    lines = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if _FENCE.match(line):
            continue
        lines.append(_fold_line(line))
    joined = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    return cut_text(joined, max_chars)


def _fold_line(line: str) -> str:
    """One line in WhatsApp's markup; a heading is made bold after its own markup is
    folded, so its stars are not taken for Markdown's italics."""
    heading = _HEADING.match(line)
    line = heading.group(1) if heading else _BULLET.sub(r"\1- ", line)
    for pattern, replacement in _RULES:
        line = pattern.sub(replacement, line)
    return f"*{line.strip('*')}*" if heading else line.rstrip()
