"""The model client: the SDK (0.7 s of import, 30 MB) loads on the first model call, not
at start, so the daemon answers /healthz first."""

import subprocess
import sys

from mediabot.llm import ChatModel
from tests.conftest import make_config


def test_starting_the_daemon_code_does_not_import_the_model_sdk():
    code = ("import sys; import mediabot.cli, mediabot.daemon, mediabot.app, mediabot.checks; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'openai'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_a_lazy_model_builds_its_client_once_on_the_first_call(fake_llm):
    config = make_config(llm_url=fake_llm.url)
    model = ChatModel.lazy(config.llm)
    assert model._client is None
    reply = model.complete([{"role": "user", "content": "hi"}])
    assert reply.message["role"] == "assistant" and len(fake_llm.requests) == 1
    client = model.client
    assert model.complete([{"role": "user", "content": "again"}]).message["content"] is not None
    assert model.client is client and str(client.base_url).startswith(fake_llm.url)
