"""``mediabot demo --serve --phone``: the daemon with a simulated Android phone as its only
carrier, as a household with "SMS Gateway for Android" runs it.

The phone (``mediabot.trial.sim.phone``, the one the tests run against) serves its Local
server on loopback, and the daemon is configured with ``[sms_gateway]`` alone: no Twilio,
no public URL, nothing calls in. Each line typed is Sam's SMS reaching the phone, which the
daemon reads from the phone's inbox within a poll; each reply is printed as the phone sends
it. The phone carries SMS only, so a line typed with ``wa:`` goes as an SMS.
"""

import dataclasses
import threading
from collections.abc import Iterable

from mediabot.config import Config, SmsGatewayConfig, TwilioConfig
from mediabot.trial.demo import DEMO_PHONE, TYPED_WHATSAPP, Echo
from mediabot.trial.sim.phone import SimulatedPhone
from mediabot.trial.sim.phone_state import nanoid

POLL_SECONDS = 1.0     # the daemon reads the phone's inbox this often
FINAL = ("Sent", "Delivered", "Failed")


@dataclasses.dataclass
class PhoneStage:
    """The simulated phone, and what the person at the terminal sees of it."""

    phone: SimulatedPhone

    @classmethod
    def start(cls) -> "PhoneStage":
        """A phone that sends what it is given at once, with a password of its own (the
        app makes one on first run)."""
        return cls(SimulatedPhone(password=nanoid(8), auto=True).start())

    def config(self, config: Config, port: int) -> Config:
        """``config`` with the phone as its one carrier: ``[twilio]`` and the public URL
        left empty, whatever the config file says."""
        gateway = SmsGatewayConfig(url=self.phone.url, username=self.phone.username,
                                   password=self.phone.password, poll_seconds=POLL_SECONDS)
        return dataclasses.replace(config, twilio=TwilioConfig(), sms_gateway=gateway,
                                   server=dataclasses.replace(config.server, public_url="",
                                                              host="127.0.0.1", port=port))

    def banner(self) -> list[str]:
        return [f"The daemon reads Sam's texts from a simulated Android phone ({self.phone.url}"
                ", SMS Gateway's Local server) and sends its replies through it; they are "
                "printed here as 'SMS to ...' when the phone sends them.",
                "Type a text here and press Enter: it reaches the phone as Sam's SMS. "
                "Ctrl-C stops."]

    def deliver(self, body: str, echo: Echo) -> None:
        """One typed line, as Sam's SMS reaching the phone; the daemon reads it within a
        poll (a text the phone took just before the daemon started is read too)."""
        if body.lower().startswith(TYPED_WHATSAPP):
            body = body[len(TYPED_WHATSAPP):].strip()
            echo("(the phone carries SMS only: that goes as an SMS)")
        if not self.phone.calls_to("GET", "/inbox"):
            echo("(the daemon is still starting; it reads the phone as soon as it does)")
        self.phone.receive(DEMO_PHONE, body)

    def deliver_lines(self, lines: Iterable[str], echo: Echo) -> None:
        for line in lines:
            if line.strip():
                self.deliver(line.strip(), echo)

    def watch(self, echo: Echo, stop: threading.Event, poll: float = 0.2) -> None:
        """Print every text the phone sends ("SMS to ..."), or could not send, once."""
        shown: set[int] = set()
        while not stop.wait(poll):
            for index, (number, text, state) in enumerate(self.phone.sent()):
                if index in shown or state not in FINAL:
                    continue
                shown.add(index)
                echo(f"SMS to {number}: {text}" if state != "Failed"
                     else f"(the phone could not send to {number}: {text})")

    def close(self) -> None:
        self.phone.stop()
