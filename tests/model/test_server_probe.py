"""Which model server answers, from what it answers besides the OpenAI API (the kinds
themselves are tested through ``check``'s line, tests/ops/test_server_kind.py): the root the
questions go to, and the slot count the model client pins people to."""

import pytest

from mediabot.model.server_probe import Server, root_of
from tests.support.messages import LLAMA_PROPS


@pytest.mark.parametrize("base_url, root", [
    ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080"),
    ("http://127.0.0.1:11434/v1/", "http://127.0.0.1:11434"),
    ("http://llm.lan/proxy/v1", "http://llm.lan/proxy"),
    ("http://llm.lan:8000", "http://llm.lan:8000"),
])
def test_the_root_is_the_base_url_without_the_api_path(base_url, root):
    assert root_of(base_url) == root


@pytest.mark.parametrize("server, slots", [
    (Server("llama.cpp", facts={"props": {**LLAMA_PROPS, "total_slots": 4}}), 4),
    (Server("llama.cpp", facts={"props": LLAMA_PROPS}), 1),
    (Server("llama.cpp", facts={"props": {**LLAMA_PROPS, "total_slots": "4"}}), 1),
    (Server("Ollama", "0.12.3", {"props": {"total_slots": 4}}), 1),
    (Server("other"), 1),
])
def test_only_llama_server_has_slots_to_pin_to(server, slots):
    assert server.slots == slots
