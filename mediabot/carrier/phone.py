"""The household's Android phone as one ``carrier.base.Carrier``: SMS only, through the
"SMS Gateway for Android" app (``carrier.sms_gateway``).

A text goes as one ``POST /messages`` under the outbox row's key, so a try whose answer was
lost is not sent twice (the phone answers 409 for a key it has, and its state is read
instead). A phone that is off, asleep or off the LAN is worth another try; a number or text
the app refuses is refused for good. The app splits a long text as Android does
(``sms_gateway.outgoing.parts``), which is how ``text.sms.count_segments`` counts it.

What became of a text afterwards is the phone's state of it (``delivery_state``, read into
``db.DeliveryState`` words): in Local mode read back by ``PhoneStates`` for the texts not
final yet. A personal SIM's network answers no STOP: mediabot confirms it itself.
"""

import logging
from dataclasses import dataclass

from mediabot.carrier.base import Abilities, Outcome, OutcomeKind, OutgoingText
from mediabot.carrier.sms_gateway.client import GatewayClient
from mediabot.carrier.sms_gateway.errors import GatewayError
from mediabot.carrier.sms_gateway.outgoing import SendState, State, send_body
from mediabot.text.phones import SMS

log = logging.getLogger(__name__)

# The phone's states as the outbox keeps them (db.DeliveryState's words).
DELIVERY_WORDS = {State.PENDING: "queued", State.PROCESSED: "sending", State.SENT: "sent",
                  State.DELIVERED: "delivered", State.FAILED: "failed",
                  State.CANCELLING: "sending", State.CANCELLED: "canceled"}
KEY_PREFIX = "mb-"     # every text mediabot gives the phone has an id starting so


def delivery_state(state: SendState) -> str:
    return DELIVERY_WORDS[state.state]


class PhoneCarrier:
    name = "phone"
    abilities = Abilities(frozenset({SMS}), media=False, answers_opt_out=False)

    def __init__(self, client: GatewayClient) -> None:
        self.client = client

    def send(self, text: OutgoingText) -> Outcome:
        try:
            body = send_body(text.key, text.to, text.body,
                             device_id=self.client.settings.device_id)
        except ValueError as exc:
            return Outcome(OutcomeKind.PERMANENT, error=f"not sent: {exc}")
        try:
            state = self.client.send(body)
        except GatewayError as exc:
            return Outcome(OutcomeKind.RETRY if exc.retry else OutcomeKind.PERMANENT,
                           error=str(exc))
        if state.state is State.FAILED:
            return Outcome(OutcomeKind.PERMANENT, error=f"the phone failed it: {state.error}")
        return Outcome(OutcomeKind.SENT, sid=state.message_id, state=delivery_state(state))


@dataclass(frozen=True)
class Report:
    """What the phone says now of one text mediabot gave it: ``state`` in the outbox's
    words, ``reason`` the app's when it failed."""

    sid: str
    state: str
    reason: str = ""


def read_states(client: GatewayClient, sids: list[str]) -> list[Report]:
    """The phone's state of each text; a text it cannot tell of now (off, asleep) is left
    for the next round."""
    reports = []
    for sid in sids:
        try:
            state = client.message_state(sid)
        except GatewayError as exc:
            if exc.retry:
                log.info("phone: the state of %s is not known yet (%s)", sid, exc.reason)
                break          # the phone is away: the others would wait as long
            log.warning("phone: the state of %s: %s", sid, exc)
            continue
        reports.append(Report(sid, delivery_state(state), state.error))
    return reports
