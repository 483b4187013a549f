"""Real chat templates, rendered the way open-model servers render a chat request.

Open-model servers (vLLM, llama.cpp, llama-cpp-python, Ollama, LM Studio) turn ``messages``
into a prompt through the model's own Jinja chat template, and answer HTTP 400 when the
template raises. ``render`` does what transformers' ``apply_chat_template`` does (which vLLM
calls): an ``ImmutableSandboxedEnvironment`` with ``trim_blocks``, ``lstrip_blocks`` and the
``loopcontrols`` extension; a ``raise_exception`` global; a ``tojson`` filter that is
``json.dumps`` without HTML escaping; ``strftime_now``; and the variables ``messages``,
``tools``, ``add_generation_prompt``, ``bos_token`` and ``eos_token``.

Messages reach the template in one of two ways (``mode``):

- ``"vllm"``: as vLLM's ``parse_chat_messages`` hands them on: content ``None`` becomes ``""``;
  only role, content, ``tool_calls`` (assistant), ``tool_call_id`` (tool) and a string
  ``name`` are kept; and every tool call's ``arguments`` JSON string is parsed into a dict
  (empty, null, invalid or non-object arguments become ``{}``), because templates expect one.
- ``"passthrough"``: exactly as sent, as llama-cpp-python's Jinja formatter does; a
  ``content: null`` there reaches the template as ``None``.

The templates live in ``tests/templates`` (SOURCES.md names each one's origin and licence);
``TEMPLATES`` below says what each needs: its special tokens, and whether it knows tools at
all (Gemma 3 and Phi-3.5 do not: their tool turns go through a server-side tool format).
"""

import copy
import datetime as dt
import functools
import json
from dataclasses import dataclass
from pathlib import Path

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

TEMPLATE_DIR = Path(__file__).resolve().parent.parent / "templates"
MODES = ("vllm", "passthrough")


@dataclass(frozen=True)
class ChatTemplate:
    """One vendored template: its file, special tokens, and what it is known to do.

    ``tools``: False when the template has no tool-call or tool-result rendering at all.
    ``system_needs_final_user``: the template writes the system prompt only into the last
    message, and only when that is a user message (Mistral's v3 templates): a prompt that
    ends with a tool result, as every second call of a tool round does, loses it there,
    whatever the client sends.
    ``object_arguments``: the template reads tool-call arguments as a mapping (Qwen3.5's
    ``|items`` raises on a string; vLLM's gemma3_pythonic writes a string one character at
    a time), so only a server that parses the API's JSON string first (vLLM, llama.cpp's own
    server, Ollama) can render it; one that passes messages through unchanged cannot.
    ``drops_calls``: why the template never writes an assistant's tool calls, if it does not.
    ``tool_use``: the model's named ``tool_use`` template, which transformers, vLLM and
    llama.cpp pick only when a request offers tools (its ``default`` one serves the rest).
    """

    name: str
    file: str
    bos: str = "<s>"
    eos: str = "</s>"
    tools: bool = True
    system_needs_final_user: bool = False
    object_arguments: bool = False
    drops_calls: str = ""
    tool_use: bool = False


_LLAMA3 = {"bos": "<|begin_of_text|>", "eos": "<|eot_id|>"}
_CHATML = {"bos": "", "eos": "<|im_end|>"}

