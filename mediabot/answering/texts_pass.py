"""One user's queued texts answered: read in order, rate-limited, answered, committed.

The person is read once for the pass (``people.get_person``: a ``Person``, with the language
they read) and handed down with each text; each text is read once, as it comes out of the
inbox (``incoming.read_text``: keyword, APPROVE/DENY, Y/N and the channel it came on);
everything after uses that reading (a STOP or START of the burst is applied to the value, so
the rest of the pass sees it): the reply and every fixed text are written in
``incoming.language`` and go back on ``incoming.channel``. A STOP was read at the webhook,
which opted the person out then; the row keeps that reading (``inbox.opt_out``) and it is
taken from there. Every text of a burst is read on its own before anything is joined,
since a keyword only counts as a whole message:

- STOP-like and START-like words flag the user (no model call, no reply), as a lone text
  does; either also drops a removal question waiting for its Y. They apply in the order
  sent: what came before a STOP is still answered (an admin's "APPROVE 12" then "STOP"
  decides 12, then opts out), what came after it is ignored until a START. A START-like
  word sent by SMS also lifts Twilio's own SMS opt-out for them (``sms_optout``), as it
  does at Twilio.
- HELP, RESET and an admin's APPROVE 12 / DENY 12 are each answered on their own, first,
  in the order they came, with their own reply (a RESET clears history and any waiting
  question before the rest is read). So "RESET" + "what is new?" gets "Done - I've
  forgotten our conversation..." and then the model's answer to "what is new?" from a clean
  history: two texts.
- The remaining texts are joined into one turn (``incoming.join_texts``). A Y or N among
  them is not an answer to a waiting removal (only a lone text sent after the question is,
  see ``engine``): the question lapses and the reply starts with a line saying so. A burst
  of one text is the ordinary single message.

Each turn's reply is queued in the outbox against the turn's last inbox row (unique), and
its rows become ``done`` only in the same step, so a retry or a restart after a crash never
answers twice: it finds that reply and sends it, or the reply the crashed turn already
stored (``stored_reply``). A storage fault is not answered here: it goes up to the worker,
which leaves the rows retryable and tries again (``faults``).
"""

import datetime as dt
import logging
from dataclasses import dataclass, replace
from typing import Protocol

from mediabot.answering.faults import OpenTurns, Retries, is_storage_fault, storage_apology
from mediabot.config import SmsConfig
from mediabot.conversation import confirmations as confirm
from mediabot.conversation.engine import Handled
from mediabot.conversation.history import delete_messages_after, newest_rows
from mediabot.conversation.incoming import Incoming, join_texts, read_text
from mediabot.conversation.reply import Reply
from mediabot.mailbox import inbox, sms_optout
from mediabot.mailbox.delivery import Sender
from mediabot.mailbox.outbox import queued_since, recent_turns, reply_to
from mediabot.store import db, people
from mediabot.store.db import InboxError, InboxStatus, OutboxStatus, TextKind
from mediabot.store.people import Person
from mediabot.store.users import set_opted_out
from mediabot.text.language import SOURCE, Language, load
from mediabot.text.localtime import Clock
from mediabot.text.phones import Channel

log = logging.getLogger(__name__)


def rate_limit_reply(lang: Language) -> str:
    """The one notice an hour for a person past ``[sms] rate_limit_per_hour``."""
    return lang.gettext("You've sent a lot of messages this hour, so I'm taking a short "
                        "break. Try again in a little while.")


def opted_out_reply(lang: Language) -> str:
    """The one text after a STOP where no carrier confirms it (the household's phone)."""
    return lang.gettext("You won't get any more texts from me. Send START to get them again.")


def opted_in_reply(lang: Language) -> str:
    """The text after the START that ends an opt-out, where no carrier confirms it."""
    return lang.gettext("Welcome back: you'll get my texts again.")


def failed_reply(lang: Language) -> str:
    """The reply to a turn that failed with anything but a storage fault."""
    return lang.gettext("Sorry, something went wrong on my side. Please try again.")


