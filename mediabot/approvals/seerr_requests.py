"""Seerr's approvals by text: a request pending in Seerr, answered by an admin's APPROVE n.

A request waits in Seerr for someone with Manage Requests, whether a member texted it in
(filed as their own Seerr user) or made it in Seerr's web UI. mediabot learns of it from
Seerr's MEDIA_PENDING webhook and from a bounded sweep of Seerr's pending list (a missed
webhook, a Seerr without one), and asks every admin once with the text mediabot's own
approvals use ("Sam asked for Dune: Part Two (2024). Reply APPROVE 3 or DENY 3"), in their
language, on their channel. One ``SeerrApproval`` row per Seerr request holds the number.

The answer is read without the model. The first admin's answer wins (one conditional UPDATE)
and is carried out in Seerr **as that admin's own Seerr user** (``X-API-User``), so Seerr
records who decided and checks their Manage Requests permission; without it, or without a
link to a Seerr user, the admin is told so plainly and the request keeps waiting.

Once a request is decided anywhere (here, in the web UI, by another admin, by Seerr's
auto-approval) its row is closed: nobody is asked again, a late answer is told it was already
decided, and an approval text still held for an admin is withdrawn (``still_waiting``, which
the held-text rule asks through ``app.held_text_stands``: the text is queued as a
``SEERR_APPROVAL`` about the row's number). Before asking and before acting,
Seerr itself is asked whether the request still waits.
"""

import datetime as dt
import logging
from collections.abc import Callable

import peewee as pw

from mediabot.approvals import house_rules
from mediabot.approvals.house_rules import Notify, name_of
from mediabot.approvals.seerr_members import (
    LINK_PROBLEMS,
    member_for,
    outsider_name,
    seerr_id_of,
    seerr_label,
    seerr_name,
)
from mediabot.arr import wanted
from mediabot.arr.tools.base import Service
from mediabot.arr.tools.format import sms_safe_title
from mediabot.mailbox import outbox
from mediabot.seerr.api import RequestStatus, SeerrClient, SeerrError, SeerrRequest
from mediabot.store import db, people, users
from mediabot.store.db import ApprovalStatus, TextKind
from mediabot.store.people import Person, person_of
from mediabot.text.keywords import Verdict
from mediabot.text.language import Language

log = logging.getLogger(__name__)
SWEEP_TAKE = 20      # pending requests read per sweep (newest first)
SWEEP_CHECKS = 20    # waiting rows checked against Seerr per sweep
KEY_HEAD = "approval:seerr-"


def ask_key(number: int, admin_id: int) -> str:
    """The outbox dedupe_key of the text asking ``admin_id`` about Seerr approval
    ``number`` (what the text is travels as its kind, ``TextKind.SEERR_APPROVAL``)."""
    return f"{KEY_HEAD}{number}:{admin_id}"


def event_key(request_id: int, notification_type: str) -> str:
    """The outbox dedupe_key of what a Seerr request's event tells its requester: shared by
    the webhook and by an admin's answer, so it is texted once however it arrives."""
    return f"seerr:{request_id}:{notification_type}"


def remember_request(member: db.User, request: SeerrRequest, title: str, now: dt.datetime,
                     external: int | None = None) -> db.Request | None:
    """The member's request as Radarr's/Sonarr's webhook and Seerr's MEDIA_AVAILABLE look it
    up (films by TMDB id, series by TVDB id), so whoever is told "I'll text you when it's
    ready" is; None when Seerr gave no id to look it up by."""
    if request.media_type == "tv":
        service, external = Service.SONARR, external or request.tvdb_id
    else:
        service, external = Service.RADARR, external or request.tmdb_id
    if external is None:
        return None
    return wanted.ensure_request(member.id, service, external,
                                   title or f"Seerr request {request.id}", now)


