"""What Seerr's notifications become: texts to the requester (and, for failures, the admins).

Seerr's webhook names the request (``request_id``) but not who asked: no phone, no user id.
So every event but the test is looked up in Seerr (``GET /request/{id}``), and its
``requestedBy`` is matched to a household member by their link (``seerr_user``); a
requester who is nobody here gets no text (a failure still reaches the admins).

- MEDIA_PENDING: the admins are asked (``seerr_requests``).
- MEDIA_APPROVED / MEDIA_AUTO_APPROVED / MEDIA_DECLINED: the approval is closed, and the
  member's request is remembered (``requests``), so Radarr's or Sonarr's own webhook tells
  them when it lands. Approved and declined are texted to the member ("Alex approved ...");
  an auto-approval is not (they were told when they asked).
- MEDIA_AVAILABLE (Seerr's "partly available" is this with media status
  PARTIALLY_AVAILABLE): the "ready" text, with Seerr's link to the title on Plex or
  Jellyfin when ``[seerr] link_to_library`` allows it.
- MEDIA_FAILED: the member and every admin.

Each text has an outbox dedupe key, so a repeated post (Seerr re-notifies when a request is
approved twice) texts once. A film's "ready" shares its key and its told mark with Radarr's
import notice (``notices.movie_ready_key``, ``wanted.claim_told``), so with both webhooks
connected the same download is texted once, by whichever comes first. For a series Sonarr's
episode texts win: Seerr's "ready" goes only when Sonarr's webhook has announced nothing to
that requester (a household without Sonarr's webhook).
"""

import datetime as dt
import logging

from mediabot.approvals.house_rules import name_of
from mediabot.approvals.seerr_members import member_for, seerr_label
from mediabot.approvals.seerr_requests import SeerrApprovals, event_key, remember_request
from mediabot.arr import notices, wanted
from mediabot.arr.tools.base import Service
from mediabot.arr.tools.format import sms_safe_title
from mediabot.seerr.api import SeerrClient, SeerrRequest
from mediabot.seerr.api.payload import Kind, SeerrNotification
from mediabot.store import db, users
from mediabot.text.localtime import Clock

log = logging.getLogger(__name__)