RATE_LIMIT_REPLY = rate_limit_reply(load(SOURCE))
FAILED_REPLY = failed_reply(load(SOURCE))
ANSWERED_ALONE = ("help", "reset")  # keywords a burst answers as texts of their own
OPT_IN_WORDS = ("opt_in", "yes_opt_in")
STORED_REPLY_LOOKBACK = 40  # messages: one turn's user message, tool rounds and reply


class Responder(Protocol):
    """The engine as answering sees it (``conversation.engine.Engine``; tests hand in a
    recording one): a text read once in, the reply out, then the work that may wait."""

    def respond(self, incoming: Incoming) -> Handled: ...

    def after_turn(self, answer: Handled) -> None: ...


@dataclass(frozen=True)
class Text:
    """An inbox row and how its text was read."""

    row: db.Inbox
    incoming: Incoming


class TextsPass:
    """Answers a user's queued texts; the worker calls ``user`` for one user at a time."""

    def __init__(self, engine: Responder, sender: Sender, config: SmsConfig, retries: Retries,
                 turns: OpenTurns, clock: Clock = db.utcnow) -> None:
        self.engine, self.sender, self.config = engine, sender, config
        self.retries, self.turns, self.clock = retries, turns, clock

    def user(self, user_id: int) -> None:
        """Answer everything this user has queued: each HELP/RESET/APPROVE/DENY text alone,
        then the rest as one turn (``burst_turns``)."""
        rows = inbox.unanswered_rows(user_id)
        if not rows:
            return
        person = people.get_person(user_id, self.config.language)   # once, for the pass
        texts = self._read_in_order([self._read(person, row) for row in rows])
        for turn in burst_turns(texts):
            self._answer(turn)

    def _read(self, person: Person, row: db.Inbox) -> Text:
        """The row's text read once: its words, the person's language, its channel."""
        return Text(row, read_text(person, row.body, row.id, channel=Channel(row.channel)))

    def _read_in_order(self, texts: list[Text]) -> list[Text]:
        """Apply the burst's STOP/START words in the order sent; the texts to answer.

        A text sent before a STOP keeps its meaning ("APPROVE 12" then "STOP" decides 12,
        then opts out; the reply is not sent, as the person opted out); a text sent while
        opted out is ignored. A STOP is the webhook's reading, kept on its row
        (``inbox.opt_out``): the webhook opted the person out then, so before the burst they
        were as they are now unless one of its rows did that.
        """
        stored = texts[0].incoming.person.opted_out   # what the row says, as the burst goes
        lifted = False   # an SMS START lifted Twilio's SMS opt-out
        opted_out = stored and not any(t.row.opt_out for t in texts)
        kept: list[Text] = []
        ignored: list[Text] = []
        for text in texts:
            taken, stored, lifted_now = self._opt_keyword(text, stored)
            lifted = lifted or lifted_now
            if taken:
                opted_out = stored
                continue
            opted_out = stored if text.incoming.keyword == "yes_opt_in" else opted_out
            (ignored if opted_out else kept).append(text)
        if ignored:
            inbox.set_status([t.row for t in ignored], InboxStatus.IGNORED,
                              InboxError.OPTED_OUT)
        return _as_now(kept, stored, lifted)

    def _opt_keyword(self, text: Text, opted_out: bool) -> tuple[bool, bool, bool]:
        """STOP-like and START-like words flag the user (``opted_out``: as stored before this
        text), no model call, no reply: whether the text is taken (a YES also opts in, but is
        then read as an ordinary text), whether they are opted out after it, and whether it
        lifted Twilio's SMS opt-out."""
        user, keyword, row = text.incoming.person, text.incoming.keyword, text.row
        opted_in = keyword in OPT_IN_WORDS and opted_out
        if opted_in:
            set_opted_out(user.id, False)
            opted_out = False
            log.info("inbox %s: user %s opted in", row.id, user.id)
        lifted = keyword in OPT_IN_WORDS and sms_optout.lift(user, text.incoming.channel)
        if row.opt_out:
            set_opted_out(user.id, True)
            opted_out = True
            log.info("inbox %s: user %s opted out", row.id, user.id)
        if not (row.opt_out or keyword == "opt_in"):
            return False, opted_out, lifted
        confirm.clear_pending(user.id)  # the question's answer must be the very next text
        if row.opt_out or opted_in:
            self._confirm_opt(text, opted_in)
        inbox.set_status([row], InboxStatus.DONE)
        return True, opted_out, lifted

    def _confirm_opt(self, text: Text, opted_in: bool) -> None:
        """Where the carrier of the text's channel confirms no STOP or START itself (the
        household's phone: a personal SIM's network does not), mediabot does, once (the
        confirmation answers the keyword's row, so a retry never sends it twice)."""
        channel, lang = text.incoming.channel, text.incoming.language
        if self.sender.carriers.answers_opt_out(channel):
            return
        body, kind = ((opted_in_reply(lang), TextKind.REPLY) if opted_in
                      else (opted_out_reply(lang), TextKind.OPT_OUT))
        self.sender.send(text.incoming.person, body, inbox_id=text.row.id, reply_on=channel,
                         shape=True, kind=kind)

    def _answer(self, texts: list[Text]) -> None:
        """One turn for ``texts``, unless answered before a crash or over the limit."""
        rows, incoming = [t.row for t in texts], join_texts([t.incoming for t in texts])
        user = incoming.person
        interrupted = (any(row.status == InboxStatus.PROCESSING for row in rows)
                       or self.retries.failures(user.id) > 0)
        inbox.set_status(rows, InboxStatus.PROCESSING)
        if self._sent_before(user, rows):
            return
        if self.retries.exhausted(user.id):
            return self._apologise(incoming, rows)
        if self._rate_limited(user):
            return self._refuse(incoming, rows)
        stored = stored_reply(user.id, incoming.text, rows[0].received_at) \
            if interrupted else None
        if stored is not None:
            log.info("inbox %s: answered before a crash; sending that reply", rows[-1].id)
            self._commit_reply(incoming, rows, Reply(stored), InboxStatus.DONE)
            return
        self._turn(incoming, rows)

    def _sent_before(self, user: Person, rows: list[db.Inbox]) -> bool:
        """Queued before a crash or a failed write: close the rows, send it, never twice."""
        answered = reply_to(rows[-1].id)
        if answered is None:
            return False
        inbox.set_status(rows, InboxStatus.DONE)
        self.retries.succeeded(user.id)
        if answered.status == OutboxStatus.PENDING:
            self.sender.deliver(answered.id)
        return True

    def _turn(self, incoming: Incoming, rows: list[db.Inbox]) -> None:
        """The engine's turn. Rows become ``done`` (or ``failed``) only once the reply is in
        the outbox: a crash before that leaves them ``processing`` for ``recover``, a crash
        after it finds the outbox row and sends it, so a reply is neither lost nor doubled."""
        user = incoming.person
        log.info("inbox %s: turn for user %s (%d message(s))", rows[-1].id, user.id, len(rows))
        self.turns.begin(user.id)
        if self.retries.failures(user.id):   # a retry starts from before the failed attempt
            delete_messages_after(user.id, self.turns.start_of(user.id))
        try:
            answer = self.engine.respond(incoming)
        except Exception as exc:
            if is_storage_fault(exc):
                raise
            log.exception("inbox %s: turn failed", rows[-1].id)
            self._commit_reply(incoming, rows, Reply(failed_reply(incoming.language)),
                               InboxStatus.FAILED, type(exc).__name__)
            return
        if not self._commit_reply(incoming, rows, answer.reply, InboxStatus.DONE):
            return
        try:
            self.engine.after_turn(answer)
        except Exception:
            log.exception("after-turn work for user %s failed", user.id)

    def _commit_reply(self, incoming: Incoming, rows: list[db.Inbox], reply: Reply | None,
                      status: InboxStatus, error: str | None = None) -> bool:
        """Queue the reply and close the rows, then send; False (nothing kept, nothing
        sent) when the shutdown drain let this turn go while it ran."""
        user = incoming.person
        with self.turns.commit:
            if self.turns.abandoned:
                self.turns.take_back(user.id)
                return False
            queued = self._queue_reply(incoming, rows[-1], reply) if reply and reply.text \
                else None
            inbox.set_status(rows, status, error)
            self.turns.closed(user.id)
            self.retries.succeeded(user.id)
        if queued is not None and queued.status == OutboxStatus.PENDING \
                and not self.turns.abandoned:
            self.sender.deliver(queued.id)   # after the drain: sent by the next start
            # then what waited for WhatsApp's window, on the channel they wrote on
            self.sender.deliver_held(incoming.person, incoming.channel, before=queued.id)
        return True

    def _apologise(self, incoming: Incoming, rows: list[db.Inbox]) -> None:
        """The turn failed ``retry.attempts`` times: say sorry instead of answering."""
        failures = self.retries.failures(incoming.person.id)
        log.error("inbox %s: gave up after %d failed attempts; the user gets an apology",
                  rows[-1].id, failures)
        self._commit_reply(incoming, rows, Reply(storage_apology(incoming.language)),
                           InboxStatus.FAILED, f"gave up after {failures} failed attempts")

    def _queue_reply(self, incoming: Incoming, row: db.Inbox, reply: Reply) -> db.Outbox | None:
        return self.sender.enqueue(incoming.person, reply.text, inbox_id=row.id,
                                   reply_on=incoming.channel,   # back where it came from
                                   media_urls=reply.media,  # posters
                                   shape=True,   # for the channel it goes on
                                   kind=db.TextKind.REPLY)

    def _rate_limited(self, user: Person) -> bool:
        since = self.clock() - dt.timedelta(hours=1)
        return recent_turns(user.id, since).count() >= self.config.rate_limit_per_hour

    def _refuse(self, incoming: Incoming, rows: list[db.Inbox]) -> None:
        """Past the hourly limit: no model call, and one polite SMS per hour at most."""
        user = incoming.person
        inbox.set_status(rows, InboxStatus.IGNORED, InboxError.RATE_LIMITED)
        now, hour = self.clock(), dt.timedelta(hours=1)
        log.warning("inbox %s: user %s is over %d turns an hour", rows[-1].id, user.id,
                    self.config.rate_limit_per_hour)
        keys = [f"rate-limit:{user.id}:" + moment.strftime("%Y%m%d%H")
                for moment in (now - hour, now)]
        if not queued_since(keys, now - hour):
            self.sender.send(incoming.person, rate_limit_reply(incoming.language),
                             dedupe_key=keys[-1], shape=True)


