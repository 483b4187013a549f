"""Fixtures of the `mediabot check` tests: one set of loopback fakes (Sonarr, Radarr, Twilio
and the model server, also as one that cannot list its models) per test module."""

import pytest

from mediabot.trial.sim.arr import FakeRadarr, FakeSonarr
from mediabot.trial.sim.loopback import LoopbackServer
from mediabot.trial.sim.twilio import FakeTwilio
from tests.fakes.openai import FakeOpenAI
from tests.support.check import (
    ACCOUNT_SID,
    FROM_NUMBER,
    LLM_KEY,
    SERVICE,
    TWILIO_TOKEN,
    WHATSAPP_NUMBER,
    calls_a_tool_when_offered,
)


@pytest.fixture(scope="module")
def servers():
    """One set of fakes for the module; tests that change one restore it."""
    fakes = {"sonarr": FakeSonarr(), "radarr": FakeRadarr(),
             "twilio": FakeTwilio(account_sid=ACCOUNT_SID, auth_token=TWILIO_TOKEN,
                                  owned_numbers=(FROM_NUMBER, WHATSAPP_NUMBER),
                                  messaging_services={SERVICE: "Smith household"})}
    running = {name: LoopbackServer(app).start() for name, app in fakes.items()}
    llm = FakeOpenAI(api_key=LLM_KEY).start()
    llm.set_responder(calls_a_tool_when_offered)
    unlisted = LoopbackServer(_without_model_list(llm.wsgi_app)).start()
    urls = {name: server.url for name, server in running.items()}
    urls.update(llm=llm.url + "/v1", unlisted_llm=unlisted.url + "/v1")
    yield {"urls": urls, "llm": llm, **fakes}
    for server in [*running.values(), unlisted]:
        server.stop()
    llm.stop()


def _without_model_list(app):
    """The fake model server as a server that cannot list its models (like some proxies)."""
    def wsgi(environ, start_response):
        if environ["PATH_INFO"].rstrip("/") == "/v1/models":
            start_response("404 Not Found", [("Content-Type", "application/json")])
            return [b'{"error": {"message": "not found", "type": "invalid_request_error"}}']
        return app(environ, start_response)
    return wsgi