class SeerrApprovals:
    """Asking the admins about Seerr's pending requests, and carrying out their answers."""

    def __init__(self, client: SeerrClient, notify: Notify | None, language: str = "en", *,
                 numbers: Callable[[], int]) -> None:
        self.client, self.notify, self.language = client, notify, language
        self.numbers = numbers   # a new row's number (``front.next_number``, shared)

    def speaks(self, user: db.User | Person) -> Language:
        return house_rules.language_for(user, self.language)

    def ask(self, request_id: int, now: dt.datetime, title: str = "") -> str:
        """Put Seerr request ``request_id`` to the admins, once; a word for the log."""
        request = self.client.get_request(request_id)
        if request.status != RequestStatus.PENDING:
            return "decided" if self.settle(request, now) else "not pending"
        if waiting_row(request.id) is not None:
            return "already asked"
        row = self._create(request, title or self._title(request), now)
        if row is None:
            return "already asked"
        admins = users.active_admins() if self.notify is not None else []
        for admin in admins:
            self.notify_member(admin, _ask_text(self.speaks(admin), row, request),
                               ask_key(row.id, admin.id), TextKind.SEERR_APPROVAL, row.id)
        log.info("Seerr request %s waits for approval as number %s (%d admins told)",
                 request.id, row.id, len(admins))
        return "asked"

    def _title(self, request: SeerrRequest) -> str:
        """"Dune: Part Two (2024)", as Seerr's subject line has it; Seerr's id if unknown."""
        if request.tmdb_id and request.media_type in ("movie", "tv"):
            try:
                media = self.client.media("movie" if request.media_type == "movie" else "tv",
                                          request.tmdb_id)
                return sms_safe_title(f"{media.title} ({media.year})" if media.year
                                      else media.title)
            except SeerrError as exc:
                log.info("Seerr request %s: no title (%s)", request.id, exc.kind)
        return f"Seerr request {request.id}"

    def _create(self, request: SeerrRequest, title: str,
                now: dt.datetime) -> db.SeerrApproval | None:
        """The row, numbered above every number in use in both tables; None when another
        thread (the webhook and the sweep at once) created it first. The write lock is taken
        before the numbers are read (IMMEDIATE), so two new rows never draw the same number."""
        try:
            with db.database.atomic("IMMEDIATE"):
                number = self.numbers()
                member = member_for(self.client, request.requested_by)
                return db.SeerrApproval.create(
                    id=number, seerr_request=request.id,
                    requester=member.id if member else None,
                    requested_by=(name_of(member) if member else outsider_name(
                        people.language_of(None, self.language), request.requested_by))[:255],
                    title=title[:255], created_at=now)
        except pw.IntegrityError:
            return None

    def settle(self, request: SeerrRequest, now: dt.datetime) -> bool:
        """Close the request's row when Seerr says it no longer waits (``settle``)."""
        return settle(request, now)

    def sweep(self, now: dt.datetime) -> int:
        """The scheduler's job: ask about pending requests whose webhook never came, and
        close rows Seerr decided without telling us. Bounded: one page of ``SWEEP_TAKE``
        and at most ``SWEEP_CHECKS`` lookups. Returns how many admins' questions changed."""
        pending = self.client.list_requests(filter="pending", take=SWEEP_TAKE).results
        changed = sum(self.ask(r.id, now) == "asked" for r in pending
                      if waiting_row(r.id) is None)
        listed = {r.id for r in pending}
        rows = (db.SeerrApproval.select().where(db.SeerrApproval.status == ApprovalStatus.WAITING,
                                                db.SeerrApproval.seerr_request.not_in(listed))
                .order_by(db.SeerrApproval.id).limit(SWEEP_CHECKS))
        for row in list(rows):
            try:
                changed += self.settle(self.client.get_request(row.seerr_request), now)
            except SeerrError as exc:
                if exc.kind != "not_found":
                    raise
                changed += _close(row, ApprovalStatus.DENIED, now)   # deleted in Seerr
        return changed

    # -- an admin's answer ----------------------------------------------------------------

    def decide(self, admin: Person, verdict: Verdict, number: int, now: dt.datetime, *,
               inbox_id: int | None = None) -> str | None:
        """Apply "APPROVE n"/"DENY n" to Seerr approval ``number``; the reply to the admin,
        or None when ``number`` is not one of Seerr's (mediabot's own approvals take it)."""
        row = db.SeerrApproval.get_or_none(db.SeerrApproval.id == number)
        if row is None:
            return None
        lang = self.speaks(admin)
        asked = outbox.text_by_key(ask_key(row.id, admin.id))
        if inbox_id is not None and not outbox.seen_before(asked, inbox_id):
            return lang.gettext("There is no request {number} waiting for your answer, so "
                                "nothing was decided.", number=number)
        try:
            return self._carry_out(admin, verdict, row, now, lang)
        except SeerrError as exc:
            log.warning("Seerr request %s: %s by user %s failed (%s)", row.seerr_request,
                        verdict, admin.id, exc.kind)
            return lang.gettext("Seerr did not answer, so request {number} ({title}) is still "
                                "waiting. Try again in a while.", number=row.id, title=row.title)

    def _carry_out(self, admin: Person, verdict: Verdict, row: db.SeerrApproval,
                   now: dt.datetime, lang: Language) -> str:
        """Seerr is asked first whether the request still waits (404: it is gone; decided:
        by whom), then the admin's answer is claimed and carried out as their Seerr user."""
        if row.status != ApprovalStatus.WAITING and row.decided_by is not None:
            return house_rules.already_decided(lang, row)
        try:
            current = self.client.get_request(row.seerr_request)
        except SeerrError as exc:
            if exc.kind != "not_found":
                raise
            return _gone(row, now, lang)
        if current.status != RequestStatus.PENDING:
            return _decided_in_seerr(self.client, row, current, now, lang)
        if not _claim(row, admin, verdict, now):
            return house_rules.already_decided(lang, db.SeerrApproval.get_by_id(row.id))
        try:
            acting = seerr_id_of(self.client, admin)
        except SeerrError as exc:
            _unclaim(row, admin)
            if exc.kind in LINK_PROBLEMS:
                return lang.gettext("Your number is not linked to a Seerr user, so request "
                                    "{number} can't be decided by text. The operator can link "
                                    "you (seerr_user in [[users]]).", number=row.id)
            raise
        decide = self.client.approve if verdict == Verdict.APPROVE else self.client.decline
        try:
            request = decide(row.seerr_request, as_user=acting)
        except SeerrError as exc:
            _unclaim(row, admin)
            return _refused(self.client, exc, row, now, lang)
        log.info("Seerr request %s %sd by user %s as Seerr user %s", row.seerr_request,
                 verdict, admin.id, acting)
        return self._answered(admin, verdict, row, request, lang, now)

    def _answered(self, admin: Person, verdict: Verdict, row: db.SeerrApproval,
                  request: SeerrRequest, lang: Language, now: dt.datetime) -> str:
        member = row.requester
        told = {"number": row.id, "title": row.title, "name": row.requested_by}
        if member is not None and verdict == Verdict.APPROVE:
            remember_request(member, request, row.title, now)
        if member is not None:
            self.tell_decision(member, verdict == Verdict.APPROVE, request.id, row.title,
                               name_of(admin))
        if verdict == Verdict.DENY:
            return (lang.gettext("Denied request {number} ({title}); {name} has been told.",
                                 **told) if member is not None else
                    lang.gettext("Denied request {number} ({title}) in Seerr.", **told))
        return (lang.gettext("Approved request {number}: {title} is added. {name} has been "
                             "told.", **told) if member is not None else
                lang.gettext("Approved request {number} ({title}) in Seerr.", **told))

    def tell_decision(self, member: db.User, approved: bool, request_id: int, title: str,
                      by: str, *, outsider: bool = False) -> None:
        """Tell the requester their request was approved or declined: once, whether the
        admin's text or Seerr's webhook comes first (one key for both). ``outsider``: ``by``
        is Seerr's name for someone of no household member."""
        theirs, fields = self.speaks(member), {"name": by, "title": title}
        if approved and outsider:
            text = theirs.gettext("A Seerr user, {name}, approved {title}: it's added, and "
                                  "I'll text you when it's ready.", **fields)
        elif approved:
            text = theirs.gettext("{name} approved {title}: it's added, and I'll text you when "
                                  "it's ready.", **fields)
        elif outsider:
            text = theirs.gettext("A Seerr user, {name}, didn't approve {title}, so it "
                                  "wasn't added.", **fields)
        else:
            text = theirs.gettext("{name} didn't approve {title}, so it wasn't added.",
                                  **fields)
        kind = "MEDIA_APPROVED" if approved else "MEDIA_DECLINED"
        self.notify_member(member, text, event_key(request_id, kind))

    def waiting_note(self) -> str | None:
        """For an admin's system prompt: what waits in Seerr for their answer by text."""
        rows = list(db.SeerrApproval.select().where(
            db.SeerrApproval.status == ApprovalStatus.WAITING).order_by(
            db.SeerrApproval.id).limit(10))
        if not rows:
            return None
        listed = "; ".join(f"#{r.id} {r.requested_by}: {r.title}" for r in rows)
        return (f"Requests waiting for approval in Seerr: {listed}. You cannot approve or "
                "deny them yourself: tell the admin to text APPROVE or DENY with the number "
                "(or decide in Seerr).")

    def notify_member(self, user: db.User, text: str, key: str,
                      kind: TextKind = TextKind.OTHER, subject: int | None = None) -> None:
        """Text someone of the household (not opted out), once per ``key``; ``kind`` and
        ``subject`` say what the text is and is about."""
        if self.notify is not None and not user.opted_out:
            self.notify(person_of(user, self.language), text, key=key, kind=kind, subject=subject)


