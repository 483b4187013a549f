"""What the daemon hands the sender (``app.held_text_stands``): whether what a held text is
about still stands, asked of the owner its kind names, by the row's subject."""

import datetime as dt

from mediabot.app import held_text_stands
from mediabot.arr import wanted
from mediabot.store import db
from mediabot.store.db import TextKind
from tests.support.household import MEMBER

NOW = dt.datetime(2026, 1, 1, 12)


def member() -> db.User:
    return db.User.create(phone=MEMBER, display_name="Sam", created_at=NOW)


def test_an_approval_request_stands_while_its_request_waits_and_has_not_expired(database):
    approval = db.Approval.create(user=member(), service="radarr", external_id=1, title="Dune",
                                  tool="add_movie", arguments="{}", created_at=NOW,
                                  expires_at=NOW + dt.timedelta(hours=1))
    assert held_text_stands(TextKind.APPROVAL, approval.id, NOW)
    assert not held_text_stands(TextKind.APPROVAL, approval.id, NOW + dt.timedelta(hours=1))
    db.Approval.update(status="approved").execute()
    assert not held_text_stands(TextKind.APPROVAL, approval.id, NOW)
    assert not held_text_stands(TextKind.APPROVAL, approval.id + 1, NOW), "gone"


def test_the_kind_names_which_approvals_the_number_is_one_of(database):
    """A household request and a Seerr one may hold the same number; the text's kind, not
    its key, says which one it asked about."""
    db.Approval.create(id=5, user=member(), service="radarr", external_id=1, title="Dune",
                       tool="add_movie", arguments="{}", created_at=NOW,
                       expires_at=NOW + dt.timedelta(hours=1))
    db.SeerrApproval.create(id=5, seerr_request=40, requested_by="Sam", title="Alien",
                            status="approved", created_at=NOW)
    assert held_text_stands(TextKind.APPROVAL, 5, NOW)
    assert not held_text_stands(TextKind.SEERR_APPROVAL, 5, NOW)
    db.SeerrApproval.update(status="waiting").execute()
    assert held_text_stands(TextKind.SEERR_APPROVAL, 5, NOW)


def test_a_ready_text_stands_while_its_request_is_kept(database):
    request = wanted.ensure_request(member().id, "radarr", 42, "Dune", NOW)
    assert held_text_stands(TextKind.READY, request.id, NOW)
    wanted.forget_title("radarr", 42)
    assert not held_text_stands(TextKind.READY, request.id, NOW)


def test_any_other_text_always_stands(database):
    assert held_text_stands(TextKind.OTHER, 1, NOW)
    assert held_text_stands(TextKind.REPLY, 1, NOW)
