"""``mediabot check``: is everything the daemon talks to reachable and set up right?

Each check returns ``Line``s: ``ok``, ``warn`` (works, but the operator should know) or
``FAIL`` with the fix written into the text. Checks never raise for a network or HTTP
problem; each one is bounded by the timeout of its own config section and makes no retries.
Every line of a check that talks to a server passes through ``masking.scrub`` before it is
shown, so an API key, the Twilio auth token or an ``apikey=`` query string can never reach
the terminal. The config and database lines show only our own paths, so they are left alone.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sqlite3
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from mediabot.config import Config, LLMConfig, TwilioConfig, webhook_url
from mediabot.ops.storage import owner_problem
from mediabot.store.db import Role
from mediabot.store.users import count_users_in, nobody_can_text
from mediabot.text.language import load as load_language
from mediabot.text.localtime import zone_label
from mediabot.text.masking import scrub
from mediabot.text.phones import home_regions
from mediabot.text.sms import accents_for

if TYPE_CHECKING:
    import openai

log = logging.getLogger(__name__)

OK, WARN, FAIL = "ok", "warn", "FAIL"
MODELS_SHOWN = 5
NOBODY_CAN_TEXT = ("nobody can text this mediabot: the config has no [[users]] and none were "
                   "added with `mediabot users add`")
ADD_AN_ADMIN = ("add yourself as an admin, e.g. [[users]] phone = \"+15551234567\" role = "
                "\"admin\" (or: mediabot users add +15551234567 --name NAME --role admin)")


@dataclass(frozen=True)
class Line:
    status: str      # OK, WARN or FAIL
    subject: str     # "sonarr", "llm", ...
    text: str

    def render(self) -> str:
        return f"{self.status:<4} {self.subject}: {self.text}"


def run_checks(config: Config) -> list[Line]:
    """Every check, in the order an operator fixes things: local first, then the network."""
    secrets = _secrets(config)
    local = [Line(OK, "config", f"{config.source} is valid "
                                f"({_count(len(config.users), 'user')} in [[users]]; times "
                                f"shown in {_zone_name(config)})")]
    local += check_placeholders(config)
    local += check_region(config)
    local.append(check_language(config))
    local += _safely("database", secrets, lambda: [check_database(config.database.path)])
    local += _safely("users", secrets, lambda: check_users(config))
    remote = _safely("server", secrets, lambda: check_server(config))
    for kind in ("sonarr", "radarr"):
        remote += _safely(kind, secrets, lambda kind=kind: check_arr(kind, config))
    remote += _safely("llm", secrets, lambda: check_model(config.llm))
    remote += _safely("twilio", secrets, lambda: [check_twilio_line(config)])
    remote += _safely("whatsapp", secrets, lambda: check_whatsapp(config))
    remote.append(check_household(config))
    return local + [dataclasses.replace(line, text=scrub(line.text, secrets))
                    for line in remote]


def check_household(config: Config) -> Line:
    """The household rules in force, in one line (warn when approvals have nobody to ask)."""
    rules, sms = config.requests, config.sms
    parts = [f"members' adds wait for an admin's APPROVE (expire after "
             f"{rules.approval_ttl_hours} h)" if rules.approval == "members"
             else "adds run at once (no approval)"]
    limits = [f"{n} {unit}{'s' if n != 1 else ''}" for n, unit in
              ((rules.movies_per_week, "movie"), (rules.seasons_per_week, "season")) if n]
    parts.append(f"at most {' and '.join(limits)} a week per member" if limits
                 else "no weekly quotas")
    parts.append(f"search again at most every {rules.search_again_hours} h per title")
    parts.append("posters sent by MMS" if sms.posters else "no posters")
    if rules.approval == "members" and not any(u.role == Role.ADMIN for u in config.users):
        return Line(WARN, "requests", "; ".join(parts) + ". No admin in [[users]] to approve: "
                    "fix: add one with role = \"admin\" (or `mediabot users add`)")
    return Line(OK, "requests", "; ".join(parts))


def _safely(subject: str, secrets: list[str], check) -> list[Line]:
    """Run one check; a bug or a library surprise becomes a FAIL line, not a traceback.

    The traceback goes to the DEBUG log (``mediabot -v check``), with secrets blanked.
    """
    try:
        return check()
    except Exception as exc:  # noqa: BLE001 - one broken check must not hide the others
        log.debug("%s check crashed:\n%s", subject,
                  scrub("".join(traceback.format_exception(exc)), secrets))
        return [Line(FAIL, subject, f"the check itself failed ({type(exc).__name__}); run "
                                    "`mediabot -v check` for details")]


def _zone_name(config: Config) -> str:
    name = zone_label(config.server.zone)
    return name if config.server.timezone else f"{name}, this machine's zone"


def _secrets(config: Config) -> list[str]:
    found = [config.llm.api_key, config.twilio.auth_token, config.notifications.webhook_secret]
    found += [arr.api_key for arr in (config.sonarr, config.radarr) if arr is not None]
    return found


# ------------------------------------------------------------------ local checks

# Values config.example.toml ships with (tests keep the two in step): left as they are, they
# pass every syntax check yet reach nobody.
EXAMPLE_PUBLIC_URL = "https://sms.example.com"
EXAMPLE_ACCOUNT_SID = "AC" + "x" * 32
EXAMPLE_FROM_NUMBER = "+15550001111"
EXAMPLE_USER = ("+15551234567", "Alex")


def check_region(config: Config) -> list[Line]:
    """A warn when the Twilio number is from another country than [sms] default_region,
    the region numbers written without +country are read in (it defaults to "US")."""
    regions = home_regions(config.twilio.from_number) if config.twilio.from_number else ()
    region = config.sms.default_region.upper()
    if not regions or region in regions:
        return []
    return [Line(WARN, "sms", f"your Twilio number {config.twilio.from_number} is from "
                              f"{regions[0]}, but numbers written without + and a country code "
                              f"(in [[users]], users add, chat --as) are read as {region} "
                              f"numbers — set [sms] default_region = \"{regions[0]}\" if that "
                              "is where the household is")]


def check_language(config: Config) -> Line:
    """The language of mediabot's own texts: the household's, the [[users]] entries that
    speak another, and what SMS do with accents (the config already refused a language
    with no catalog)."""
    sms, choice = config.sms, accents_for(config.sms)
    parts = [f"texts in {_language_name(sms.language)}"]
    for user in config.users:
        if user.language and user.language != sms.language:
            own = accents_for(sms, user.language)
            parts.append(f"{user.name or user.phone} in {_language_name(user.language)}"
                         + (f", accents {ACCENT_WORDS[own]}" if own != choice else ""))
    how = (f"accents {ACCENT_WORDS[choice]} on SMS ("
           + ("UCS-2, 70 characters a segment" if choice == "keep"
              else "á -> a, 160 characters a segment"))
    source = "[sms] accents" if sms.accents else "the language's default; see [sms] accents"
    return Line(OK, "language", f"{'; '.join(parts)}; {how}; {source})")


ACCENT_WORDS = {"keep": "kept", "fold": "folded"}


def _language_name(tag: str) -> str:
    """"Spanish (es)", "Portuguese (Brazil, pt-BR)"."""
    name = load_language(tag).english_name
    return f"{name[:-1]}, {tag})" if name.endswith(")") else f"{name} ({tag})"


def check_placeholders(config: Config) -> list[Line]:
    """A FAIL (or for the example person, a warn) for each value still equal to the example's."""
    lines = []
    if config.server.public_url.rstrip("/") == EXAMPLE_PUBLIC_URL:
        lines.append(Line(FAIL, "config", f"[server] public_url is still the example's "
                                          f"{EXAMPLE_PUBLIC_URL}, which Twilio cannot reach "
                                          "you at — set it to your own https address"))
    if config.twilio.account_sid == EXAMPLE_ACCOUNT_SID:
        lines.append(Line(FAIL, "config", "[twilio] account_sid is still the example's "
                                          "ACxxx... — copy your Account SID from the Twilio "
                                          "console (Account info)"))
    if config.twilio.from_number == EXAMPLE_FROM_NUMBER:
        lines.append(Line(FAIL, "config", f"[twilio] from_number is still the example's "
                                          f"{EXAMPLE_FROM_NUMBER} — set it to your Twilio "
                                          "number"))
    for user in config.users:
        if (user.phone, user.name) == EXAMPLE_USER:
            lines.append(Line(WARN, "config", f"[[users]] still holds the example's "
                                              f"{user.name} ({user.phone}) as {user.role} — "
                                              "replace it with a real person's phone and name"))
    return lines


