"""The words a household texts that mediabot reads itself, before any model sees them.

One vocabulary for every edge: the webhook and the worker (STOP before anything is sent),
the engine (HELP, RESET, a Y or N to a waiting question) and the confirmation parser. It is
pure: strings in, a classification out, so the SMS formatting module and the engine both
import it and neither imports the other.

Twilio itself answers the opt-out words (STOP, CANCEL, ...) and the opt-in words (START,
UNSTOP, YES) and still forwards them; mediabot only flags the user. That is why an opt-out
word is never a "no" to a confirmation (CANCEL would unsubscribe the person) and why the
questions ask for Y / N (or the person's own SÍ / NO, JA / NEIN ...).

Languages: a person's words are English's (always: Y/N, HELP, APPROVE 12 ...) plus their own
language's (``code``, a catalog code from ``text.language``), never a third language's: "si"
is a yes only to someone whose language is Spanish, so a word from a language nobody in the
conversation uses never confirms a removal. The opt-out and opt-in words stay English only
(the carriers act on them on SMS). Words are compared with accents folded on both sides
(``fold``), since SMS keyboards and GSM-7 folding drop them: "si" is "sí", "nao" is "não".

An answer is answer words alone: a text that asks back ("delete it?", "Sicher?", "Y?") is
never a yes, whatever its words (``NOT_ANSWER_MARK``), and the question it meets lapses.
"""

import re
import unicodedata
from collections.abc import Iterable, Mapping
from enum import StrEnum

from mediabot.text.language import Language, load


class Keyword(StrEnum):
    """What a whole-message keyword is (``classify_keyword``)."""

    HELP = "help"
    RESET = "reset"
    OPT_OUT = "opt_out"        # Twilio's STOP words: the person is unsubscribed
    OPT_IN = "opt_in"          # START, UNSTOP: subscribed again
    YES_OPT_IN = "yes_opt_in"  # YES: Twilio subscribes again only someone who had stopped


class YesNo(StrEnum):
    """A lone answer to a waiting question (``parse_answer``)."""

    YES = "yes"
    NO = "no"


class Verdict(StrEnum):
    """An admin's answer to a member's request (``parse_decision``)."""

    APPROVE = "approve"
    DENY = "deny"


KEYWORDS = {
    "HELP": Keyword.HELP, "INFO": Keyword.HELP,
    "RESET": Keyword.RESET, "FORGET": Keyword.RESET,
    "STOP": Keyword.OPT_OUT, "STOPALL": Keyword.OPT_OUT, "UNSUBSCRIBE": Keyword.OPT_OUT,
    "CANCEL": Keyword.OPT_OUT, "END": Keyword.OPT_OUT, "QUIT": Keyword.OPT_OUT,
    "REVOKE": Keyword.OPT_OUT, "OPTOUT": Keyword.OPT_OUT,
    "START": Keyword.OPT_IN, "UNSTOP": Keyword.OPT_IN,
    "YES": Keyword.YES_OPT_IN,
}
# HELP and RESET in each language, beside the English ones. A RESET word must never be an
# ordinary one-word answer (a Spanish "BORRAR" may answer "borrar o conservar?"), so each
# is a noun or verb nobody texts alone by chance; HELP is the usual word on signs and menus.
LOCAL_KEYWORDS: dict[str, dict[str, Keyword]] = {
    "en": {},
    "es": {"AYUDA": Keyword.HELP, "REINICIAR": Keyword.RESET},
    "de": {"HILFE": Keyword.HELP, "NEUSTART": Keyword.RESET},
    "fr": {"AIDE": Keyword.HELP, "REINITIALISER": Keyword.RESET},
    "pt": {"AJUDA": Keyword.HELP, "REINICIAR": Keyword.RESET},
    "nl": {"HULP": Keyword.HELP, "HERSTART": Keyword.RESET},
}
# Twilio's opt-out words: they unsubscribe the person, so they are never read as "no".
OPT_OUT_WORDS = frozenset(word.lower() for word, kind in KEYWORDS.items()
                          if kind == Keyword.OPT_OUT)

