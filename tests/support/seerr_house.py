"""A household on the fake Seerr: Alex and Jo (admins; only Alex may manage requests in
Seerr), Sam (a member), each linked to their Seerr user, and Theo, a Seerr user of no member;
the real Seerr client and approvals on the fake, and the texts they queue for people."""

from dataclasses import dataclass

from mediabot.approvals.front import next_number
from mediabot.approvals.seerr_requests import SeerrApprovals
from mediabot.seerr.api import SeerrClient
from mediabot.store import db
from mediabot.store.db import TextKind
from mediabot.trial.sim.arr_fixtures import DUNE_TWO_TMDB
from tests.fakes.seerr_model import Permission
from tests.support.household import ADMIN, ADMIN2, MEMBER

DUNE_TWO = "Dune: Part Two (2024)"   # as Seerr's subject line and the texts name it


class Texts:
    """The household's phones: every text queued for someone, in order, each key once (as
    the outbox queues it); the ``notify`` the approvals and notices are handed."""

    def __init__(self):
        self.sent: list[tuple[str, str, TextKind, int | None]] = []
        self._keys: set[str] = set()

    def __call__(self, user, text, key=None, kind=TextKind.OTHER, subject=None):
        if key is not None and key in self._keys:
            return
        if key is not None:
            self._keys.add(key)
        self.sent.append((user.phone, text, kind, subject))

    def to(self, phone):
        return [text for to, text, _, _ in self.sent if to == phone]


@dataclass
class SeerrHouse:
    seerr: object            # the FakeSeerr
    client: SeerrClient
    approvals: SeerrApprovals
    texts: Texts
    ids: dict[str, int]      # Seerr user ids by name
    people: dict[str, db.User]

    def sam_asks_for_dune_two(self) -> int:
        """Sam files Dune: Part Two in Seerr's web UI; it waits there for an admin."""
        return self.seerr.request_in_web_ui(self.ids["sam"], "movie", DUNE_TWO_TMDB)


def seerr_house(seerr) -> SeerrHouse:
    """The household on ``seerr`` (a started FakeSeerr), on the current database."""
    ids = {"alex": seerr.add_user("alex", permissions=Permission.MANAGE_REQUESTS),
           "jo": seerr.add_user("jo", permissions=Permission.REQUEST),
           "sam": seerr.add_user("sam", permissions=Permission.REQUEST),
           "theo": seerr.add_user("theo", permissions=Permission.REQUEST)}
    people = {"alex": db.User.create(phone=ADMIN, display_name="Alex", role="admin",
                                     seerr_user="alex"),
              "jo": db.User.create(phone=ADMIN2, display_name="Jo", role="admin",
                                   seerr_user="jo"),
              "sam": db.User.create(phone=MEMBER, display_name="Sam", role="member",
                                    seerr_user="sam")}
    texts = Texts()
    client = SeerrClient(seerr.url, seerr.api_key, timeout=5, retries=0)
    approvals = SeerrApprovals(client, texts, "en", numbers=next_number)   # as the daemon's
    return SeerrHouse(seerr, client, approvals, texts, ids, people)