def check_users(config: Config) -> list[Line]:
    """A warn exactly when ``serve`` would refuse to start: nobody can text (the one
    predicate both ask, on the database as it stands). Nothing when someone can, or when
    the database cannot be read (the database line says why)."""
    stored = count_users_in(config.database.path)
    if stored is None or not nobody_can_text(config.users, stored):
        return []
    return [Line(WARN, "users", f"{NOBODY_CAN_TEXT}, so `mediabot serve` will not start — "
                                f"fix: {ADD_AN_ADMIN}")]


def check_database(path: str) -> Line:
    """Can this process write the SQLite file (or create it)?

    An existing file is opened and a table is created inside a transaction that is rolled
    back, so nothing changes. WAL mode also writes ``-wal``/``-shm`` files beside it, so the
    directory must be writable too.
    """
    if path == ":memory:":
        return Line(WARN, "database", "path is :memory:; nothing is kept across restarts — "
                                      "set [database] path to a file")
    file = Path(path)
    folder = file.parent if str(file.parent) else Path(".")
    if not folder.is_dir():
        return Line(FAIL, "database", f"directory {folder} does not exist — create it or "
                                      "fix [database] path")
    if not os.access(folder, os.W_OK | os.X_OK):
        return Line(FAIL, "database", f"directory {folder} is not writable by this user — "
                                      f"fix its owner/permissions or [database] path")
    if not file.exists():
        return Line(OK, "database", f"{file} will be created on first start ({folder} is "
                                    "writable)")
    problem = owner_problem(path)
    if problem:
        return Line(FAIL, "database", problem)
    problem = _write_and_roll_back(file)
    if problem:
        return Line(FAIL, "database", f"{file} is not writable ({problem}) — fix its "
                                      "owner/permissions or [database] path")
    return Line(OK, "database", f"{file} is writable")