def _as_now(texts: list[Text], opted_out: bool, lifted: bool) -> list[Text]:
    """The texts with their person as the burst's STOP/START words left them (what the
    rest of the pass reads of them, so their reply goes as it now may)."""
    if not texts:
        return texts
    before = texts[0].incoming.person
    now = replace(before, opted_out=opted_out,
                  sms_blocked_since=None if lifted else before.sms_blocked_since)
    return [Text(t.row, replace(t.incoming, person=now)) for t in texts]


def burst_turns(texts: list[Text]) -> list[list[Text]]:
    """The turns a burst of texts is answered in, each a list of texts.

    HELP, RESET and an admin's APPROVE/DENY come first, each as a turn of its own (in
    arrival order), then all other texts as one turn. The split depends only on the texts,
    so a restart that finds the same rows queued makes the same turns and finds their
    replies by the same rows.
    """
    alone = [[text] for text in texts if _answered_alone(text.incoming)]
    rest = [text for text in texts if not _answered_alone(text.incoming)]
    return alone + ([rest] if rest else [])


def _answered_alone(incoming: Incoming) -> bool:
    return incoming.keyword in ANSWERED_ALONE or incoming.decision is not None


def stored_reply(user_id: int, text: str, since: dt.datetime) -> str | None:
    """The reply a crashed turn already stored for ``text``, if it got that far.

    A crash between the engine saving its reply and the reply reaching the outbox would
    otherwise run the turn again: a second model call, and tools run twice (an add that then
    answers "already in the library"). Found when the newest stored message is a plain
    assistant reply and the user message before it is this text, stored since ``since``.
    """
    recent = newest_rows(user_id, STORED_REPLY_LOOKBACK)
    if not recent or recent[0].role != "assistant" or recent[0].tool_calls \
            or not recent[0].content:
        return None
    asked = next((m for m in recent[1:] if m.role == "user"), None)
    if asked is None or asked.content != text or asked.created_at < since:
        return None
    return recent[0].content
