"""An inbound text, read once where it enters: the worker for SMS and WhatsApp,
``Engine.handle`` for the terminal.

What the words are (a keyword, an admin's APPROVE 12, a Y or N) is decided here, once, and
everything after reads these fields instead of parsing the text again. So is who sent it:
the person, read once by the caller (``people.Person``, with the language they read, their
``[[users]]`` language else the household's ``[sms] language``), and the channel the text
came on, which its reply goes back on. A Y or N counts as an answer only in a text
that came alone: texts joined from a burst (``join_texts``) are never one, so a "yes" typed
beside other words never confirms a removal.

The words are read in English and in the sender's language: a Spanish speaker's "sí" or
"AYUDA" is read here like a "Y" or "HELP". An opt-out word (STOP) is read at the webhook,
which flags the person at once; the worker takes that reading from the inbox row
(``inbox.opt_out``) rather than from ``keyword``.
"""

from dataclasses import dataclass

from mediabot.store.people import Person
from mediabot.text.keywords import (
    Keyword,
    Verdict,
    YesNo,
    classify_keyword,
    parse_answer,
    parse_decision,
)
from mediabot.text.language import Language
from mediabot.text.phones import SMS, Channel


@dataclass(frozen=True)
class Incoming:
    """One turn's text, who sent it and what it was read as.

    ``language``: the sender's; ``channel``: where it came (the last text's, for a burst);
    ``keyword``: a ``Keyword`` or None; ``decision``: (APPROVE or DENY, number) or None;
    ``yes_no``: YES, NO or None (only for a text that came alone); ``inbox_id``: the (last)
    inbox row, None at the terminal.
    """

    person: Person
    text: str
    channel: Channel = SMS
    keyword: Keyword | None = None
    decision: tuple[Verdict, int] | None = None
    yes_no: YesNo | None = None
    alone: bool = True
    inbox_id: int | None = None

    @property
    def language(self) -> Language:
        return self.person.language


def read_text(person: Person, text: str, inbox_id: int | None = None, *,
              channel: Channel = SMS) -> Incoming:
    """A text that came on its own on ``channel`` from ``person`` (read once, by the caller),
    read in English and their language."""
    lang = person.language
    return Incoming(person, text, channel, classify_keyword(text, lang.code),
                    parse_decision(text, lang.code), parse_answer(text, lang.code), True,
                    inbox_id)


def join_texts(texts: list[Incoming]) -> Incoming:
    """Several texts of a burst, answered as one (newline-separated; a picture's empty text
    left out). One text stays what it was read as; joined ones are neither a keyword, a
    decision nor an answer, since each only counts as a whole message."""
    if len(texts) == 1:
        return texts[0]
    last = texts[-1]
    text = "\n".join(t.text for t in texts if t.text.strip())
    return Incoming(last.person, text, last.channel, alone=False,
                    inbox_id=last.inbox_id)