def _ask_text(lang: Language, row: db.SeerrApproval, request: SeerrRequest) -> str:
    """The question to an admin: who asked (a member, or a Seerr user from outside the
    household, so named), for what, 4K when it is; one whole sentence each."""
    fields = {"title": row.title, "number": row.id, "name": row.requested_by}
    if row.requester is not None and request.is_4k:
        return lang.gettext("{name} asked for {title} in 4K. Reply APPROVE {number} or "
                            "DENY {number}", **fields)
    if row.requester is not None:
        return lang.gettext("{name} asked for {title}. Reply APPROVE {number} or DENY "
                            "{number}", **fields)
    fields["name"] = seerr_label(request.requested_by)
    if request.is_4k:
        return lang.gettext("A Seerr user, {name}, asked for {title} in 4K. Reply APPROVE "
                            "{number} or DENY {number}", **fields)
    return lang.gettext("A Seerr user, {name}, asked for {title}. Reply APPROVE {number} or "
                        "DENY {number}", **fields)


def settle(request: SeerrRequest, now: dt.datetime) -> bool:
    """Seerr says the request no longer waits: close its row (no one decided it here).
    True when a waiting row was closed."""
    if request.status == RequestStatus.PENDING:
        return False
    status = (ApprovalStatus.DENIED if request.status == RequestStatus.DECLINED
              else ApprovalStatus.APPROVED)
    closed = db.SeerrApproval.update(status=status, decided_at=now).where(
        db.SeerrApproval.seerr_request == request.id,
        db.SeerrApproval.status == ApprovalStatus.WAITING).execute() == 1
    if closed:
        log.info("Seerr request %s was %s in Seerr; nobody is asked any more", request.id,
                 status)
    return closed


