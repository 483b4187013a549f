"""The phone's webhooks taken once each, and a send's state folded from its events (the
``gateway_events`` table's owner).

The phone posts every event until it sees a 2xx, for about two days, and may post one again
after a 2xx that came too late for it, always under the same envelope id: ``take`` stores
the id and says whether it is new, so a repeat changes nothing. Its events also come out of
order (a retried ``sms:sent`` after its ``sms:delivered``), and a text of several parts is
delivered part by part, each part its own ``sms:delivered``. So the state a send has is not
the last event's: ``progress_of`` folds every event stored for the message with
``outgoing.Progress``, which gives the same answer in any order, and ``delivery_state`` says
it in the outbox's words (Twilio's: ``sent``, ``delivered``, ``failed``). A text is
``delivered`` once every part it was sent as is reported delivered (or the first report, when
the phone has not yet said how many parts there were). The phone can report a send before
its answer to the send is handled; ``reported`` is what ``outbox.finish`` then applies.
"""

import datetime as dt

from mediabot.carrier.phone import DELIVERY_WORDS
from mediabot.carrier.sms_gateway.events import Event, StatusChange
from mediabot.carrier.sms_gateway.outgoing import Progress, State
from mediabot.store.db import DeliveryState, GatewayEvent


def take(event: Event, now: dt.datetime) -> bool:
    """Store ``event`` under its envelope id; False when that id was taken before."""
    change = event.payload if isinstance(event.payload, StatusChange) else None
    fields = {"envelope_id": event.id, "event": event.name, "received_at": now}
    if change is not None:
        fields.update(message_id=change.message_id, recipient=change.recipient,
                      state=change.state, parts=change.parts, reason=change.reason)
    inserted = GatewayEvent.insert(**fields).on_conflict_ignore().as_rowcount().execute()
    return inserted == 1


def progress_of(message_id: str) -> Progress:
    """What every stored event says of the send of ``message_id`` (mediabot sends each
    text to one person, so its events are of one recipient)."""
    progress = Progress()
    rows = GatewayEvent.select().where(GatewayEvent.message_id == message_id,
                                       GatewayEvent.state.is_null(False))
    for row in rows.order_by(GatewayEvent.id):
        progress = progress.advance(State(str(row.state)), event_id=row.envelope_id,
                                    parts=row.parts, reason=row.reason)
    return progress


def reported(message_id: str) -> DeliveryState | None:
    """What the stored events say of ``message_id`` in the outbox's words; None when none
    came (for a text sent before its reports, or not through the phone's webhooks)."""
    if not GatewayEvent.select().where(GatewayEvent.message_id == message_id).exists():
        return None
    return delivery_state(progress_of(message_id))


def delivery_state(progress: Progress) -> DeliveryState:
    """The outbox's word for ``progress``: delivered only once every known part is."""
    if progress.state is State.DELIVERED and progress.parts > 0 and not progress.all_delivered:
        return DeliveryState.SENT
    return DeliveryState(DELIVERY_WORDS[progress.state])