TEMPLATES = {t.name: t for t in (
    ChatTemplate("mistral-nemo", "mistralai-Mistral-Nemo-Instruct-2407.jinja",
                 system_needs_final_user=True),
    ChatTemplate("mistral-small-3.2", "Mistral-Small-3.2-24B-Instruct-2506.jinja"),
    ChatTemplate("devstral-small", "unsloth-mistral-Devstral-Small-2507.jinja"),
    ChatTemplate("vllm-mistral-parallel", "vllm-tool_chat_template_mistral_parallel.jinja",
                 system_needs_final_user=True),
    ChatTemplate("llama-3.1", "meta-llama-Llama-3.1-8B-Instruct.jinja", **_LLAMA3),
    ChatTemplate("llama-3.2", "meta-llama-Llama-3.2-3B-Instruct.jinja", **_LLAMA3),
    ChatTemplate("llama-3.3", "meta-llama-Llama-3.3-70B-Instruct.jinja", **_LLAMA3),
    ChatTemplate("vllm-hermes", "vllm-tool_chat_template_hermes.jinja", **_CHATML),
    ChatTemplate("hermes-3-llama-3.1", "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja",
                 tool_use=True, **_LLAMA3),
    ChatTemplate("qwen2.5", "Qwen-Qwen2.5-7B-Instruct.jinja", **_CHATML),
    ChatTemplate("qwen3", "Qwen-Qwen3-0.6B.jinja", **_CHATML),
    ChatTemplate("qwen3.5", "Qwen3.5-4B.jinja", object_arguments=True, **_CHATML),
    ChatTemplate("granite-3.3", "ibm-granite-granite-3.3-2B-Instruct.jinja",
                 bos="", eos="<|end_of_text|>",
                 drops_calls="it writes only each message's content, never its tool_calls"),
    ChatTemplate("granite-4.0", "ibm-granite-granite-4.0.jinja",
                 bos="", eos="<|end_of_text|>"),
    ChatTemplate("deepseek-r1-distill-qwen", "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja",
                 bos="<｜begin▁of▁sentence｜>", eos="<｜end▁of▁sentence｜>"),
    ChatTemplate("deepseek-r1-distill-llama",
                 "deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja",
                 bos="<｜begin▁of▁sentence｜>", eos="<｜end▁of▁sentence｜>",
                 drops_calls="it writes calls only when content is null, and vLLM turns null "
                             "into \"\" (the portable shape sends \"\" too)"),
    ChatTemplate("command-r-plus", "CohereForAI-c4ai-command-r-plus-tool_use.jinja",
                 bos="<BOS_TOKEN>", eos="<|END_OF_TURN_TOKEN|>", tool_use=True),
    ChatTemplate("gemma-3", "google-gemma-3-it.jinja", bos="<bos>", eos="<end_of_turn>",
                 tools=False),
    ChatTemplate("vllm-gemma3-pythonic", "vllm-tool_chat_template_gemma3_pythonic.jinja",
                 bos="<bos>", eos="<end_of_turn>", object_arguments=True),
    ChatTemplate("phi-3.5", "microsoft-Phi-3.5-mini-instruct.jinja", bos="", eos="<|endoftext|>",
                 tools=False),
)}


def _raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def _tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    """transformers' own ``tojson``: Jinja's escapes HTML characters, this does not."""
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def _strftime_now(format):
    return dt.datetime.now().strftime(format)


@functools.cache
def _environment() -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[loopcontrols])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env


@functools.cache
def _compiled(name: str) -> jinja2.Template:
    source = (TEMPLATE_DIR / TEMPLATES[name].file).read_text(encoding="utf-8")
    return _environment().from_string(source)


def render(name: str, messages: list[dict], tools: list[dict] | None = None, *,
           mode: str = "vllm", add_generation_prompt: bool = True) -> str:
    """The prompt text the server would build; raises jinja2.TemplateError (the template's
    own ``raise_exception``) or TypeError/UndefinedError (a template tripping over a value,
    e.g. adding ``None`` to a string) exactly where the server would answer 400."""
    template = TEMPLATES[name]
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    chat = vllm_messages(messages) if mode == "vllm" else copy.deepcopy(messages)
    return _compiled(name).render(messages=chat, tools=copy.deepcopy(tools) or None,
                                  add_generation_prompt=add_generation_prompt,
                                  bos_token=template.bos, eos_token=template.eos)


def vllm_messages(messages: list[dict]) -> list[dict]:
    """``messages`` as vLLM's chat parsing hands them to a template (see the module doc)."""
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            content = "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
        parsed = {"role": message["role"], "content": "" if content is None else content}
        if message["role"] == "assistant" and message.get("tool_calls") is not None:
            parsed["tool_calls"] = [_vllm_call(call) for call in message["tool_calls"]]
            if not parsed["tool_calls"]:
                del parsed["tool_calls"]
        if message["role"] == "tool" and "tool_call_id" in message:
            parsed["tool_call_id"] = message["tool_call_id"]
        if isinstance(message.get("name"), str):
            parsed["name"] = message["name"]
        out.append(parsed)
    return out


def _vllm_call(call: dict) -> dict:
    call = copy.deepcopy(call)
    function = call["function"]
    function["arguments"] = object_arguments(function.get("arguments"))
    return call


def object_arguments(raw) -> dict:
    """Tool-call arguments as the dict vLLM gives templates: ``{}`` for anything else."""
    if isinstance(raw, dict):
        return raw
    if not raw:
        return {}
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}