def _refused(client: SeerrClient, exc: SeerrError, row: db.SeerrApproval, now: dt.datetime,
             lang: Language) -> str:
    """What Seerr's answer to the decision says: gone (404), decided meanwhile (409),
    not the admin's to decide (403); anything else is raised (it did not answer)."""
    if exc.kind == "not_found":
        return _gone(row, now, lang)
    if exc.kind == "duplicate":   # decided meanwhile: Seerr's record says by whom
        current = client.get_request(row.seerr_request)
        if current.status != RequestStatus.PENDING:
            return _decided_in_seerr(client, row, current, now, lang)
    if exc.kind == "forbidden":
        return lang.gettext("Seerr refused: your Seerr user needs the Manage Requests "
                            "permission to decide request {number} ({title}). An "
                            "admin can grant it in Seerr's Users settings.",
                            number=row.id, title=row.title)
    raise exc


def _gone(row: db.SeerrApproval, now: dt.datetime, lang: Language) -> str:
    """Seerr has no such request any more (cancelled or removed there): the row closes,
    as the sweep closes it."""
    _close(row, ApprovalStatus.DENIED, now)
    log.info("Seerr request %s is no longer in Seerr; its approval is closed",
             row.seerr_request)
    return lang.gettext("Request {number} ({title}) is no longer in Seerr: it was "
                        "cancelled or removed there, so there is nothing to decide.",
                        number=row.id, title=row.title)


