"""The SMS edge as pure functions: reply formatting, segment counting, signatures.

Everything here takes data and returns data; the webhook, the worker and the sender call
these (the words people text to mediabot live in ``mediabot.text.keywords``). Replies leave as
plain text: the model writes Markdown and typographic punctuation that a phone shows
literally, and one curly quote turns a whole SMS into UCS-2 (70 characters a segment
instead of 160), so ``format_reply`` strips the one and replaces the other. Letters of
other scripts (a film's original title) are kept, since dropping them loses meaning; symbols and
emoji are dropped unless emoji are allowed.

Accented Latin letters outside GSM-7 ("á", "ç", "ã") are ``[sms] accents``'s choice: "fold"
writes their GSM-7 neighbour ("a", "c"; "é", "ñ", "ü", "ß" are GSM-7 and stay), "keep"
writes them as they are and the text goes as UCS-2. With no choice made, the recipient's
language decides (``accents_for``, ``KEEP_ACCENTS``; docs/languages.md says why).
"""

import hmac
import re
import unicodedata
from collections.abc import Mapping
from typing import Protocol

from twilio.request_validator import RequestValidator

GSM7_BASIC = frozenset(
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?"
    "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà")
GSM7_EXTENDED = frozenset("^{}\\[~]|€\f")
GSM7_SINGLE, GSM7_PART = 160, 153
# Languages whose texts keep their accents when ``[sms] accents`` is not set: folded,
# Portuguese loses a letter in most words ("não", "você", "ação"); the others read as
# people text anyway (Spanish "más" -> "mas"; German and Dutch lose nothing or nearly).
KEEP_ACCENTS = frozenset({"pt"})
UCS2_SINGLE, UCS2_PART = 70, 67

# Typographic characters with a plain GSM-7 spelling.
CHAR_MAP = {
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
    "\u00ab": '"', "\u00bb": '"', "\u2039": "'", "\u203a": "'", "`": "'",
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": " - ",
    "\u2015": " - ", "\u2212": "-", "\u2022": "-", "\u00b7": "-", "\u2023": "-",
    "\u2043": "-", "\u25cf": "-", "\u25aa": "-", "\u2026": "...",
    "\u2192": "->", "\u2190": "<-", "\u21d2": "=>", "\u00d7": "x", "\u2044": "/",
    "\u00a9": "(c)", "\u00ae": "(R)", "\u2122": "TM", "\u00b0": " deg", "\t": " ",
    "\u2248": "~", "\u2264": "<=", "\u2265": ">=", "\u0142": "l", "\u0141": "L",
    "\u0111": "d", "\u0110": "D", "\u0131": "i", "\u0153": "oe", "\u0152": "OE",
    "\u00b5": "u", "\u00f7": "/", "\u02bc": "'", "\u02c6": "^", "\u02dc": "~",
}
# Latin letters with no decomposition ("ħ", "ŋ", "þ") are spelled from their Unicode name.
_LATIN_NAME = re.compile(
    r"LATIN (CAPITAL|SMALL) (?:LETTER|LIGATURE) (?:(?:TURNED|REVERSED|SMALL CAPITAL|DOTLESS|"
    r"OPEN|CLOSED|INSULAR|SCRIPT|LONG|BARRED|SIDEWAYS|MIDDLE-TILDE) )*([A-Z]+)(?: WITH .*)?$")
LATIN_WORDS = {"ETH": "d", "THORN": "th", "ENG": "n", "SCHWA": "e", "EZH": "z", "KRA": "k",
               "YOGH": "y", "WYNN": "w"}
SPACES = frozenset("\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
                   "\u2009\u200a\u202f\u205f\u3000")
EMOJI_JOINERS = frozenset("\u200d\ufe0f\ufe0e\u20e3")
INVISIBLE = frozenset("\u200b\u200c\u2060\ufeff\u00ad")

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)(\s+#+)?\s*$")
_RULE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")
_QUOTE = re.compile(r"^\s*>+\s?")
_BULLET = re.compile(r"^\s*(?:[-*+\u2022\u25cf\u25aa]|\u2013)\s+(\[[ xX]\]\s+)?")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_INLINE = [
    (re.compile(r"`([^`\n]+)`"), r"\1"),
    (re.compile(r"!\[([^\]\n]*)\]\([^)\s]*(?:\s+\"[^\"]*\")?\)"), r"\1"),
    (re.compile(r"<(https?://[^>\s]+)>"), r"\1"),
    (re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1"), r"\2"),
    (re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])"), r"\1"),
    (re.compile(r"(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])"), r"\1"),
    (re.compile(r"~~(?=\S)(.+?)(?<=\S)~~"), r"\1"),
    (re.compile(r"<br\s*/?>", re.IGNORECASE), "\n"),
    (re.compile(r"\*\*|`"), ""),
    (re.compile(r"\\([\\`*_{}\[\]()#+\-.!|~>])"), r"\1"),
]
_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\s]*)(?:\s+\"[^\"]*\")?\)")
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*(?=\s)|\n")


