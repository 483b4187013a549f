"""Household rules for adds: admin approval of members' adds, and weekly quotas.

``[requests] approval = "members"`` holds a member's add as an ``Approval`` row instead of
sending it to Sonarr/Radarr; every admin gets one text naming who asked for what and the
words to answer with ("Reply APPROVE 12 or DENY 12"). The answer is read without the model,
like Y/N: the first admin's answer wins (one conditional UPDATE decides it), a second is told
it was already decided, and an unanswered request expires after ``approval_ttl_hours``.
Everything is in the database, so a restart in between loses nothing. As with a removal's
Y, an admin's answer counts only for a request that admin was actually asked: their text
about it was accepted by Twilio before the answer arrived, and not reported undelivered.

``movies_per_week`` / ``seasons_per_week`` (0 = unlimited) count what was added and what
waits for approval, Monday to Sunday in the household's time zone (``wanted.used_since``:
a "tell me when it's ready" never counts). Admins are exempt from both rules.

A title asked for again while it waits is not asked again: one waiting approval per person
and title, one text to the admins, counted once. When no admin can be texted (none set up,
or all have texted STOP) nothing waits: the add is refused, saying nobody can approve it now.
"""

import datetime as dt
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import peewee as pw

from mediabot.arr.tools import AddRequest, ToolError
from mediabot.arr.wanted import used_since, week_start
from mediabot.config import RequestsConfig
from mediabot.mailbox import outbox
from mediabot.store import db, users
from mediabot.store.db import ApprovalStatus, TextKind
from mediabot.store.people import Person, person_of
from mediabot.text.keywords import Verdict
from mediabot.text.language import Language

log = logging.getLogger(__name__)



class Notify(Protocol):
    """How a person is texted from here: ``key`` is the text's outbox dedupe_key (it is
    queued once), ``kind`` and ``subject`` what it is and is about (``db.TextKind``)."""

    def __call__(self, person: Person, text: str, key: str | None = None,
                 kind: TextKind = TextKind.OTHER, subject: int | None = None) -> None: ...


def language_for(user: db.User | Person, household: str) -> Language:
    """The language ``user`` reads: a person read once already knows it; a row another
    table's query brought along (a request's member, an admin) is read here."""
    return user.language if isinstance(user, Person) else person_of(user, household).language


def name_of(user: db.User | Person) -> str:
    """How a text names someone: their name, else their number."""
    return user.shown_name if isinstance(user, Person) else user.display_name or user.phone