def _write_and_roll_back(file: Path) -> str | None:
    """None when a write succeeds; otherwise SQLite's reason."""
    try:
        connection = sqlite3.connect(file, timeout=5, isolation_level=None)
    except sqlite3.Error as exc:
        return str(exc)
    try:
        connection.execute("BEGIN IMMEDIATE")
        connection.execute("CREATE TABLE mediabot_check_probe (x)")
        connection.execute("ROLLBACK")
    except sqlite3.Error as exc:
        return str(exc)
    finally:
        connection.close()
    return None


def check_server(config: Config) -> list[Line]:
    """public_url must be https for Twilio; the hooks need a webhook secret to work at all."""
    url = config.server.public_url
    if urlparse(url).scheme == "https":
        lines = [Line(OK, "server", f"Twilio should post to {webhook_url(url)}")]
    else:
        lines = [Line(WARN, "server", f"public_url is http; Twilio needs https — serve "
                                      f"{url} through an https proxy and set [server] "
                                      "public_url to its https address")]
    arrs = config.sonarr is not None or config.radarr is not None
    if not _latin1(config.notifications.webhook_secret):
        lines.append(Line(WARN, "notifications", "webhook_secret has a character Sonarr/Radarr "
                                                 "cannot send (they encode the password as "
                                                 "ISO-8859-1), so their calls get 401 — use "
                                                 "letters, digits and punctuation in "
                                                 "[notifications] webhook_secret"))
    if arrs and not config.notifications.webhook_secret:
        lines.append(Line(WARN, "notifications", "webhook_secret is empty, so /hooks/sonarr and "
                                                 "/hooks/radarr refuse every call and nobody "
                                                 "hears when downloads finish — set "
                                                 "[notifications] webhook_secret"))
    return lines


