"""The fake Android phone of the tests: mediabot's simulated phone
(``mediabot.trial.sim.phone``, the one ``mediabot demo --serve --phone`` runs), checked
against the app's own OpenAPI file (``sms_gateway_spec``) on every request, answer and
webhook.

    phone = FakePhone().start()                         # its Local server: phone.url
    phone.receive("+15551230002", "add Dune")           # an SMS reaches the phone
    phone.process()                                     # Processed -> Sent -> Delivered

What it serves, how its texts move and how its webhooks go are ``SimulatedPhone``'s; this
adds only the gate. ``tls`` (``tests.fakes.tls.certificate``) serves it over HTTPS.

``assert_clean`` fails when anything broke the app's file, either way.
"""

from typing import Any

from werkzeug.wrappers import Request, Response

from mediabot.trial.sim.phone import SimulatedPhone
from mediabot.trial.sim.phone_http import Gate
from tests.fakes.sms_gateway_spec import (
    SpecViolation,
    check_request,
    check_response,
    check_webhook,
)


class SpecGate(Gate):
    """The app's OpenAPI file (as corrected in ``sms_gateway_spec``) as the phone's gate."""

    def request(self, request: Request, prefix: str) -> int | None:
        return check_request(request, prefix)

    def response(self, request: Request, response: Response, prefix: str) -> str | None:
        try:
            check_response(request, response, prefix)
        except SpecViolation as exc:
            return str(exc)
        return None


class FakePhone(SimulatedPhone):
    def __init__(self, **options: Any):
        super().__init__(gate=SpecGate(), check_webhook=check_webhook, **options)

    def start(self) -> "FakePhone":
        super().start()
        return self

    def __enter__(self) -> "FakePhone":
        return self.start()

    @property
    def violations(self) -> list[str]:
        return self.http.violations

    def assert_clean(self) -> None:
        assert not self.http.violations, "the fake phone saw off-spec traffic:\n" + \
            "\n".join(self.http.violations)
