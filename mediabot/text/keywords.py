"""The words a household texts that mediabot reads itself, before any model sees them.

One vocabulary for every edge: the webhook and the worker (STOP before anything is sent),
the engine (HELP, RESET, a Y or N to a waiting question) and the confirmation parser. It is
pure: strings in, a classification out, so the SMS formatting module and the engine both
import it and neither imports the other.

Twilio itself answers the opt-out words (STOP, CANCEL, ...) and the opt-in words (START,
UNSTOP, YES) and still forwards them; mediabot only flags the user. That is why an opt-out
word is never a "no" to a confirmation (CANCEL would unsubscribe the person) and why the
questions ask for Y / N.
"""

import re

HELP_TEXT = (
    "mediabot: text me like a person. Try \"get the new Dune\", \"what's downloading?\", "
    "\"anything new this week?\" or \"do we have Severance?\". Reply Y or N when I ask "
    "to confirm. RESET clears our chat. STOP unsubscribes, START resumes.")
# Added to HELP_TEXT for admins while members' requests wait for their approval.
ADMIN_HELP = " Admins: APPROVE 12 or DENY 12 answers a member's request 12."

KEYWORDS = {
    "HELP": "help", "INFO": "help",
    "RESET": "reset", "FORGET": "reset",
    "STOP": "opt_out", "STOPALL": "opt_out", "UNSUBSCRIBE": "opt_out", "CANCEL": "opt_out",
    "END": "opt_out", "QUIT": "opt_out", "REVOKE": "opt_out", "OPTOUT": "opt_out",
    "START": "opt_in", "UNSTOP": "opt_in",
    "YES": "yes_opt_in",
}
# Twilio's opt-out words: they unsubscribe the person, so they are never read as "no".
OPT_OUT_WORDS = frozenset(word.lower() for word, kind in KEYWORDS.items() if kind == "opt_out")

YES_WORDS = frozenset({"y", "yes", "yep", "yeah", "yup", "ya", "sure", "ok", "okay", "confirm",
                       "confirmed", "do it", "go ahead", "go for it", "yes please", "please do",
                       "delete it", "remove it", "affirmative", "absolutely", "correct"})
NO_WORDS = frozenset({"n", "no", "nope", "nah", "no thanks", "no thank you", "keep it",
                      "keep", "don't", "dont", "do not", "don't do it", "never mind",
                      "nevermind", "abort", "no way", "negative", "cancel that", "cancel it",
                      "forget it", "forget that", "leave it", "don't delete it",
                      "don't remove it", "do not delete it", "do not remove it"})
MAX_ANSWER_WORDS = 8
# An admin's answer to a member's request when approvals are on: "APPROVE 12", "deny #12".
DECISION = re.compile(r"^\s*(approve|deny)\s*#?\s*(\d{1,9})\s*[.!]*\s*$", re.IGNORECASE)

_KEYWORD_TRIM = re.compile(r"^[\W_]+|[\W_]+$")


def classify_keyword(body: str) -> str | None:
    """"help", "reset", "opt_out", "opt_in", "yes_opt_in" or None for an ordinary message.

    Like Twilio, only a whole message is a keyword (case-insensitive, trimmed); surrounding
    punctuation ("Stop!", "'HELP'") is tolerated. "cancel that" is not a keyword.
    """
    word = _KEYWORD_TRIM.sub("", (body or "").strip()).upper()
    return KEYWORDS.get(word)


def parse_answer(text: str) -> str | None:
    """'yes', 'no' or None for anything else.

    A message made only of yes-like phrases ("yes, do it", "ok go ahead") is a yes, one
    made only of no-like phrases ("no, keep it", "cancel that") a no; a mix or any other
    word ("yes but keep the files") is not an answer. Whether an answer may resolve a
    waiting question (it must be a message of its own, sent after the question) is the
    engine's decision, not this parser's.
    """
    words = re.sub(r"[^\w' ]+", " ", text.lower().replace("\u2019", "'")).split()
    phrase = " ".join(words)
    if not phrase or phrase in OPT_OUT_WORDS or len(words) > MAX_ANSWER_WORDS:
        return None
    if _made_of(words, YES_WORDS):
        return "yes"
    if _made_of(words, NO_WORDS):
        return "no"
    return None


def _made_of(words: list[str], phrases: frozenset[str]) -> bool:
    """True when ``words`` split into phrases from ``phrases`` (longest first)."""
    if not words:
        return True
    return any(" ".join(words[:size]) in phrases and _made_of(words[size:], phrases)
               for size in range(min(len(words), 4), 0, -1))


def parse_decision(text: str) -> tuple[str, int] | None:
    """("approve"|"deny", number) for "APPROVE 12" / "deny #12", else None."""
    match = DECISION.match(text or "")
    return (match.group(1).lower(), int(match.group(2))) if match else None
