"""Routing one incoming text: keywords, confirmations, approvals, onboarding, else the model.

``Engine.respond(incoming)`` takes a text already read once (``incoming.Incoming``: its
keyword, decision and Y/N decided where it entered) and returns a ``Handled``: the reply
(``posters.Reply``: its text and any posters) for whoever delivers it (SMS worker or
terminal chat), never empty, since even a failed model call gets a fixed apology, and the
frame the model turn built, if one ran, which ``after_turn`` hands to the rolling summary
before it has the server read the person's next prompt ahead (``read_ahead``).
``Engine.handle(user_id, text)`` is the terminal's way in: it reads a typed text and
returns the reply's text. The model turn itself is ``model_turn.run_model_turn``.
Everything is passed in through ``services.Services``, so tests hand in fakes.

Confirmations (docs/architecture.md, "Confirmations"): a
removal the model asks for waits for the person's very next text. Only a
lone Y/N sent after the question answers it, and the question is asked when Twilio
accepted its text, not when it was stored (``confirm.answers``): texts joined from a burst
carry no answer, and the text's inbox row decides whether it was already on its way. Any
other text (a picture with no words too, answered ``NO_TEXT_REPLY``) lets the question
lapse: the action is deleted, the reply starts with one line saying so, and the text is
handled as usual (keyword or model). So a "yes" to a question the model asked itself
reaches the model, never a removal; a Y with nothing waiting goes to the model too (or gets
the expiry notice when the action expired before the sweep ran).

Every fixed text here is in the person's language (``Person.language``: their ``[[users]]``
language, else ``[sms] language``); the English constants below are those texts in English.
"""

import datetime as dt
import json
import logging
import re
from dataclasses import dataclass, replace

from mediabot.arr.tools import ToolError, get_tool, run_tool
from mediabot.conversation import confirmations as confirm
from mediabot.conversation import history
from mediabot.conversation.forget import forget_conversation
from mediabot.conversation.incoming import Incoming, read_text
from mediabot.conversation.model_turn import run_model_turn
from mediabot.conversation.read_ahead import read_next_prompt
from mediabot.conversation.reply import Reply
from mediabot.conversation.services import (
    Frame,
    Services,
    approvals_on,
    approved_context,
    build_frame,
    tool_context,
    tools_for,
)
from mediabot.model import calibration
from mediabot.store import db, people
from mediabot.store.people import Person, person_of
from mediabot.store.users import set_display_name
from mediabot.text.keywords import Keyword, YesNo, help_text, parse_answer
from mediabot.text.language import Language, load

log = logging.getLogger(__name__)


def onboarding_question(lang: Language) -> str:
    return lang.gettext("Hi! I'm the house media bot: I can find, add and check movies and "
                        "shows for you. What should I call you?")


def reset_reply(lang: Language) -> str:
    return lang.gettext("Done - I've forgotten our conversation. What can I do for you?")


def no_text_reply(lang: Language) -> str:
    return lang.gettext("I can only read text, so I couldn't see what you sent. Please type "
                        "what you'd like.")


ONBOARDING_QUESTION = onboarding_question(load("en"))
RESET_REPLY = reset_reply(load("en"))
NO_TEXT_REPLY = no_text_reply(load("en"))
# Replies to "What should I call you?" that are not names (yes/no-like words are caught too),
# in every shipped language: onboarding happens before anyone knows a person's language well.
NOT_NAMES = frozenset({"hi", "hello", "hey", "thanks", "thank you", "thx", "ty", "lol", "what",
                       "why", "who", "huh", "idk", "hmm", "help", "help me", "anything",
                       "whatever", "nothing", "ok thanks", "later", "skip",
                       "hola", "gracias", "ayuda", "nada", "qué", "que", "quién", "nadie",
                       "hallo", "danke", "hilfe", "nichts", "was", "wer", "egal",
                       "salut", "bonjour", "merci", "aide", "rien", "quoi", "qui",
                       "oi", "olá", "ola", "obrigado", "obrigada", "ajuda", "quem",
                       "hoi", "dank je", "bedankt", "hulp", "niets", "wat", "wie"})
# "I'm Sam" in each shipped language: "me llamo Ana", "ich heiße Jürgen", "je m'appelle
# Émile", "meu nome é João", "ik heet Sanne" (greetings first are allowed).
_GREETINGS = r"hi|hey|hello|hola|hallo|salut|bonjour|oi|ol[áa]|hoi"
_INTROS = (r"i'?m|i am|it'?s|my name is|call me|this is|name'?s"
           r"|me llamo|soy|mi nombre es|ll[áa]mame"
           r"|ich hei(?:ß|ss)e|ich bin|mein name ist|nenn mich"
           r"|je m'appelle|je suis|moi c'est|appelle-moi"
           r"|me chamo|meu nome [ée]|eu sou|sou|pode me chamar de"
           r"|ik heet|ik ben|mijn naam is|noem me")