# Answers to a removal question, written as people type them; compared folded and lowercase.
# No language lists a "cancel"-like word ("cancelar", "annuler"): on SMS a person may expect
# it to unsubscribe, and CANCEL itself does.
YES = {
    "en": {"y", "yes", "yep", "yeah", "yup", "ya", "sure", "ok", "okay", "confirm",
           "confirmed", "do it", "go ahead", "go for it", "yes please", "please do",
           "delete it", "remove it", "affirmative", "absolutely", "correct"},
    "es": {"sí", "sí por favor", "claro", "vale", "dale", "de acuerdo", "confirmo",
           "confirmado", "adelante", "hazlo", "bórrala", "bórralo", "elimínala", "elimínalo",
           "por supuesto", "sí claro"},
    "de": {"ja", "j", "jawohl", "jep", "klar", "genau", "ja bitte", "mach", "mach es",
           "mach das", "bestätigt", "bestätige", "lösch es", "lösche es", "löschen",
           "entfernen", "entferne es", "sicher", "natürlich", "einverstanden", "passt"},
    "fr": {"oui", "ouais", "d'accord", "dac", "vas y", "allez y", "oui merci", "confirme",
           "je confirme", "supprime", "supprime la", "supprime le", "bien sûr", "volontiers"},
    "pt": {"sim", "sim por favor", "claro", "pode", "pode apagar", "pode sim", "confirmo",
           "confirmado", "apaga", "apague", "isso", "com certeza", "beleza"},
    "nl": {"ja", "j", "jazeker", "jawel", "prima", "goed", "doe maar", "doe het", "verwijder",
           "verwijder maar", "verwijder het", "zeker", "ja graag", "akkoord", "ja hoor"},
}
NO = {
    "en": {"n", "no", "nope", "nah", "no thanks", "no thank you", "keep it", "keep", "don't",
           "dont", "do not", "don't do it", "never mind", "nevermind", "abort", "no way",
           "negative", "cancel that", "cancel it", "forget it", "forget that", "leave it",
           "don't delete it", "don't remove it", "do not delete it", "do not remove it"},
    "es": {"no", "no gracias", "mejor no", "consérvala", "consérvalo", "guárdala",
           "guárdalo", "déjala", "déjalo", "no la borres", "no lo borres", "no la elimines",
           "no lo elimines", "ni hablar", "para nada", "olvídalo", "de ninguna manera"},
    "de": {"nein", "nee", "nö", "nein danke", "behalten", "behalte es", "behalt es",
           "nicht", "nicht löschen", "lieber nicht", "auf keinen fall", "bloß nicht",
           "vergiss es", "lass es", "lass das"},
    "fr": {"non", "non merci", "garde la", "garde le", "garde", "garde-la", "garde-le",
           "ne supprime pas", "surtout pas", "laisse", "laisse tomber", "pas question"},
    "pt": {"não", "não obrigado", "não obrigada", "mantém", "mantenha", "deixa", "deixa pra lá",
           "nem pensar", "não apaga", "não apague", "de jeito nenhum"},
    "nl": {"nee", "neen", "nee dank je", "nee bedankt", "niet doen", "houden", "hou het",
           "behouden", "laat maar", "liever niet", "nooit"},
}
MAX_ANSWER_WORDS = 8
# What an answer may hold besides its words: spaces and line breaks, apostrophes ("d'accord"),
# commas and dashes between phrases ("yes, do it", "garde-la"), full stops and exclamation
# marks ("Y.", "yes!"), Spanish's opening "¡". Any other mark makes it something else: a
# question mark above all ("delete it?", "¿sí?", "Sicher?"), since a person asking back has
# not said yes, and a doubtful emoji or a quote no more than one.
NOT_ANSWER_MARK = re.compile(r"[^\w\s',.!\u00a1\-\u2010-\u2015]")

# An admin's answer to a member's request when approvals are on: "APPROVE 12", "deny #12",
# "APROBAR 12". The pairs people meet on approval buttons in each language.
DECISIONS = {
    "en": {"approve": Verdict.APPROVE, "deny": Verdict.DENY},
    "es": {"aprobar": Verdict.APPROVE, "rechazar": Verdict.DENY},
    "de": {"genehmigen": Verdict.APPROVE, "ablehnen": Verdict.DENY},
    "fr": {"approuver": Verdict.APPROVE, "refuser": Verdict.DENY},
    "pt": {"aprovar": Verdict.APPROVE, "recusar": Verdict.DENY},
    "nl": {"goedkeuren": Verdict.APPROVE, "afwijzen": Verdict.DENY},
}
DECISION = re.compile(r"^\s*([a-z]+)\s*#?\s*(\d{1,9})\s*[.!]*\s*$", re.IGNORECASE)

