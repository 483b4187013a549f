"""The model turn: the tool loop on the stored history, the reply and its posters.

``run_model_turn`` runs the model on the user's stored history (their message is already
stored by the caller) and returns the reply with the ``Frame`` it built: the system prompt,
the tools and their schemas (``services.build_frame``). The caller hands that frame to the
rolling summary, which must count the same prompt the turn counted, so it is built once per
turn.

How it fails: a model call that fails becomes a fixed apology (never an exception); a
server that refuses the prompt gets one more try from the smallest prompt (``STUCK_REPLY``
when even that is refused). A destructive tool is never run here: it becomes a question
waiting for the person's Y (``confirmations``), one at a time.
"""

import json
import logging
import time
from typing import Any

from mediabot.arr.tools import (
    Tool,
    ToolError,
    current_name,
    describe_action,
    direct_answer,
    get_tool,
    parse_arguments,
    run_tool,
)
from mediabot.arr.tools.base import Tier
from mediabot.config import Config
from mediabot.conversation import confirmations as confirm
from mediabot.conversation import history
from mediabot.conversation.posters import Offered, choose_posters
from mediabot.conversation.prompt.build import Prompt, build_prompt
from mediabot.conversation.reply import Reply
from mediabot.conversation.services import Frame, Services, build_frame, tool_context
from mediabot.model import calibration
from mediabot.model.chat import LoopResult, ModelError, ToolOutcome, run_tool_loop
from mediabot.store.people import Person
from mediabot.text.language import SOURCE, Language, load

log = logging.getLogger(__name__)

ONE_AT_A_TIME = ("not asked: only one removal can wait for a Y at a time, and another is "
                 "waiting; nothing was removed")


def no_answer_reply(lang: Language) -> str:
    """When the model said nothing."""
    return lang.gettext("Sorry, I have no answer to that. Could you rephrase it?")


def round_limit_reply(lang: Language) -> str:
    return lang.gettext("Sorry, I couldn't finish that. Could you try rephrasing it?")


def apologies(lang: Language) -> dict[str, str]:
    """The apology for each way the model can fail (``ModelError.reason``)."""
    return {
        "timeout": lang.gettext(
            "Sorry, I'm answering too slowly right now. Please try again in a minute."),
        "unreachable": lang.gettext(
            "Sorry, I can't reach my language model right now. Please try again later."),
        "misconfigured": lang.gettext(
            "Sorry, my language model isn't set up right. Please tell whoever runs this "
            "number."),
    }


def stuck_reply(lang: Language) -> str:
    """When the model server refuses even the smallest prompt (system prompt and this
    message): only a RESET helps."""
    return lang.gettext("Sorry, my language model can't take our conversation right now. "
                        "Text RESET to start over, then ask again.")


def one_at_a_time_note(lang: Language) -> str:
    return lang.gettext("(I remove one thing at a time: ask me again for the rest after "
                        "this.)")


def apology(lang: Language) -> str:
    return lang.gettext("Sorry, something went wrong on my side. Please try again in a "
                        "moment.")


# The English texts, as tests, the trial tasks and the docs quote them.
NO_ANSWER_REPLY = no_answer_reply(load(SOURCE))
ROUND_LIMIT_REPLY = round_limit_reply(load(SOURCE))
APOLOGIES = apologies(load(SOURCE))
STUCK_REPLY = stuck_reply(load(SOURCE))
ONE_AT_A_TIME_NOTE = one_at_a_time_note(load(SOURCE))
APOLOGY = apology(load(SOURCE))


def run_model_turn(services: Services, user: Person, text: str, *, note: str = "",
                   inbox_id: int | None = None) -> tuple[Reply, Frame]:
    """Run the model on the stored history; ``note`` (a lapsed question) leads the reply
    and is stored with it, so the model later knows what the person was told. A question
    the turn asks is the reply to ``inbox_id``. Returns the reply and the turn's frame."""
    started = time.monotonic()
    turn = ModelTurn(services, user, build_frame(services, user, note), inbox_id)
    turn.budget, turn.text = turn.budget - len(note), text
    try:
        result = _loop(services, turn, text)
    except ModelError as exc:
        log.warning("turn user=%s model failed: %s", user.id, exc)
        lang = turn.context.language
        if exc.refused and turn.minimal:
            return Reply(note + stuck_reply(lang)), turn.frame
        return Reply(note + apologies(lang).get(exc.reason, apology(lang))), turn.frame
    reply = note + _reply_text(turn, result)
    history.save_message(user.id, {"role": "assistant", "content": reply},
                         prompt_tokens=result.prompt_tokens)
    calibration.observe(services.config.llm.model, result.estimated_tokens,
                        result.prompt_tokens, services.clock())
    log.info("turn user=%s model_calls=%d tools=%s answered_by=%s estimated_tokens=%d "
             "prompt_tokens=%s cached_tokens=%s evicted=%d duration_ms=%d", user.id,
             result.model_calls, ",".join(result.tools_called) or "-",
             result.answered_by or "model", result.estimated_tokens,
             result.prompt_tokens, result.cached_tokens, result.evicted,
             (time.monotonic() - started) * 1000)
    posters = _posters(services.config, turn, reply, result.hit_round_limit)
    return Reply(reply, tuple(posters)), turn.frame


def _reply_text(turn: "ModelTurn", result: LoopResult) -> str:
    lang = turn.context.language
    if turn.confirmation:
        return turn.confirmation + (" " + one_at_a_time_note(lang) if turn.declined else "")
    if result.hit_round_limit:
        return round_limit_reply(lang)
    return (result.text or "").strip() or no_answer_reply(lang)


