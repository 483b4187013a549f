"""The seam between the mailbox and whatever carries a text: one small interface.

A carrier takes one outgoing text (``OutgoingText``) and answers with an ``Outcome``: it
took the text (``sid``, the carrier's id of it, and its first state), it may take it on
another try (the carrier was unreachable, busy or failing: never a lost text), or it refused
it for good. What it can do besides is said once, in ``Abilities``: the channels it
carries, media, and whether its network answers STOP and START itself. ``Carriers`` picks
the carrier for a channel. The mailbox (``mailbox.delivery.Sender``) queues, leases,
retries and holds texts the same whichever carrier takes them; how a carrier's texts come
in (Twilio's webhook, the phone's inbox) ends in the same intake (``mailbox.inbox``).

The carriers: Twilio (``carrier.twilio``: SMS and WhatsApp) and the household's Android
phone (``carrier.phone``: SMS through ``carrier.sms_gateway``).
"""

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from mediabot.text.phones import Channel


class OutcomeKind(StrEnum):
    """What became of one try: the carrier took it, it may go on another try, or never."""

    SENT = "sent"
    RETRY = "retry"
    PERMANENT = "permanent"


@dataclass(frozen=True)
class Outcome:
    kind: OutcomeKind
    sid: str | None = None      # the carrier's id of the text it took
    code: int | None = None     # the carrier's error code, when it has numbered ones
    error: str | None = None    # one line, without secrets or the text's body
    state: str | None = None    # the text's first delivery state (db.DeliveryState)


@dataclass(frozen=True)
class OutgoingText:
    """One try at one outbox row: ``key`` is the same on every try of that row (a carrier
    that takes an idempotency key is given it, so a try whose answer was lost is not sent
    twice); ``template`` a WhatsApp Content SID (Twilio only), the body then its one
    variable."""

    key: str
    to: str                     # E.164, with its +
    body: str
    channel: Channel
    media: tuple[str, ...] = ()
    template: str = ""


@dataclass(frozen=True)
class Abilities:
    """``channels`` it carries; ``media``: it sends pictures (MMS, WhatsApp media);
    ``answers_opt_out``: its network confirms STOP and START itself (Twilio's Advanced
    Opt-Out does; a personal SIM's network never does, so mediabot must)."""

    channels: frozenset[Channel]
    media: bool = False
    answers_opt_out: bool = False


class Carrier(Protocol):
    """A carrier as the mailbox sees it."""

    @property
    def name(self) -> str:
        """What logs and ``mediabot check`` call it: "twilio", "phone"."""

    @property
    def abilities(self) -> Abilities: ...

    def send(self, text: OutgoingText) -> Outcome:
        """One try; never raises for the carrier's or the network's failures."""


@dataclass(frozen=True)
class Carriers:
    """Which carrier takes each channel: SMS by ``sms``, WhatsApp by ``whatsapp`` (None:
    the household has no carrier for it)."""

    sms: Carrier | None
    whatsapp: Carrier | None = None

    def for_channel(self, channel: Channel) -> Carrier | None:
        return self.sms if channel == Channel.SMS else self.whatsapp

    def answers_opt_out(self, channel: Channel) -> bool:
        """Does the carrier of ``channel`` confirm STOP/START itself?"""
        carrier = self.for_channel(channel)
        return carrier is not None and carrier.abilities.answers_opt_out