def _latin1(text: str) -> bool:
    try:
        text.encode("iso-8859-1")
    except UnicodeEncodeError:
        return False
    return True


# ------------------------------------------------------------------ Sonarr / Radarr

def check_arr(kind: str, config: Config) -> list[Line]:
    """ArrClient.check's lines (reachable, key, root folder, profile), or why it is off."""
    from mediabot.arr.tools import ArrClient

    arr = getattr(config, kind)
    if arr is None:
        tools = "series" if kind == "sonarr" else "movie"
        return [Line(WARN, kind, f"no [{kind}] section, so the {tools} tools are off — add "
                                 f"[{kind}] url and api_key to turn them on")]
    return [Line(OK if ok else FAIL, kind, text) for ok, text in ArrClient(kind, arr).check()]


# ------------------------------------------------------------------ the model

PROBE_TOOL = {"type": "function", "function": {
    "name": "download_queue", "description": "What is downloading now.",
    "parameters": {"type": "object", "properties": {}}}}
PROBE_MESSAGES = [{"role": "user", "content": "What is downloading? Call download_queue."}]
NO_TOOL_CALLS_FIX = ("the usual cause is the server's chat template, which drops the tool "
                     "schemas (the model never sees them; mediabot's prompt budget stops "
                     "counting them once the server's token counts show it): "
                     "llama.cpp: start llama-server with --jinja and --chat-template-file "
                     "<a template that renders tools, e.g. the model's own from its "
                     "Hugging Face repo>; llama-cpp-python: --chat_format "
                     "chatml-function-calling; vLLM: --enable-auto-tool-choice "
                     "--tool-call-parser; Ollama: a model whose Modelfile TEMPLATE handles "
                     ".Tools (one tagged 'tools')")


def check_model(config: LLMConfig) -> list[Line]:
    """The model line, then (when the model answers) whether it calls tools and how fast."""
    line = check_llm(config)
    if line.status == FAIL:
        return [line]
    return [line, check_tool_calls(config), check_speed(config)]


def check_speed(config: LLMConfig) -> Line:
    """Would a typical text (``speed.TYPICAL_PROMPT`` + ``TYPICAL_REPLY`` tokens) finish within
    ``[llm] timeout_seconds``? One timed request; a warning, with the key and the fix, when
    not (every such text would end in an apology instead of an answer)."""
    import openai

    from mediabot.ops import speed

    typical = (f"a typical text ({speed.TYPICAL_PROMPT:,} prompt tokens + "
               f"{speed.TYPICAL_REPLY} reply tokens)")
    timeout = config.timeout_seconds
    try:
        measured = speed.measure(config)
    except openai.OpenAIError as exc:
        return Line(WARN, "speed", f"could not time the model ({type(exc).__name__}): "
                                   f"{typical} may not finish within [llm] timeout_seconds = "
                                   f"{timeout:g}")
    rates = f"reads ~{measured.prompt_per_second:,.0f} prompt tokens/s, " + (
        f"writes ~{measured.reply_per_second:,.1f} reply tokens/s" if measured.reply_per_second
        else "reply speed not reported (llama.cpp's timings give it)")
    seconds = measured.typical_seconds()
    if seconds <= timeout:
        return Line(OK, "speed", f"{rates}; {typical} takes ~{seconds:,.1f} s, within [llm] "
                                 f"timeout_seconds = {timeout:g}")
    return Line(WARN, "speed", f"{rates}; {typical} would take ~{seconds:,.0f} s, over [llm] "
                               f"timeout_seconds = {timeout:g} — raise [llm] timeout_seconds "
                               f"to at least {seconds * 1.5:,.0f}, or use a smaller or faster "
                               "model (a GPU), and keep the server's prompt cache on so most "
                               "texts read only what is new")