def _posters(config: Config, turn: "ModelTurn", reply: str, gave_up: bool) -> list[str]:
    """The posters to send with the reply by MMS ([sms] posters), else none."""
    if not config.sms.posters or turn.confirmation or gave_up:
        return []
    return choose_posters([Offered(*hit) for hit in turn.offered], turn.added, reply)


def _loop(services: Services, turn: "ModelTurn", text: str) -> LoopResult:
    """The tool loop; when the server refuses the prompt (a chat template that raises, a
    body it cannot read) it runs once more from the smallest prompt, so a history the
    server cannot take never sticks to every later turn. Raises ModelError."""
    def run() -> LoopResult:
        return run_tool_loop(services.model, turn.build, turn.frame.schemas, turn.execute,
                             turn.record, services.config.llm.max_tool_rounds,
                             person=turn.place)
    try:
        return run()
    except ModelError as exc:
        if not exc.refused:
            raise
        log.warning("turn user=%s the model server refused the prompt (%s); trying the "
                    "smallest prompt", turn.user.id, exc)
        turn.shrink(text)
        return run()


def turn_prompt(config: Config, user: Person, frame: Frame, rows: list[dict],
                earlier: list[str] | None, ratio: float, *, minimal: bool = False) -> Prompt:
    """The prompt of ``user``'s turn on ``rows`` (their history, what the turn recorded, or
    a stand-in for a text to come), as every request of a turn and a read-ahead build it.
    ``ratio``: the server's tokens per estimated one (``calibration``)."""
    h = config.history
    summary = user.summary if h.summaries and not minimal else None
    # The smallest prompt (a server refused the full one) is one system message and the
    # text: the person's part joins the system text there.
    system, person = frame.system, frame.person
    if minimal and person:
        system, person = f"{system}\n\n{person}", ""
    return build_prompt(system, rows, max_messages=h.max_messages,
                        max_tokens=calibration.estimate_budget(h.max_context_tokens, ratio),
                        prompt_tokens=calibration.estimate_budget(h.max_prompt_tokens, ratio),
                        summary=summary, reserved_tokens=frame.reserved, zone=frame.zone,
                        earlier_tools=earlier, tool_order=list(frame.tools),
                        turn_note=frame.note, person=person,
                        summary_through=user.summary_through)


class ModelTurn:
    """The state of one model turn: its prompt inputs, tools and the confirmation it asked."""

    def __init__(self, services: Services, user: Person, frame: Frame,
                 inbox_id: int | None = None) -> None:
        self.services, self.user, self.frame, self.inbox_id = services, user, frame, inbox_id
        self.config = services.config
        self.history = history.recent_history(user.id, self.config.history.fetch_limit)
        # the tools of the stored messages older than those
        self.earlier: list[str] | None = history.tools_before(user.id, self.history)
        self.context = tool_context(services, user)
        self.place = user.place   # its slot on llama-server
        self.ratio = calibration.ratio_for(self.config.llm.model)   # server tokens/estimated
        # what the turn's tools showed, for posters
        self.offered: list[tuple[str, int | None, str | None]] = []
        self.added: list[str] = []
        self.confirmation: str | None = None
        self.declined = 0   # further destructive calls in the turn that asked one
        self.minimal = False
        self.budget = self.config.sms.max_reply_chars   # for a tool's own answer
        self.text = ""   # what the person asked, which a tool's own answer must answer

    def shrink(self, text: str) -> None:
        """From now on the prompt is only the system prompt, the newest user message and what
        this turn records after it: the smallest prompt a server should take. The stored
        message keeps its time stamp."""
        stored = [m for m in self.history if m["role"] == "user"][-1:]
        self.history = stored if stored and stored[0]["content"] == text else [
            {"role": "user", "content": text}]
        self.earlier, self.minimal = None, True

    def build(self) -> tuple[list[dict], dict]:
        prompt = turn_prompt(self.config, self.user, self.frame, self.history, self.earlier,
                             self.ratio, minimal=self.minimal)
        metrics = prompt.metrics
        return prompt.messages, {"estimated_tokens": metrics.estimated_tokens,
                                 "evicted": metrics.evicted}

    def record(self, message: dict, prompt_tokens: int | None) -> None:
        row = history.save_message(self.user.id, message, prompt_tokens=prompt_tokens)
        self.history.append({**message, "_id": row})   # its prompt ids stay as they were

    def execute(self, call: dict) -> ToolOutcome:
        name, raw = call["function"]["name"], call["function"].get("arguments")
        tool = self.frame.tools.get(current_name(name))
        if tool is None or self.user.role not in tool.roles:
            return ToolOutcome(json.dumps({"error": self._unavailable(name)}))
        if tool.tier != Tier.DESTRUCTIVE:
            result = run_tool(tool, self.context, raw)
            self.offered += result.offered
            self.added += result.added
            return ToolOutcome(result.for_model(), reply=direct_answer(
                tool, self.context, raw, result, self.budget, self.text))
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

    def _ask_confirmation(self, tool: Tool, raw: Any) -> ToolOutcome:
        try:
            arguments = parse_arguments(tool, raw)
            question = describe_action(tool, self.context, arguments)
        except ToolError as exc:
            return ToolOutcome(json.dumps({"error": str(exc)}))
        ttl = self.config.confirmation.ttl_seconds
        self.confirmation = confirm.confirmation_text(question, ttl, self.context.language)
        confirm.create_pending(self.user.id, tool.name, arguments, self.confirmation,
                               ttl_seconds=ttl, now=self.services.clock(),
                               asked_in=self.inbox_id)
        return ToolOutcome(json.dumps({"status": "waiting for the user to reply Y or N",
                                       "asked": self.confirmation}), end_turn=True)
