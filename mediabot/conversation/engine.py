"""One turn of conversation: keywords, confirmations, onboarding, the model loop, persistence.

``Engine.handle(user_id, text)`` returns the reply text for whoever delivers it (SMS worker
or terminal chat); it is never empty, since even a failed model call gets a fixed apology.
Everything it needs is passed in through ``Services``, so tests hand in fakes.

Confirmations (docs/architecture.md, "Confirmations"): a removal the model asks for waits for the person's very
next text. Only a lone Y/N sent after the question answers it, and the question is asked
when Twilio accepted its text, not when it was stored (``confirm.answers``): the worker passes
``alone=False`` for texts joined from a burst and the text's ``inbox_id``, so a "yes" that
was already on its way, or typed beside other words, is never an answer. Any other text
(a picture with no words too, ``drop_question``) lets the question lapse: the action is
deleted, the reply starts with one line saying so, and the text is handled as usual
(keyword or model). So a "yes" to a question the model asked itself reaches the model,
never a removal; a Y with nothing waiting goes to the model too (or gets the expiry notice
when the action expired before the sweep ran).
"""

import datetime as dt
import json
import logging
import re
import time
from dataclasses import dataclass
from typing import Callable

from mediabot.conversation import confirmations as confirm
from mediabot.store import db
from mediabot.conversation.prompt import history
from mediabot.config import Config
from mediabot.conversation.forget import forget_conversation
from mediabot.text.keywords import (ADMIN_HELP, HELP_TEXT, classify_keyword, parse_answer,
                                       parse_decision)
from mediabot.conversation.llm import ChatModel, ModelError, ToolOutcome, run_tool_loop
from mediabot.text.localtime import as_local
from mediabot.conversation.posters import Offered, choose_posters, with_media
from mediabot.conversation.prompt.system_prompt import build_system_prompt
from mediabot.conversation.household import HouseRules
from mediabot.arr.requests import record_request
from mediabot.arr.searches import SearchLimit
from mediabot.conversation.prompt.summaries import Summarizer
from mediabot.arr.tools import (ToolContext, ToolError, available_tools, describe_action,
                                   get_tool, parse_arguments, run_tool, tool_schemas)

log = logging.getLogger(__name__)

ONBOARDING_QUESTION = ("Hi! I'm the house media bot: I can find, add and check movies and "
                       "shows for you. What should I call you?")
RESET_REPLY = "Done - I've forgotten our conversation. What can I do for you?"
NO_ANSWER_REPLY = "Sorry, I have no answer to that. Could you rephrase it?"  # model said nothing
ROUND_LIMIT_REPLY = "Sorry, I couldn't finish that. Could you try rephrasing it?"
APOLOGIES = {
    "timeout": "Sorry, I'm answering too slowly right now. Please try again in a minute.",
    "unreachable": "Sorry, I can't reach my language model right now. Please try again later.",
    "misconfigured": "Sorry, my language model isn't set up right. Please tell whoever runs "
                     "this number.",
}
# When the model server refuses even the smallest prompt (system prompt and this message).
STUCK_REPLY = ("Sorry, my language model can't take our conversation right now. Text RESET "
               "to start over, then ask again.")
ONE_AT_A_TIME = ("not asked: only one removal can wait for a Y at a time, and another is "
                 "waiting; nothing was removed")
ONE_AT_A_TIME_NOTE = "(I remove one thing at a time: ask me again for the rest after this.)"
APOLOGY = "Sorry, something went wrong on my side. Please try again in a moment."
# Replies to "What should I call you?" that are not names (yes/no-like words are caught too).
NOT_NAMES = frozenset({"hi", "hello", "hey", "thanks", "thank you", "thx", "ty", "lol", "what",
                       "why", "who", "huh", "idk", "hmm", "help", "help me", "anything",
                       "whatever", "nothing", "ok thanks", "later", "skip"})
NAME_PATTERN = re.compile(r"^(?:(?:hi|hey|hello)[,! ]+)?(?:i'?m|i am|it'?s|my name is|call me|"
                          r"this is|name'?s)?\s*([A-Za-z][\w'\-]*(?: [A-Za-z][\w'\-]*)?)[.!]*$",
                          re.IGNORECASE)


@dataclass
class Services:
    """What a turn needs from the outside world, built once from config."""

    config: Config
    model: ChatModel
    sonarr: object | None = None
    radarr: object | None = None
    clock: Callable[[], dt.datetime] = db.utcnow
    summarizer: Summarizer | None = None
    rules: HouseRules | None = None