def check_tool_calls(config: LLMConfig) -> Line:
    """One tiny tool-call probe, sent the way a turn sends tools (``tool_choice`` auto).

    A server can answer chat requests and still never return a tool call (llama-server
    without ``--jinja``, a model without tool support): mediabot would then talk but never
    search or add anything, so say so with the fix. A warning, not a failure: the probe
    asks once, and a model may answer in words this time.
    """
    from mediabot.conversation.llm import ChatModel, ModelError, build_client

    model = ChatModel(build_client(dataclasses.replace(config, max_retries=0)), config)
    try:
        message = model.complete(PROBE_MESSAGES, [PROBE_TOOL], max_tokens=64).message
    except ModelError as exc:
        return Line(WARN, "tools", f"the model server refused a request with tools ({exc}) "
                                   f"— {NO_TOOL_CALLS_FIX}")
    if message.get("tool_calls"):
        return Line(OK, "tools", "the model called a tool when asked (tool_choice auto)")
    return Line(WARN, "tools", "asked to call a tool, the model answered without one, so it may "
                               f"never search or add anything — {NO_TOOL_CALLS_FIX}")


def check_llm(config: LLMConfig) -> Line:
    """The endpoint answers, accepts the key and serves ``model``.

    Lists ``GET /models`` first (free, no tokens); servers that do not list models (404,
    405, 501) get a one-token completion instead.
    """
    import openai

    from mediabot.conversation.llm import build_client

    client = build_client(dataclasses.replace(config, max_retries=0))
    try:
        available = [model.id for model in client.models.list()]
    except openai.APIStatusError as exc:
        if exc.status_code in (401, 403):
            return _llm_failure(config, exc)
        available = []
    except openai.OpenAIError as exc:
        return _llm_failure(config, exc)
    if not available:
        return _llm_by_completion(client, config)
    if config.model in available:
        return Line(OK, "llm", f"model {config.model} is served at {config.base_url}")
    if _completion_error(client, config) is None:   # llama-server lists its file path and
                                                    # serves any name
        return Line(OK, "llm", f"model {config.model} answered at {config.base_url} (the "
                               f"server lists {available[0]!r} and answers to any name)")
    return _model_missing(config, available)


def _completion_error(client: openai.OpenAI, config: LLMConfig) -> openai.OpenAIError | None:
    """What a one-token completion with ``model`` failed with; None when it answered."""
    import openai

    try:
        client.chat.completions.create(model=config.model, max_tokens=1,
                                       messages=[{"role": "user", "content": "Say OK."}])
    except openai.OpenAIError as exc:
        return exc
    return None


def _llm_by_completion(client: openai.OpenAI, config: LLMConfig) -> Line:
    error = _completion_error(client, config)
    if error is not None:
        return _llm_failure(config, error)
    return Line(OK, "llm", f"model {config.model} answered at {config.base_url} (the server "
                           "does not list its models)")


def _model_missing(config: LLMConfig, available: list[str]) -> Line:
    shown = ", ".join(sorted(available)[:MODELS_SHOWN])
    more = len(available) - MODELS_SHOWN
    if more > 0:
        shown += f" and {more} more"
    return Line(FAIL, "llm", f"model {config.model!r} is not on the server at "
                             f"{config.base_url}; it has {shown} — fix [llm] model")