@dataclass
class HouseRules:
    config: RequestsConfig
    notify: Notify | None = None
    zone: dt.tzinfo = dt.UTC
    language: str = "en"     # the household's [sms] language; a person's own wins
    # The number a new request takes (``front.next_number``: shared with Seerr's); None:
    # this table's own next.
    numbers: Callable[[], int] | None = None

    def speaks(self, user: db.User | Person) -> Language:
        """The language ``user`` reads: their own, else the household's (a person read once
        already knows it; a row another table brought along is read here)."""
        return language_for(user, self.language)

    def applies_to(self, user: Person) -> bool:
        c = self.config
        return not user.admin and (c.approval == "members" or c.movies_per_week > 0
                                         or c.seasons_per_week > 0)

    # -- before an add ----------------------------------------------------------------

    def gate(self, user: Person, request: AddRequest, now: dt.datetime) -> dict | None:
        """Before a member's add: ToolError when over quota or when no admin can be asked;
        the "held" result when it must wait for an admin (or already does); None when it
        may run now."""
        if user.admin:
            return None
        waiting = _waiting(user, request, now)
        if waiting is not None:
            return _already_held(waiting)
        approvers = self._approvers() if self.config.approval == "members" else None
        if approvers == []:
            raise ToolError(f"not added: {request.title} needs an admin's OK, and no admin can "
                            "be asked right now (none can get texts from this number), so "
                            "nothing was added and nothing is waiting. An admin can add it.")
        self._check_quota(user, request, now)
        if approvers is None:
            return None
        return self._hold(user, request, now, approvers)

    def _check_quota(self, user: Person, request: AddRequest, now: dt.datetime) -> None:
        limit, unit, asked = ((self.config.movies_per_week, "movie", 1)
                              if request.service == "radarr"
                              else (self.config.seasons_per_week, "season", request.seasons))
        if not limit:
            return
        used = self.used_this_week(user, request.service, now)
        if used + asked <= limit:
            return
        monday = week_start(now, self.zone) + dt.timedelta(days=7)
        next_day = monday.replace(tzinfo=dt.UTC).astimezone(self.zone)
        lang = self.speaks(user)   # the model reads it; the date in the member's locale
        day = f"{next_day:%A %d %B}" if lang.code == "en" else lang.day(next_day.date())
        raise ToolError(
            f"over the weekly limit: {name_of(user)} has asked for {used} {unit}"
            f"{'s' if used != 1 else ''} this week and the household limit is {limit}"
            f"{f' (this one is {asked} seasons)' if unit == 'season' and asked > 1 else ''}; "
            f"the next is possible from {day}")

    def used_this_week(self, user: Person, service: str, now: dt.datetime) -> int:
        """Movies (radarr) or seasons (sonarr) added since Monday, waiting ones too."""
        since = week_start(now, self.zone)
        return used_since(user.id, service, since) + _waiting_since(user, service, since)

    def _approvers(self) -> list[db.User]:
        """The admins a request can be texted to: none when there is no way to text."""
        if self.notify is None:
            return []
        return users.active_admins()

    def _hold(self, user: Person, request: AddRequest, now: dt.datetime,
              admins: list[db.User]) -> dict:
        with db.database.atomic("IMMEDIATE"):   # the number is read and taken in one go
            row = db.Approval.create(
                id=(self.numbers or _next_here)(), user=user.id, service=request.service,
                external_id=request.external_id, title=request.title, tool=request.tool,
                arguments=json.dumps(request.arguments), seasons=request.seasons,
                created_at=now,
                expires_at=now + dt.timedelta(hours=self.config.approval_ttl_hours))
        title = request.title
        for admin in admins:
            text = self.speaks(admin).gettext(
                "{name} asked for {title}. Reply APPROVE {number} or DENY {number}",
                name=name_of(user), title=title, number=row.id)
            self._tell(admin, text, key=approval_key(row.id, admin.id),
                       kind=TextKind.APPROVAL, subject=row.id)
        log.info("request %s by user %s waits for approval (%d admins told)", row.id, user.id,
                 len(admins))
        return {"ok": True, "waiting_for_approval": True, "request": row.id,
                "message": f"Not added yet: {title} needs an admin's OK, and the admins have "
                           "been asked. The user will get a text when one decides."}

    # -- an admin's answer ------------------------------------------------------------

    def decide(self, admin: Person, verdict: Verdict, number: int, now: dt.datetime,
               run_add: Callable[[db.Approval], None], *, inbox_id: int | None = None) -> str:
        """Apply "APPROVE n"/"DENY n" from ``admin``; returns the reply to the admin.

        ``run_add(row)`` performs the member's add with their choices, or raises ToolError.
        ``inbox_id`` is the answer's inbox row: a request whose text to this admin Twilio had
        not accepted before it (or reported undelivered) is not theirs to decide, and nothing
        is decided. None (the terminal chat, where nothing is texted) skips that check.
        """
        row, lang = db.Approval.get_or_none(db.Approval.id == number), self.speaks(admin)
        if row is None:
            return lang.gettext("There is no request {number}.", number=number)
        asked = outbox.text_by_key(approval_key(row.id, admin.id))
        if inbox_id is not None and not outbox.seen_before(asked, inbox_id):
            log.info("user %s answered request %s without having been asked", admin.id, number)
            return lang.gettext("There is no request {number} waiting for your answer, so "
                                "nothing was decided.", number=number)
        if row.status == ApprovalStatus.WAITING and row.expires_at <= now:
            self._expire(row, now)
        if row.status != ApprovalStatus.WAITING or not self._claim(row, admin, verdict, now):
            return already_decided(lang, db.Approval.get_by_id(number))
        log.info("request %s %sd by user %s", row.id, verdict, admin.id)
        return self._answer(admin, row, verdict, run_add)

    def _answer(self, admin: Person, row: db.Approval, verdict: Verdict,
                run_add: Callable[[db.Approval], None]) -> str:
        """Tell the member the claimed verdict (and run the add), in the member's language;
        returns the reply to the admin, in the admin's."""
        member, lang, theirs = row.user, self.speaks(admin), self.speaks(row.user)
        names = {"name": name_of(admin), "title": row.title}
        told = {"number": row.id, "title": row.title, "name": name_of(member)}
        if verdict == Verdict.DENY:
            self._tell(member, theirs.gettext("{name} didn't approve {title}, so it wasn't "
                                              "added.", **names))
            return lang.gettext("Denied request {number} ({title}); {name} has been told.",
                                **told)
        try:
            run_add(row)
        except ToolError as exc:
            self._tell(member, theirs.gettext("{name} approved {title}, but it could not be "
                                              "added: {reason}", reason=exc, **names))
            return lang.gettext("Approved request {number}, but {title} could not be added: "
                                "{reason}", number=row.id, title=row.title, reason=exc)
        self._tell(member, theirs.gettext("{name} approved {title}: it's added, and I'll text "
                                          "you when it's ready.", **names))
        return lang.gettext("Approved request {number}: {title} is added. {name} has been "
                            "told.", **told)

    def _claim(self, row: db.Approval, admin: Person, verdict: Verdict,
               now: dt.datetime) -> bool:
        """The one conditional UPDATE that decides a request: True for the first answer."""
        status = ApprovalStatus.APPROVED if verdict == Verdict.APPROVE else ApprovalStatus.DENIED
        return db.Approval.update(status=status, decided_by=admin.id, decided_at=now).where(
            db.Approval.id == row.id, db.Approval.status == ApprovalStatus.WAITING).execute() == 1

    # -- expiry -----------------------------------------------------------------------

    def expire_due(self, now: dt.datetime) -> int:
        """Expire requests nobody answered in time and tell each member; the count."""
        due = list(db.Approval.select().where(db.Approval.status == ApprovalStatus.WAITING,
                                              db.Approval.expires_at <= now))
        return sum(self._expire(row, now) for row in due)

    def _expire(self, row: db.Approval, now: dt.datetime) -> bool:
        if db.Approval.update(status=ApprovalStatus.EXPIRED, decided_at=now).where(
                db.Approval.id == row.id,
                db.Approval.status == ApprovalStatus.WAITING).execute() != 1:
            return False
        row.status = ApprovalStatus.EXPIRED
        self._tell(row.user, self.speaks(row.user).gettext(
            "No admin answered about {title} in time, so it wasn't added. Ask again if you "
            "still want it.", title=row.title))
        return True

    def waiting_note(self) -> str | None:
        """For an admin's system prompt: what waits for approval, and how it is answered."""
        rows = list(db.Approval.select().where(db.Approval.status == ApprovalStatus.WAITING)
                    .order_by(db.Approval.id).limit(10))
        if not rows:
            return None
        listed = "; ".join(f"#{r.id} {name_of(r.user)}: {r.title}" for r in rows)
        return (f"Requests waiting for an admin's approval: {listed}. You cannot approve or "
                "deny them yourself: tell the admin to text APPROVE or DENY with the number.")

    def _tell(self, user: db.User, text: str, key: str | None = None,
              kind: TextKind = TextKind.OTHER, subject: int | None = None) -> None:
        if self.notify is not None and not user.opted_out:
            self.notify(person_of(user, self.language), text, key=key, kind=kind,
                        subject=subject)