class Engine:
    def __init__(self, services: Services):
        self.services = services
        self.config = services.config

    def handle(self, user_id: int, text: str, *, alone: bool = True,
               inbox_id: int | None = None) -> str:
        """Answer one incoming text (or a burst's texts joined, with ``alone=False``).

        ``inbox_id`` is the text's inbox row when it came by SMS: a lone Y/N answers a
        waiting removal only when sent after the question (``confirm.answers``).
        """
        now = self.services.clock()
        user = db.User.get_by_id(user_id)
        pending = confirm.active_pending(user.id, now)
        answer = parse_answer(text) if alone else None
        if pending and answer and confirm.answers(pending, inbox_id):
            return self._resolve(user, pending, answer, text)
        if answer and not pending and (lapsed := self._lapsed(user.id, now)):
            return self._exchange(user, text, lapsed)
        note = self._let_lapse(user.id, pending) if pending else ""
        keyword = classify_keyword(text)
        if keyword == "help":
            return note + HELP_TEXT + (ADMIN_HELP if self._approvals_on(user) else "")
        if keyword == "reset":
            return note + self._reset(user)
        decision = parse_decision(text) if self._approvals_on(user) else None
        if decision:
            rules = self.services.rules
            return note + self._exchange(user, text, rules.decide(
                user, *decision, now, self._run_approved, inbox_id=inbox_id))
        if not user.display_name:
            onboarding = self._onboard(user, text)
            if onboarding is not None:
                return note + onboarding
            return self._model_turn(user, text, note=note, save_user=False,
                                    inbox_id=inbox_id)
        return self._model_turn(user, text, note=note, inbox_id=inbox_id)

    # -- keywords, confirmations, approvals, onboarding -------------------------------

    def _approvals_on(self, user: db.User) -> bool:
        rules = self.services.rules
        return bool(rules) and rules.config.approval == "members" and user.role == "admin"

    def _run_approved(self, row: db.Approval) -> None:
        """An approved request's add, run as the member who asked (no rules this time)."""
        member = row.user
        context = self._context(member, rules=False)
        result = json.loads(run_tool(get_tool(row.tool), context, row.arguments))
        if "error" in result:
            raise ToolError(result["error"])

    def _reset(self, user: db.User) -> str:
        removed = forget_conversation(user.id)
        log.info("user %s reset their conversation (%d messages removed)", user.id, removed)
        return RESET_REPLY

    def _exchange(self, user: db.User, text: str, reply: str) -> str:
        """Store a user message and mediabot's own (not the model's) answer to it."""
        history.save_message(user.id, {"role": "user", "content": text})
        history.save_message(user.id, {"role": "assistant", "content": reply})
        return reply

    def drop_question(self, user_id: int) -> str:
        """A message with nothing to read (a picture) is not an answer either: let a waiting
        question lapse; the line that says so (and a newline), or "" when none waited."""
        pending = confirm.active_pending(user_id, self.services.clock())
        return self._let_lapse(user_id, pending) if pending else ""

    def _let_lapse(self, user_id: int, pending: db.PendingAction) -> str:
        """The text was not an answer: drop the question; the line (and newline) that says so.

        An empty string when the sweep or another turn already took it.
        """
        if not confirm.take_pending(pending):
            return ""
        log.info("user %s: the question about %s lapsed (not answered by the next text)",
                 user_id, pending.function_name)
        return confirm.lapse_notice(pending) + "\n"

    def _lapsed(self, user_id: int, now: dt.datetime) -> str | None:
        """A Y/N to an action that expired before the sweep removed it: say so, run nothing."""
        action = db.PendingAction.get_or_none(db.PendingAction.user == user_id)
        if action is None or not confirm.take_pending(action):
            return None
        log.info("user %s answered an expired confirmation", user_id)
        return confirm.expiry_notice(action) + " Ask again if you still want it."

    def _resolve(self, user: db.User, pending: db.PendingAction, answer: str, text: str) -> str:
        if not confirm.take_pending(pending):
            return self._exchange(user, text, "That request is no longer open, so nothing "
                                              "was changed.")
        if answer == "no":
            log.info("user %s cancelled %s", user.id, pending.function_name)
            return self._exchange(user, text, "OK, I kept it. Nothing was removed.")
        log.info("user %s confirmed %s", user.id, pending.function_name)
        return self._exchange(user, text, self._execute_confirmed(user, pending))

    def _execute_confirmed(self, user: db.User, pending: db.PendingAction) -> str:
        tool = get_tool(pending.function_name)
        allowed = {t.name for t in self._tools(user)}
        if tool is None or tool.name not in allowed:
            return "Sorry, you're not allowed to do that, so nothing was removed."
        result = json.loads(run_tool(tool, self._context(user), json.loads(pending.arguments)))
        if "error" in result:
            return f"Sorry, that didn't work: {result['error']}"
        return result.get("message") or "Done."

    def _onboard(self, user: db.User, text: str) -> str | None:
        """Ask a nameless user for a name once; take their answer as the name if it fits.

        Returns the question on first contact, or None to go on to the model (with the
        user's message already saved) once the answer has been read.
        """
        recent = history.get_history(user.id, self.config.history.fetch_limit)
        asked = any(m["role"] == "assistant" and m.get("content") == ONBOARDING_QUESTION
                    for m in recent)
        if not asked:
            return self._exchange(user, text, ONBOARDING_QUESTION)
        history.save_message(user.id, {"role": "user", "content": text})
        name = extract_name(text) if recent[-1].get("content") == ONBOARDING_QUESTION else None
        if name:
            db.User.update(display_name=name).where(db.User.id == user.id).execute()
            user.display_name = name
            log.info("user %s gave their name", user.id)
        return None

    # -- the model turn ------------------------------------------------------------------

    def _tools(self, user: db.User):
        return available_tools(user.role, sonarr=self.services.sonarr is not None,
                               radarr=self.services.radarr is not None)

    def _context(self, user: db.User, *, rules: bool = True) -> ToolContext:
        clock, house = self.services.clock, self.services.rules
        gate = None
        if rules and house is not None and house.applies_to(user):
            def gate(service, external_id, title, tool, arguments, seasons):
                return house.gate(user, service, external_id, title, tool, arguments,
                                  seasons, clock())
        return ToolContext(sonarr=self.services.sonarr, radarr=self.services.radarr,
                           user_id=user.id, role=user.role,
                           record_request=lambda service, ext_id, title, **how:
                               record_request(user.id, service, ext_id, title, clock(), **how),
                           clock=self._aware_clock, gate=gate,
                           searches=SearchLimit(self.config.requests.search_again_hours,
                                                clock, self.config.server.zone))

    def _aware_clock(self) -> dt.datetime:
        """The injected clock (naive UTC, as stored) in the household's zone, for the tools."""
        return as_local(self.services.clock(), self.config.server.zone)

    def _model_turn(self, user: db.User, text: str, *, note: str = "",
                    save_user: bool = True, inbox_id: int | None = None) -> str:
        """Run the model on the stored history; ``note`` (a lapsed question) leads the reply
        and is stored with it, so the model later knows what the person was told. A question
        the turn asks is the reply to ``inbox_id``."""
        started = time.monotonic()
        if save_user:
            history.save_message(user.id, {"role": "user", "content": text})
        turn = _Turn(self, user, dropped=note, inbox_id=inbox_id)
        try:
            result = self._loop(turn, text)
        except ModelError as exc:
            log.warning("turn user=%s model failed: %s", user.id, exc)
            if exc.refused and turn.minimal:
                return note + STUCK_REPLY
            return note + APOLOGIES.get(exc.reason, APOLOGY)
        if turn.confirmation:
            reply = turn.confirmation + (" " + ONE_AT_A_TIME_NOTE if turn.declined else "")
        elif result.hit_round_limit:
            reply = ROUND_LIMIT_REPLY
        else:
            reply = result.text.strip() or NO_ANSWER_REPLY
        reply = note + reply
        history.save_message(user.id, {"role": "assistant", "content": reply},
                             prompt_tokens=result.prompt_tokens)
        log.info("turn user=%s model_calls=%d tools=%s estimated_tokens=%d prompt_tokens=%s "
                 "evicted=%d duration_ms=%d", user.id, result.model_calls,
                 ",".join(result.tools_called) or "-", result.estimated_tokens,
                 result.prompt_tokens, result.evicted, (time.monotonic() - started) * 1000)
        return with_media(reply, self._posters(turn, reply, result.hit_round_limit))

    def _posters(self, turn: "_Turn", reply: str, gave_up: bool) -> list[str]:
        """The posters to send with the reply by MMS ([sms] posters), else none."""
        if not self.config.sms.posters or turn.confirmation or gave_up:
            return []
        context = turn.context
        return choose_posters([Offered(*hit) for hit in context.offered], context.added, reply)

    def _loop(self, turn: "_Turn", text: str):
        """The tool loop; when the server refuses the prompt (a chat template that raises, a
        body it cannot read) it runs once more from the smallest prompt, so a history the
        server cannot take never sticks to every later turn. Raises ModelError."""
        try:
            return self._run(turn)
        except ModelError as exc:
            if not exc.refused:
                raise
            log.warning("turn user=%s the model server refused the prompt (%s); trying the "
                        "smallest prompt", turn.user.id, exc)
            turn.shrink(text)
            return self._run(turn)

    def _run(self, turn: "_Turn"):
        return run_tool_loop(self.services.model, turn.build, turn.schemas, turn.execute,
                             turn.record, self.config.llm.max_tool_rounds)

    def _frame(self, user: db.User, dropped: str = "") -> tuple[dict, list[dict], int, str]:
        """What every prompt for this user is built around: (tools by name, their schemas,
        the schemas' estimated tokens, the system prompt)."""
        tools = {t.name: t for t in self._tools(user)}
        schemas = tool_schemas(list(tools.values()))
        reserved = history.estimate_tokens([{"role": "system", "content": json.dumps(schemas)}])
        services = self.services
        system = build_system_prompt(
            user.display_name, dropped=dropped or None,
            now=as_local(services.clock(), self.config.server.zone), tools=list(tools),
            missing=[name for name, client in (("Sonarr", services.sonarr),
                                               ("Radarr", services.radarr)) if client is None])
        waiting = services.rules.waiting_note() if self._approvals_on(user) else None
        if waiting:
            system += "\n\n" + waiting
        return tools, schemas, reserved, system

    def after_turn(self, user_id: int) -> None:
        """Work that must not delay the reply: the rolling summary, when turned on.

        The summary must cover what the turn's prompt evicts, so it is told the same system
        prompt and tool schemas the turn counted against the budget.
        """
        summarizer = self.services.summarizer   # set only when [history] summaries is on
        if summarizer is None:
            return
        user = db.User.get_by_id(user_id)
        _, _, reserved, system = self._frame(user)
        summarizer.update(user, system_prompt=system, reserved_tokens=reserved)


