"""An inbound text, read once where it enters: the worker for SMS, ``Engine.handle`` for the
terminal.

What the words are (a keyword, an admin's APPROVE 12, a Y or N) is decided here, once, and
everything after reads these fields instead of parsing the text again. A Y or N counts as an
answer only in a text that came alone: texts joined from a burst (``join_texts``) are never
one, so a "yes" typed beside other words never confirms a removal.

The words are read in English and in the sender's language (their ``[[users]]`` language,
else the household's ``[sms] language``, which the caller passes as ``household``): a
Spanish speaker's "sí" or "AYUDA" is read here like a "Y" or "HELP".
"""

from dataclasses import dataclass

from mediabot.store import db
from mediabot.text.keywords import (
    Keyword,
    Verdict,
    YesNo,
    classify_keyword,
    parse_answer,
    parse_decision,
)
from mediabot.text.language import speaking


@dataclass(frozen=True)
class Incoming:
    """One turn's text and what it was read as.

    ``keyword``: a ``Keyword`` or None; ``decision``: (APPROVE or DENY, number) or None;
    ``answer``: YES, NO or None (only for a text that came alone); ``inbox_id``: the (last)
    inbox row, None off SMS.
    """

    user: db.User
    text: str
    keyword: Keyword | None = None
    decision: tuple[Verdict, int] | None = None
    answer: YesNo | None = None
    alone: bool = True
    inbox_id: int | None = None


def read_text(user: db.User, text: str, inbox_id: int | None = None, *,
              household: str = "en") -> Incoming:
    """A text that came on its own, read in English and ``user``'s language (theirs, else
    ``household``, the ``[sms] language``)."""
    code = speaking(getattr(user, "language", None), household).code
    return Incoming(user, text, classify_keyword(text, code), parse_decision(text, code),
                    parse_answer(text, code), True, inbox_id)


def join_texts(texts: list[Incoming]) -> Incoming:
    """Several texts of a burst, answered as one (newline-separated; a picture's empty text
    left out). One text stays what it was read as; joined ones are neither a keyword, a
    decision nor an answer, since each only counts as a whole message."""
    if len(texts) == 1:
        return texts[0]
    text = "\n".join(t.text for t in texts if t.text.strip())
    return Incoming(texts[-1].user, text, alone=False, inbox_id=texts[-1].inbox_id)