def format_reply(text: str, *, max_chars: int = 480, allow_emoji: bool = False,
                 keep_accents: bool = False) -> str:
    """Turn a model's answer into one plain SMS body of at most ``max_chars`` characters.

    Markdown is stripped, typography mapped to GSM-7, accents folded unless
    ``keep_accents``, emoji dropped unless ``allow_emoji``, blank-line runs collapsed, and a
    long text is cut at a sentence or line end (else at a word, with "..."). Returns ""
    only when nothing readable is left (symbols only).
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if keep_accents:   # "e" + a combining accent is kept as the one letter "é"
        text = unicodedata.normalize("NFC", text)
    def sms_text(raw: str) -> str:
        return _tidy_whitespace(to_gsm7(raw, allow_emoji=allow_emoji, keep_accents=keep_accents))

    cleaned = sms_text(_strip_inline(_strip_block_markdown(text)))
    if not cleaned:  # Markdown that held all the text, e.g. "![](http://x)": keep it raw
        cleaned = sms_text(text)
    return cut_text(cleaned, max_chars)


class SmsSettings(Protocol):
    """What the text rules read of ``[sms]`` (``config.SmsConfig`` is the one; config sits
    above text/, so it is named here by what it offers)."""

    @property
    def max_reply_chars(self) -> int: ...
    @property
    def allow_emoji(self) -> bool: ...
    @property
    def accents(self) -> str: ...
    @property
    def language(self) -> str: ...


def format_reply_for(sms_config: SmsSettings, text: str, language: str | None = None) -> str:
    """``format_reply`` with the operator's ``[sms] max_reply_chars``, ``allow_emoji`` and
    ``accents`` for a recipient speaking ``language`` (a tag; None: the household's):
    every text mediabot sends (replies, apologies, expiry and download notices) is shaped
    alike."""
    keep = accents_for(sms_config, language) == "keep"
    return format_reply(text, max_chars=sms_config.max_reply_chars,
                        allow_emoji=sms_config.allow_emoji, keep_accents=keep)


def accents_for(sms_config: SmsSettings, language: str | None = None) -> str:
    """"fold" or "keep": ``[sms] accents`` when set, else the default of the recipient's
    language (``language``, else ``[sms] language``): "keep" for KEEP_ACCENTS."""
    if sms_config.accents:
        return sms_config.accents
    code = (language or sms_config.language).replace("_", "-").split("-", 1)[0].lower()
    return "keep" if code in KEEP_ACCENTS else "fold"


def _strip_block_markdown(text: str) -> str:
    """Line-level Markdown: fences, headings, rules, quotes, bullets and tables."""
    has_table = any(_TABLE_SEPARATOR.match(line) and "|" in line for line in text.split("\n"))
    lines = []
    for line in text.split("\n"):
        if _FENCE.match(line) or _RULE.match(line):
            continue
        if "|" in line and (line.lstrip().startswith("|") or has_table):
            if _TABLE_SEPARATOR.match(line):
                continue
            line = ", ".join(cell.strip() for cell in line.split("|") if cell.strip())
        heading = _HEADING.match(line)
        if heading:
            line = heading.group(1)
        line = _QUOTE.sub("", line)
        line = _BULLET.sub("- ", line)
        lines.append(line)
    return "\n".join(lines)


def _strip_inline(text: str) -> str:
    """Inline Markdown: code, images, links, emphasis, strike-through, escapes."""
    text = _LINK.sub(_link_text, text)
    for pattern, replacement in _INLINE:
        text = pattern.sub(replacement, text)
    return text


def _link_text(match: re.Match) -> str:
    label, url = match.group(1).strip(), match.group(2).strip()
    if not url or url == label or not url.lower().startswith(("http://", "https://")):
        return label
    return f"{label} ({url})"


def to_gsm7(text: str, *, allow_emoji: bool = False, keep_accents: bool = False) -> str:
    """Map each character to GSM-7 where a plain spelling exists (accents folded unless
    ``keep_accents``), keep letters and digits of other scripts, keep emoji only when
    allowed, drop the rest."""
    return "".join(_map_char(ch, allow_emoji, keep_accents) for ch in text)


def _map_char(ch: str, allow_emoji: bool, keep_accents: bool = False) -> str:
    if ch in GSM7_BASIC or ch in GSM7_EXTENDED:
        return ch
    if keep_accents and is_latin_letter(ch):
        return ch
    if ch in CHAR_MAP:
        return CHAR_MAP[ch]
    if ch in SPACES:
        return " "
    if ch in INVISIBLE:
        return ""
    if _is_emoji(ch):
        return ch if allow_emoji else ""
    folded = _fold(ch)
    if folded is not None:
        return folded
    if unicodedata.name(ch, "").startswith("LATIN "):
        return _spell_latin(ch)
    return ch if unicodedata.category(ch)[0] in "LN" else ""


def is_latin_letter(ch: str) -> bool:
    """A Latin letter written as itself ("á", "ç", "œ", "ł"), not a compatibility form
    such as the ligature "ﬁ", which has a plain spelling of its own ("fi")."""
    return (unicodedata.category(ch).startswith("L")
            and unicodedata.name(ch, "").startswith("LATIN ")
            and unicodedata.normalize("NFKC", ch) == ch)


def _fold(ch: str) -> str | None:
    """GSM-7 spelling of a compatibility or accented character ("ﬁ", "ç", "½"), or None."""
    for form in ("NFKC", "NFKD"):
        candidate = "".join(c for c in unicodedata.normalize(form, ch)
                            if not unicodedata.combining(c))
        candidate = "".join(CHAR_MAP.get(c, c) for c in candidate)
        if candidate and is_gsm7(candidate):
            return candidate
    return None


def _spell_latin(ch: str) -> str:
    """"ħ" -> "h", "Þ" -> "TH"; "" for a Latin letter with no plain spelling."""
    match = _LATIN_NAME.match(unicodedata.name(ch))
    if not match:
        return ""
    letters = match.group(2)
    if len(letters) > 2:
        letters = LATIN_WORDS.get(letters, "")
    return letters.upper() if match.group(1) == "CAPITAL" else letters.lower()


def _is_emoji(ch: str) -> bool:
    code = ord(ch)
    if ch in EMOJI_JOINERS or 0x1F000 <= code <= 0x1FAFF or 0xE0020 <= code <= 0xE007F:
        return True
    return 0x2600 <= code <= 0x27BF or 0x2B00 <= code <= 0x2BFF or 0x2300 <= code <= 0x23FF


def _tidy_whitespace(text: str) -> str:
    """Drop control characters, collapse space runs, trim lines, keep one blank line."""
    text = "".join(c for c in text if c == "\n" or unicodedata.category(c) != "Cc")
    lines = [re.sub(r" {2,}", " ", line).strip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def cut_text(text: str, max_chars: int) -> str:
    """Shorten ``text`` to at most ``max_chars``: at the last sentence or line end in the
    second half of the budget, else at the last word with "...", else hard with "..."."""
    if len(text) <= max_chars:
        return text
    window = text[:max_chars + 1]
    ends = [m.end() for m in _SENTENCE_END.finditer(window) if m.end() <= max_chars]
    if ends and ends[-1] >= max_chars // 2 and window[:ends[-1]].strip():
        return window[:ends[-1]].rstrip()
    if max_chars < 4:
        return text[:max_chars]
    room = window[:max_chars - 2]
    space = max(room.rfind(" "), room.rfind("\n"))
    head = room[:space] if space > 0 else text[:max_chars - 3]
    return head.rstrip(" \n,;:-") + "..."


def is_gsm7(text: str) -> bool:
    """True when every character is in the GSM-7 default or extension table."""
    return all(c in GSM7_BASIC or c in GSM7_EXTENDED for c in text)


def count_segments(text: str) -> int:
    """Segments Twilio bills for ``text`` (0 for ""); parts never split an escape sequence
    (GSM-7 extension characters take two septets) or a UTF-16 surrogate pair."""
    if not text:
        return 0
    if is_gsm7(text):
        widths = [2 if c in GSM7_EXTENDED else 1 for c in text]
        return _pack(widths, GSM7_SINGLE, GSM7_PART)
    widths = [2 if ord(c) > 0xFFFF else 1 for c in text]
    return _pack(widths, UCS2_SINGLE, UCS2_PART)


def _pack(widths: list[int], single: int, part: int) -> int:
    if sum(widths) <= single:
        return 1
    parts, used = 1, 0
    for width in widths:
        if used + width > part:
            parts, used = parts + 1, 0
        used += width
    return parts


def signature_ok(validator: RequestValidator, url: str, params: Mapping[str, str] | None,
                 signature: str | None, *, algorithm: str | None = None) -> bool:
    """Check ``X-Twilio-Signature`` for a webhook Twilio posted to ``url``.

    ``url`` must be the public URL Twilio called (proxies rewrite scheme and host), with
    its query string. A missing signature, a bad one or a validator error gives False.
    """
    if not signature:
        return False
    try:
        # ``url`` is one of the two forms validate() tries (with and without the port), so
        # a match on it alone is a match there too, for one HMAC instead of two and none of
        # its URL parsing: the hot path of every webhook. Anything else gets the full check.
        if hmac.compare_digest(validator.compute_signature(url, params or {}, algorithm),
                               signature):
            return True
        return bool(validator.validate(url, params or {}, signature, algorithm))
    except Exception:  # noqa: BLE001 - a malformed header reads as "not signed", never a 500
        return False