class SeerrNotices:
    """Seerr's notifications in, texts out (through ``approvals.notify``, the outbox)."""

    def __init__(self, client: SeerrClient, approvals: SeerrApprovals, *,
                 link_to_library: bool = False, clock: Clock = db.utcnow) -> None:
        self.client = client
        self.approvals = approvals
        self.link_to_library = link_to_library
        self.clock = clock

    def handle(self, note: SeerrNotification) -> str:
        """Act on one checked notification; a word for the response and the log."""
        if note.kind == Kind.TEST:
            log.info("/hooks/seerr: test notification received")
            return "test ok"
        if note.kind == Kind.OTHER or note.request_id is None:
            return "ignored"
        now = self.clock()
        if note.kind == Kind.PENDING:
            return self.approvals.ask(note.request_id, now, _title(note))
        request = self.client.get_request(note.request_id)
        if note.kind in (Kind.APPROVED, Kind.AUTO_APPROVED, Kind.DECLINED):
            return self._decided(note, request, now)
        if note.kind == Kind.AVAILABLE:
            return self._available(note, request, now)
        return self._failed(note, request)

    def _decided(self, note: SeerrNotification, request: SeerrRequest,
                 now: dt.datetime) -> str:
        self.approvals.settle(request, now)
        member = member_for(self.client, request.requested_by)
        if member is None:
            return "requester not in the household"
        if note.kind != Kind.DECLINED:
            self._remember(member, note, request, now)
        if note.kind == Kind.AUTO_APPROVED:
            return "remembered"
        modifier = request.modified_by
        decider = member_for(self.client, modifier) if modifier is not None else None
        by = (name_of(decider) if decider is not None else
              seerr_label(modifier) if modifier is not None else "Seerr")
        self.approvals.tell_decision(member, note.kind == Kind.APPROVED, request.id,
                                     _title(note), by,
                                     outsider=modifier is not None and decider is None)
        return "told"

    def _remember(self, member: db.User, note: SeerrNotification, request: SeerrRequest,
                  now: dt.datetime) -> db.Request | None:
        return remember_request(member, request, _title(note), now,
                                _service_of(note, request)[1])

    def _available(self, note: SeerrNotification, request: SeerrRequest,
                   now: dt.datetime) -> str:
        """The requester, and every other member who was told they would hear (an add
        Seerr answered "already requested", a "text me when it's ready"), each once."""
        member = member_for(self.client, request.requested_by)
        told = self._tell_requester(member, note, request, now) if member is not None else 0
        service, external = _service_of(note, request)
        others = [] if external is None else [
            req for req in wanted.requests_for(service, external, untold=True)
            if member is None or req.user.id != member.id]
        for req in others:
            if (service == Service.SONARR and notices.told_by_sonarr(req)) or \
                    not wanted.claim_told(req.id, now):
                continue
            key = (notices.movie_ready_key(req) if service == Service.RADARR else
                   f"{event_key(request.id, note.notification_type)}:{req.user.id}")
            self.approvals.notify_member(req.user, self._ready_text(req.user, note, request),
                                         key)
            told += 1
        if not told:
            return "already told" if member is not None else "requester not in the household"
        return "told" if told == 1 else f"told {told}"

    def _tell_requester(self, member: db.User, note: SeerrNotification,
                        request: SeerrRequest, now: dt.datetime) -> int:
        req = self._remember(member, note, request, now)
        if req is not None and req.service == Service.RADARR:
            if not wanted.claim_told(req.id, now):
                return 0
            key, kind, subject = notices.movie_ready_key(req), db.TextKind.READY, req.id
        elif req is not None and notices.told_by_sonarr(req):
            return 0
        else:
            key, kind, subject = (event_key(request.id, note.notification_type),
                                  db.TextKind.OTHER, None)
        self.approvals.notify_member(member, self._ready_text(member, note, request), key,
                                     kind=kind, subject=subject)
        return 1

    def _ready_text(self, member: db.User, note: SeerrNotification,
                    request: SeerrRequest) -> str:
        lang, title = self.approvals.speaks(member), _title(note)
        link = self._link(request) if self.link_to_library else None
        if request.media_type == "tv" and request.seasons:
            seasons = ", ".join(str(n) for n in sorted(request.seasons))
            text = lang.ngettext("{title}: season {seasons} is ready to watch.",
                                 "{title}: seasons {seasons} are ready to watch.",
                                 len(request.seasons), title=title, seasons=seasons)
        else:
            text = lang.gettext("{title} is ready to watch.", title=title)
        return text + (" " + link if link else "")

    def _link(self, request: SeerrRequest) -> str | None:
        """Seerr's link to the title on Plex or Jellyfin, when Seerr knows one."""
        if not request.tmdb_id or request.media_type not in ("movie", "tv"):
            return None
        media = self.client.media("movie" if request.media_type == "movie" else "tv",
                                  request.tmdb_id)
        url = media.media_url or ""
        return url if url.startswith(("https://", "http://")) and len(url) < 300 else None

    def _failed(self, note: SeerrNotification, request: SeerrRequest) -> str:
        """The requester and every admin, each once: an admin's own request is told them as
        an admin."""
        title, member = _title(note), member_for(self.client, request.requested_by)
        admins = users.active_admins()
        told = 0
        if member is not None and member.id not in {a.id for a in admins}:
            self.approvals.notify_member(member, self.approvals.speaks(member).gettext(
                "{title} could not be requested: Seerr couldn't pass it on to Radarr or "
                "Sonarr. The admins have been told.", title=title),
                event_key(request.id, note.notification_type))
            told += 1
        fields = {"title": title, "number": request.id, "name": name_of(member) if member
                  else seerr_label(request.requested_by)}
        for admin in admins:
            lang = self.approvals.speaks(admin)
            self.approvals.notify_member(admin, lang.gettext(
                "Seerr couldn't pass {name}'s request for {title} on to Radarr or Sonarr "
                "(Seerr request {number} failed). Retry it in Seerr.", **fields)
                if member else lang.gettext(
                "Seerr couldn't pass a request for {title} by a Seerr user, {name}, on to "
                "Radarr or Sonarr (Seerr request {number} failed). Retry it in Seerr.",
                **fields), f"{event_key(request.id, note.notification_type)}:{admin.id}")
            told += 1
        return f"told {told}"


def _title(note: SeerrNotification) -> str:
    """Seerr's subject ("Dune: Part Two (2024)") as it may stand in a text."""
    return sms_safe_title(note.subject)


def _service_of(note: SeerrNotification,
                request: SeerrRequest) -> tuple[Service, int | None]:
    if (note.media_type or request.media_type) == "tv":
        return Service.SONARR, note.tvdb_id or request.tvdb_id
    return Service.RADARR, note.tmdb_id or request.tmdb_id