_KEYWORD_TRIM = re.compile(r"^[\W_]+|[\W_]+$")


def fold(text: str) -> str:
    """``text`` lowercase with its accents dropped ("Bórrala" -> "borrala", "ß" -> "ss"),
    as a GSM-7 keyboard or folding would send it."""
    decomposed = unicodedata.normalize("NFKD", text.lower().replace("ß", "ss"))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _words(table: Mapping[str, Iterable[str]], code: str) -> set[str]:
    """English's entries and ``code``'s, folded (an unknown code adds nothing)."""
    return {fold(word) for word in [*table["en"], *table.get(code, ())]}


def classify_keyword(body: str, code: str = "en") -> Keyword | None:
    """The ``Keyword`` a whole message is, or None for an ordinary message.

    Like Twilio, only a whole message is a keyword (case-insensitive, trimmed); surrounding
    punctuation ("Stop!", "'HELP'") is tolerated. "cancel that" is not a keyword. The
    English words always count; ``code``'s HELP and RESET words ("AYUDA", "Neustart") too.
    """
    word = _KEYWORD_TRIM.sub("", (body or "").strip()).upper()
    local = {fold(key).upper(): kind for key, kind in LOCAL_KEYWORDS.get(code, {}).items()}
    return KEYWORDS.get(word) or local.get(fold(word).upper())


def parse_answer(text: str, code: str = "en") -> YesNo | None:
    """YES, NO or None for anything else, in English or the language ``code``.

    A message made only of yes-like phrases ("yes, do it", "sí, bórrala") is a yes, one
    made only of no-like phrases ("no, keep it", "nein, behalten") a no; a mix or any other
    word ("yes but keep the files") is not an answer, nor is an opt-out word, nor a text
    with any mark an answer does not carry (``NOT_ANSWER_MARK``): "delete it?", "Y?" and
    "Sicher?" ask back, whatever their words. Whether an answer may resolve a waiting
    question (it must be a message of its own, sent after the question) is the engine's
    decision, not this parser's.
    """
    folded = fold(text).replace("\u2019", "'")
    if NOT_ANSWER_MARK.search(folded):
        return None
    words = re.sub(r"[^\w' ]+", " ", folded).split()
    phrase = " ".join(words)
    if not phrase or phrase in OPT_OUT_WORDS or len(words) > MAX_ANSWER_WORDS:
        return None
    if _made_of(words, _phrases(YES, code)):
        return YesNo.YES
    if _made_of(words, _phrases(NO, code)):
        return YesNo.NO
    return None


def _phrases(table: dict[str, set[str]], code: str) -> frozenset[str]:
    """The folded phrases, hyphens read as spaces as in the text ("garde-la")."""
    return frozenset(" ".join(re.sub(r"[^\w' ]+", " ", word).split())
                     for word in _words(table, code))


def _made_of(words: list[str], phrases: frozenset[str]) -> bool:
    """True when ``words`` split into phrases from ``phrases`` (longest first)."""
    if not words:
        return True
    return any(" ".join(words[:size]) in phrases and _made_of(words[size:], phrases)
               for size in range(min(len(words), 4), 0, -1))


def parse_decision(text: str, code: str = "en") -> tuple[Verdict, int] | None:
    """(APPROVE or DENY, number) for "APPROVE 12" / "deny #12" (or ``code``'s words,
    "RECHAZAR 12"), else None."""
    match = DECISION.match(fold(text or ""))
    if not match:
        return None
    words = {fold(word): kind for word, kind in
             [*DECISIONS["en"].items(), *DECISIONS.get(code, {}).items()]}
    kind = words.get(match.group(1))
    return (kind, int(match.group(2))) if kind else None


def help_text(lang: Language, admin: bool = False) -> str:
    """The HELP reply in ``lang``, naming the words that language's HELP and RESET accept;
    an admin's (``admin``, while approvals are on) says how to answer a member's request."""
    text = lang.gettext(
        "mediabot: text me like a person. Try \"get the new Dune\", \"what's downloading?\", "
        "\"anything new this week?\" or \"do we have Severance?\". Reply Y or N when I ask "
        "to confirm. RESET clears our chat. STOP unsubscribes, START resumes.")
    if not admin:
        return text
    return text + " " + lang.gettext(
        "Admins: APPROVE 12 or DENY 12 answers a member's request 12.")


HELP_TEXT = help_text(load("en"))   # the English text, as tests and docs quote it