class _Turn:
    """The state of one model turn: its prompt inputs, tools and the confirmation it asked."""

    def __init__(self, engine: Engine, user: db.User, *, dropped: str = "",
                 inbox_id: int | None = None):
        self.engine, self.user, self.inbox_id = engine, user, inbox_id
        self.config = engine.config
        self.tools, self.schemas, self.reserved, self.system = engine._frame(user, dropped)
        self.history = history.get_history(user.id, self.config.history.fetch_limit)
        self.context = engine._context(user)
        self.confirmation: str | None = None
        self.declined = 0   # further destructive calls in the turn that asked one
        self.minimal = False

    def shrink(self, text: str) -> None:
        """From now on the prompt is only the system prompt, the newest user message and what
        this turn records after it: the smallest prompt a server should take."""
        self.history = [{"role": "user", "content": text}]
        self.minimal = True

    def build(self):
        h = self.config.history
        summary = self.user.summary if h.summaries and not self.minimal else None
        prompt = history.build_prompt(self.system, self.history, max_messages=h.max_messages,
                                      max_tokens=h.max_context_tokens, summary=summary,
                                      reserved_tokens=self.reserved)
        metrics = prompt.metrics
        return prompt.messages, {"estimated_tokens": metrics.estimated_tokens,
                                 "evicted": metrics.evicted}

    def record(self, message: dict, prompt_tokens: int | None) -> None:
        history.save_message(self.user.id, message, prompt_tokens=prompt_tokens)
        self.history.append(message)

    def execute(self, call: dict) -> ToolOutcome:
        name, raw = call["function"]["name"], call["function"].get("arguments")
        tool = self.tools.get(name)
        if tool is None:
            return ToolOutcome(json.dumps({"error": self._unavailable(name)}))
        if tool.tier != "destructive":
            return ToolOutcome(run_tool(tool, self.context, raw))
        if self.confirmation is not None:
            self.declined += 1
            return ToolOutcome(json.dumps({"error": ONE_AT_A_TIME}))
        return self._ask_confirmation(tool, raw)

    def _unavailable(self, name: str) -> str:
        """Why the model cannot use this tool: unknown, admins only, or a service not set up."""
        tool = get_tool(name)
        if tool is None:
            return f"there is no tool called {name or '(empty name)'}"
        if self.user.role not in tool.roles:
            return f"{name} is only for admins, and this person is not one"
        return f"{name} needs {' or '.join(s.title() for s in tool.services)}, which is not " \
               "set up on this server"

    def _ask_confirmation(self, tool, raw) -> ToolOutcome:
        try:
            arguments = parse_arguments(tool, raw)
            question = describe_action(tool, self.context, arguments)
        except ToolError as exc:
            return ToolOutcome(json.dumps({"error": str(exc)}))
        ttl = self.config.confirmation.ttl_seconds
        self.confirmation = confirm.confirmation_text(question, ttl)
        confirm.create_pending(self.user.id, tool.name, arguments, self.confirmation,
                               ttl_seconds=ttl, now=self.engine.services.clock(),
                               asked_in=self.inbox_id)
        return ToolOutcome(json.dumps({"status": "waiting for the user to reply Y or N",
                                       "asked": self.confirmation}), end_turn=True)


def extract_name(text: str) -> str | None:
    """'I'm Sam' / 'Sam' / 'call me Jo Ann' -> the name; anything longer is not a name."""
    match = NAME_PATTERN.match(text.strip())
    if not match:
        return None
    name = match.group(1).strip()
    if len(name) > 30 or name.lower() in NOT_NAMES or parse_answer(name):
        return None
    return " ".join(part[:1].upper() + part[1:] for part in name.split())