def _decided_in_seerr(client: SeerrClient, row: db.SeerrApproval, request: SeerrRequest,
                      now: dt.datetime, lang: Language) -> str:
    """Seerr says it was decided: the row closes, and the admin hears by whom when Seerr
    names who (``modifiedBy``)."""
    settle(request, now)
    closed = db.SeerrApproval.get_by_id(row.id)
    if closed.decided_by is not None or request.modified_by is None:
        return house_rules.already_decided(lang, closed)
    fields = {"number": row.id, "title": row.title,
              "name": seerr_name(client, lang, request.modified_by)}
    if closed.status == ApprovalStatus.DENIED:
        return lang.gettext("Request {number} ({title}) was already denied by {name}.",
                            **fields)
    return lang.gettext("Request {number} ({title}) was already approved by {name}.",
                        **fields)


def waiting_row(request_id: int) -> db.SeerrApproval | None:
    return db.SeerrApproval.get_or_none(db.SeerrApproval.seerr_request == request_id,
                                        db.SeerrApproval.status == ApprovalStatus.WAITING)


def _claim(row: db.SeerrApproval, admin: Person, verdict: Verdict, now: dt.datetime) -> bool:
    status = ApprovalStatus.APPROVED if verdict == Verdict.APPROVE else ApprovalStatus.DENIED
    return db.SeerrApproval.update(status=status, decided_by=admin.id, decided_at=now).where(
        db.SeerrApproval.id == row.id,
        db.SeerrApproval.status == ApprovalStatus.WAITING).execute() == 1


def _unclaim(row: db.SeerrApproval, admin: Person) -> None:
    """Seerr refused the admin's answer: the request waits again for someone who can."""
    db.SeerrApproval.update(status=ApprovalStatus.WAITING, decided_by=None,
                            decided_at=None).where(
        db.SeerrApproval.id == row.id, db.SeerrApproval.decided_by == admin.id).execute()


def _close(row: db.SeerrApproval, status: ApprovalStatus, now: dt.datetime) -> bool:
    return db.SeerrApproval.update(status=status, decided_at=now).where(
        db.SeerrApproval.id == row.id,
        db.SeerrApproval.status == ApprovalStatus.WAITING).execute() == 1



def highest_number() -> int:
    """The highest Seerr approval number in use (0 when none; ``front.next_number``)."""
    return int(db.SeerrApproval.select(pw.fn.MAX(db.SeerrApproval.id)).scalar() or 0)


def still_waiting(number: int) -> bool:
    """Does Seerr approval ``number``, which an approval text asks about (its
    ``outbox.subject``), still wait? False once closed: then the text, if held, is
    withdrawn."""
    return db.SeerrApproval.select().where(
        db.SeerrApproval.id == number,
        db.SeerrApproval.status == ApprovalStatus.WAITING).exists()