_WORD = r"[^\W\d_][\w'\-]*"
NAME_PATTERN = re.compile(rf"^(?:(?:{_GREETINGS})[,! ]+)?(?:(?:{_INTROS})\s+)?"
                          rf"({_WORD}(?: {_WORD})?)[.!]*$", re.IGNORECASE)


@dataclass(frozen=True)
class Handled:
    """The reply to one incoming text (its text, with posters as ``media`` when any), who it
    is for, and the frame the model turn built (None when no model turn ran)."""

    reply: Reply
    person: Person
    frame: Frame | None = None


class Engine:
    def __init__(self, services: Services) -> None:
        self.services = services
        self.config = services.config

    def handle(self, user_id: int, text: str) -> str:
        """A text typed at the terminal (or in a test), read here once: the reply."""
        person = people.get_person(user_id, self.config.sms.language)
        return self.respond(read_text(person, text)).reply.text

    def respond(self, incoming: Incoming) -> Handled:
        """Answer one incoming text: a waiting question's Y/N, a keyword, an admin's
        decision, onboarding, or the model. Raises only what storage raises."""
        now, user = self.services.clock(), incoming.person
        pending = confirm.active_pending(user.id, now)
        if pending and incoming.yes_no and confirm.answers(pending, incoming.inbox_id):
            return Handled(Reply(self._resolve(user, pending, incoming.yes_no, incoming.text)),
                          user)
        if incoming.yes_no and not pending and (lapsed := self._lapsed(user, now)):
            return Handled(Reply(self._exchange(user, incoming.text, lapsed)), user)
        note = self._let_lapse(user, pending) if pending else ""
        reply = self._keyword_reply(incoming, now)
        if reply is not None:
            return Handled(Reply(note + reply), user)
        if not user.name:
            onboarding, user = self._onboard(user, incoming.text)
            if onboarding is not None:
                return Handled(Reply(note + onboarding), user)
        else:
            history.save_message(user.id, {"role": "user", "content": incoming.text}, at=now)
        answered, frame = run_model_turn(self.services, user, incoming.text, note=note,
                                         inbox_id=incoming.inbox_id)
        return Handled(answered, user, frame)

    def _keyword_reply(self, incoming: Incoming, now: dt.datetime) -> str | None:
        """The fixed reply to a picture without words, HELP, RESET or an admin's APPROVE 12
        / DENY 12; None for a text the model (or onboarding) reads."""
        user = incoming.person
        if not incoming.text.strip():
            return no_text_reply(incoming.language)   # nothing stored: nothing to remember
        if incoming.keyword == Keyword.HELP:
            return help_text(incoming.language, admin=approvals_on(self.services, user))
        if incoming.keyword == Keyword.RESET:
            return self._reset(user)
        decided = self.services.approvals.decide(
            user, *incoming.decision, now, self._run_approved,
            inbox_id=incoming.inbox_id) if incoming.decision else None
        return self._exchange(user, incoming.text, decided) if decided is not None else None

    def after_turn(self, answer: Handled) -> None:
        """Work that must not delay the reply, once it has gone: the rolling summary, when
        turned on, then the person's next prompt read ahead (``read_ahead``), on the history
        the summary left.

        The summary must cover what the turn's prompt evicts, so it is told the system
        prompt and tool schemas the turn counted against the budget (the turn's own frame,
        built here only when no model turn ran) and the budget the next turn will cut at,
        in the server's tokens (``calibration``).
        """
        person = answer.person
        if self._summarise(answer):   # the person's part now carries the new summary
            person = people.get_person(person.id, self.config.sms.language)
        read_next_prompt(self.services, person)

    def _summarise(self, answer: Handled) -> bool:
        """The rolling summary brought up to date; True when it changed."""
        summarizer = self.services.summarizer   # set only when [history] summaries is on
        if summarizer is None:
            return False
        frame = answer.frame or build_frame(self.services, answer.person)
        config = self.services.config
        ratio = calibration.ratio_for(config.llm.model)
        return summarizer.update(answer.person, system_prompt=frame.system,
                                 reserved_tokens=frame.reserved, zone=frame.zone,
                                 person=frame.person, tool_order=list(frame.tools),
                                 max_tokens=calibration.estimate_budget(
                                     config.history.max_context_tokens, ratio),
                                 prompt_tokens=calibration.estimate_budget(
                                     config.history.max_prompt_tokens, ratio))

    # -- confirmations, approvals, onboarding -------------------------------------------

    def _run_approved(self, row: db.Approval) -> None:
        """An approved request's add, run as the member who asked (no rules this time)."""
        context = approved_context(self.services, person_of(row.user, self.config.sms.language))
        tool = get_tool(row.tool)
        if tool is None:   # held by an older mediabot whose tool has since been renamed
            raise ToolError("this mediabot can no longer run it; ask for it again")
        result = run_tool(tool, context, row.arguments)
        if result.error is not None:
            raise ToolError(result.error)

    def _reset(self, user: Person) -> str:
        removed = forget_conversation(user.id)
        log.info("user %s reset their conversation (%d messages removed)", user.id, removed)
        return reset_reply(user.language)

    def _exchange(self, user: Person, text: str, reply: str) -> str:
        """Store a user message and mediabot's own (not the model's) answer to it."""
        history.save_message(user.id, {"role": "user", "content": text},
                             at=self.services.clock())
        history.save_message(user.id, {"role": "assistant", "content": reply})
        return reply

    def _let_lapse(self, user: Person, pending: db.PendingAction) -> str:
        """The text was not an answer: drop the question; the line (and newline) that says so.

        An empty string when the sweep or another turn already took it.
        """
        if not confirm.take_pending(pending):
            return ""
        log.info("user %s: the question about %s lapsed (not answered by the next text)",
                 user.id, pending.function_name)
        return confirm.lapse_notice(pending, user.language) + "\n"

    def _lapsed(self, user: Person, now: dt.datetime) -> str | None:
        """A Y/N to an action that expired before the sweep removed it: say so, run nothing."""
        action = confirm.find_pending(user.id)
        if action is None or not confirm.take_pending(action):
            return None
        log.info("user %s answered an expired confirmation", user.id)
        lang = user.language
        return (confirm.expiry_notice(action, lang) + " "
                + lang.gettext("Ask again if you still want it."))

    def _resolve(self, user: Person, pending: db.PendingAction, answer: YesNo,
                 text: str) -> str:
        lang = user.language
        if not confirm.take_pending(pending):
            return self._exchange(user, text, lang.gettext(
                "That request is no longer open, so nothing was changed."))
        if answer == YesNo.NO:
            log.info("user %s cancelled %s", user.id, pending.function_name)
            return self._exchange(user, text, lang.gettext("OK, I kept it. Nothing was removed."))
        log.info("user %s confirmed %s", user.id, pending.function_name)
        return self._exchange(user, text, self._execute_confirmed(user, pending))

    def _execute_confirmed(self, user: Person, pending: db.PendingAction) -> str:
        tool, lang = get_tool(pending.function_name), user.language
        allowed = {t.name for t in tools_for(self.services, user)}
        if tool is None or tool.name not in allowed:
            return lang.gettext("Sorry, you're not allowed to do that, so nothing was removed.")
        result = run_tool(tool, tool_context(self.services, user), json.loads(pending.arguments))
        if result.error is not None:
            return lang.gettext("Sorry, that didn't work: {error}", error=result.error)
        return result.message or lang.gettext("Done.")

    def _onboard(self, user: Person, text: str) -> tuple[str | None, Person]:
        """Ask a nameless user for a name once; take their answer as the name if it fits.

        Returns the question on first contact, or None to go on to the model (with the
        user's message already saved) once the answer has been read; and the person, with
        the name they gave.
        """
        recent = history.get_history(user.id, self.config.history.fetch_limit)
        lang = user.language
        question = onboarding_question(lang)
        asked = any(m["role"] == "assistant" and m.get("content") == question for m in recent)
        if not asked:
            return self._exchange(user, text, question), user
        history.save_message(user.id, {"role": "user", "content": text},
                             at=self.services.clock())
        name = extract_name(text, lang.code) if recent[-1].get("content") == question else None
        if name:
            set_display_name(user.id, name)
            log.info("user %s gave their name", user.id)
            return None, replace(user, name=name)
        return None, user


def extract_name(text: str, code: str = "en") -> str | None:
    """'I'm Sam' / 'Sam' / 'call me Jo Ann' -> the name; anything longer is not a name, nor
    is a yes or no in English or the language ``code`` ("Sí")."""
    match = NAME_PATTERN.match(text.strip())
    if not match:
        return None
    name = match.group(1).strip()
    if len(name) > 30 or name.lower() in NOT_NAMES or parse_answer(name, code):
        return None
    return " ".join(part[:1].upper() + part[1:] for part in name.split())