def _waiting_since(user: Person, service: str, since: dt.datetime) -> int:
    """What this person's requests still waiting for approval would add: movies
    (radarr) or seasons (sonarr), counted like the adds themselves."""
    rows = db.Approval.select().where(db.Approval.user == user.id,
                                      db.Approval.service == service,
                                      db.Approval.status == ApprovalStatus.WAITING,
                                      db.Approval.created_at >= since)
    return sum(1 if service == "radarr" else row.seasons for row in rows)


def _waiting(user: Person, request: AddRequest, now: dt.datetime) -> db.Approval | None:
    """This person's request for this title that still waits for an admin, if any."""
    return db.Approval.get_or_none(
        db.Approval.user == user.id, db.Approval.service == request.service,
        db.Approval.external_id == request.external_id,
        db.Approval.status == ApprovalStatus.WAITING,
        db.Approval.expires_at > now)


def _already_held(row: db.Approval) -> dict:
    """The tool's result when the title already waits: nobody is asked again."""
    return {"ok": True, "waiting_for_approval": True, "request": row.id,
            "message": f"Not added yet: {row.title} is still waiting for an admin's OK "
                       f"(request {row.id}); the admins were already asked, so nobody was "
                       "asked again. The user will get a text when one decides."}


def already_decided(lang: Language, row: db.Approval | db.SeerrApproval) -> str:
    """The reply to an answer that came too late: who decided the request, or that it
    expired. One whole sentence per outcome, so each language words it its own way. A Seerr
    request's row (``seerr_requests``) reads the same."""
    fields = {"number": row.id, "title": row.title}
    if row.status == ApprovalStatus.EXPIRED:
        return lang.gettext("Request {number} ({title}) was already expired.", **fields)
    approved = row.status == ApprovalStatus.APPROVED
    if row.decided_by is None:
        return (lang.gettext("Request {number} ({title}) was already approved.", **fields)
                if approved else
                lang.gettext("Request {number} ({title}) was already denied.", **fields))
    fields["name"] = name_of(row.decided_by)
    return (lang.gettext("Request {number} ({title}) was already approved by {name}.", **fields)
            if approved else
            lang.gettext("Request {number} ({title}) was already denied by {name}.", **fields))


def approval_key(request: int, admin: int) -> str:
    """The outbox dedupe_key of the text asking ``admin`` about ``request``."""
    return f"approval:{request}:{admin}"


def still_waiting(number: int, now: dt.datetime) -> bool:
    """Does request ``number``, which an approval text asks about (its ``outbox.subject``),
    still wait for an answer? False once decided, expired or gone: then the text, if held,
    is withdrawn."""
    return db.Approval.select().where(db.Approval.id == number,
                                      db.Approval.status == ApprovalStatus.WAITING,
                                      db.Approval.expires_at > now).exists()


def highest_number() -> int:
    """The highest request number in use here (0 when none; ``front.next_number``)."""
    return int(db.Approval.select(pw.fn.MAX(db.Approval.id)).scalar() or 0)


def _next_here() -> int:
    return highest_number() + 1