def _llm_failure(config: LLMConfig, exc: openai.OpenAIError) -> Line:
    """One line with the fix for each way the model server can fail."""
    import openai

    from mediabot.conversation.llm import api_error_message

    where = config.base_url
    if isinstance(exc, openai.APITimeoutError):
        text = (f"no answer within {config.timeout_seconds:g} s from {where} — is it running? "
                "check [llm] base_url or raise [llm] timeout_seconds")
    elif isinstance(exc, openai.APIConnectionError):
        text = f"not answering at {where} — is it running? check [llm] base_url"
    elif isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        text = (f"the model server rejected [llm] api_key (HTTP {exc.status_code}) — set it, or "
                "MEDIABOT_LLM_API_KEY, to a valid key")
    elif isinstance(exc, openai.NotFoundError):
        text = (f"model {config.model!r} was not found at {where} (or base_url is wrong; it "
                "usually ends in /v1) — fix [llm] model or [llm] base_url")
    elif isinstance(exc, openai.APIStatusError):
        text = (f"{where} answered HTTP {exc.status_code}: {api_error_message(exc, 160)} — "
                "check [llm] base_url and model")
    else:
        text = f"{type(exc).__name__} talking to {where} — check [llm] base_url"
    return Line(FAIL, "llm", text)


# ------------------------------------------------------------------ Twilio

def check_twilio_line(config: Config) -> Line:
    """``sender.check_twilio`` (credentials, from_number owned) as a Line."""
    from mediabot.mailbox.twilio_client import build_twilio_client, check_twilio

    ok, text = check_twilio(build_twilio_client(config.twilio), config.twilio)
    text = text.removeprefix("twilio: ")
    if ok:
        return Line(OK, "twilio", "credentials accepted " + text.removeprefix("ok ").strip())
    if text.startswith("network:"):
        host = config.twilio.api_base_url or "https://api.twilio.com"
        text += f" — can this host reach {host}? check [twilio] api_base_url and the network"
    return Line(FAIL, "twilio", text)


def check_whatsapp(config: Config) -> list[Line]:
    """The WhatsApp sender (looked up at Twilio) and what happens outside the 24-hour
    window; nothing when ``[twilio] whatsapp_from`` is not set."""
    from mediabot.mailbox.twilio_client import build_twilio_client
    from mediabot.mailbox.whatsapp_sender import check_whatsapp_sender

    if not config.twilio.whatsapp_from:
        return []
    ok, text = check_whatsapp_sender(build_twilio_client(config.twilio), config.twilio)
    return [Line(OK if ok else FAIL, "whatsapp", text), whatsapp_window_line(config.twilio)]


def whatsapp_window_line(twilio: TwilioConfig) -> Line:
    """How a notice and an approval request go outside WhatsApp's 24-hour window; a warn
    when one of them can only wait (no template for it and no SMS to fall back on)."""
    from mediabot.mailbox import channels

    mode, sms = twilio.whatsapp_outside_window, channels.sms_sender(twilio)
    if mode == "wait":
        return Line(OK, "whatsapp", "outside the 24-hour window, notices and approval requests "
                                    "wait for the person's next WhatsApp message "
                                    "(whatsapp_outside_window = \"wait\"; dropped after 7 days)")
    ways = {kind: (f"go as template {channels.template_for(kind, twilio)}"
                   if mode == "template" and channels.template_for(kind, twilio)
                   else f"go by SMS from {sms}" if sms else "") for kind in ("ready", "approval")}
    said = "; ".join(f"{name} {ways[kind] or 'wait for the next WhatsApp message'}" for
                     kind, name in (("ready", "download notices"),
                                    ("approval", "approval requests")))
    stuck = [key for kind, key in (("ready", "whatsapp_ready_template"),
                                   ("approval", "whatsapp_approval_template")) if not ways[kind]]
    if stuck:
        return Line(WARN, "whatsapp", f"outside the 24-hour window, {said} — set [twilio] "
                                      f"{' and '.join(stuck)} (an approved HX... Content SID) "
                                      "or an SMS from_number to send them")
    return Line(OK, "whatsapp", f"outside the 24-hour window, {said}")


def summary(lines: list[Line]) -> str:
    """The last line: how many failed, or that all passed."""
    failed = sum(line.status == FAIL for line in lines)
    warnings = _count(sum(line.status == WARN for line in lines), "warning")
    if failed:
        return (f"{_count(failed, 'check')} failed, {warnings}; fix the FAIL lines and run "
                "mediabot check again")
    return f"all checks passed ({warnings})"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")
