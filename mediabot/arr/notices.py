"""What to tell whom when Sonarr/Radarr import something: "Dune: Part Two is ready to watch."

A movie import texts each requester once. Episode imports of a series are gathered for
``burst_seconds`` in a stored notice and sent as one text per requester ("Severance:
S02E01-E03 are ready.") by the scheduler's ``send_due`` job, so a restart loses no notice.
Sending goes through the outbox with a dedupe key, so an event delivered twice never texts
twice.

Upgrades are never announced. Sonarr says so per file (``isUpgrade``), but its v4 "On Import
Complete" for the whole download has no such flag, so for it mediabot decides from what it
knows: the episodes that download's per-file events already reported (stored by download id
in ``imports``, upgrade or not) are left out, and each requester is told only of episodes not
yet announced to them (stored in ``announced``), which also covers a Sonarr that sends only
On Import Complete. A per-file import that is *not* an upgrade means Sonarr had no file for
the episode, and a deleted file (other than for an upgrade) means it is gone: either way an
earlier announcement of it no longer stands and is forgotten. A per-file event delivered
twice (same download id and episode) is acted on once.
"""

import datetime as dt
import json
import logging
from collections import defaultdict
from dataclasses import dataclass
from typing import Protocol

from peewee import chunked

from mediabot.arr import wanted
from mediabot.arr.events import ArrEvent
from mediabot.arr.tools.base import Service
from mediabot.arr.tools.format import episode_code, sms_safe_title
from mediabot.config import SmsConfig
from mediabot.store import db
from mediabot.store.people import Person, person_of
from mediabot.text.language import Language
from mediabot.text.localtime import Clock

log = logging.getLogger(__name__)
BURST_SECONDS = 60.0
IMPORT_MEMORY = dt.timedelta(days=7)
FAR_FUTURE = dt.datetime(9999, 1, 1)


Episodes = set[tuple[int, int]]   # (season, episode) pairs


class NoticeSender(Protocol):
    """What notices use of the outbox's sender (the mailbox's ``Sender`` is the one): queue
    a text once per ``dedupe_key``, saying what it is and which request it is about (the
    row, or None when nothing is to be sent), then send a queued row."""

    def enqueue(self, to: Person, body: str, /, *, dedupe_key: str | None = ...,
                shape: bool = ...,
                kind: db.TextKind = ..., subject: int | None = ...) -> db.Outbox | None: ...

    def deliver(self, row_id: int, /) -> object: ...


@dataclass(frozen=True)
class Item:
    service: Service
    external_id: int
    title: str


class Notices:
    """Download events in, "ready to watch" texts out, each requester told once."""

    def __init__(self, sms_config: SmsConfig, sender: NoticeSender, *, clock: Clock = db.utcnow,
                 burst_seconds: float = BURST_SECONDS) -> None:
        self.sms_config = sms_config
        self.sender = sender
        self.clock = clock
        self.burst_seconds = burst_seconds
        self._closed = False

    # -- events -----------------------------------------------------------------------------

    def movie_imported(self, event: ArrEvent) -> str:
        if event.upgrade:
            return "upgrade ignored"
        return self._record(Item(Service.RADARR, event.external_id, _safe(event.title)), set())

    def episodes_imported(self, event: ArrEvent) -> str:
        """A per-file import (upgrade True/False) or a whole download (upgrade None)."""
        episodes = set(event.episodes)
        if event.upgrade is None:  # On Import Complete: leave out what per-file events told
            if event.download_id:
                episodes -= set(_imported_by(event.download_id))
        elif event.download_id:  # a repeated delivery claims nothing
            episodes = self._claim_imports(event.download_id, episodes, event.upgrade)
        if event.upgrade:
            return "upgrade ignored"
        if event.upgrade is False:
            _forget_announced(event.external_id, episodes)
        if not episodes:
            return "ignored (no new episodes)"
        return self._record(Item(Service.SONARR, event.external_id, _safe(event.title)), episodes)

    def episode_files_deleted(self, event: ArrEvent) -> str:
        if event.delete_reason == "upgrade":  # a better file replaces it: still announced
            return "ignored (upgrade)"
        _forget_announced(event.external_id, set(event.episodes))
        return "forgotten"

    def forget(self, service: Service, external_id: int) -> str:
        """The series or movie was removed: its requests (and what they were told) go."""
        wanted.forget_title(service, external_id)
        return "forgotten"

    def _claim_imports(self, download_id: str, episodes: Episodes, upgrade: bool) -> Episodes:
        """Record a per-file event's episodes under its download id; returns those not
        recorded before. Each is one INSERT OR IGNORE, so of two deliveries of the same
        event, even at the same moment, only one claims an episode."""
        now = self.clock()
        claimed = set()
        with db.database.atomic():
            db.Import.delete().where(db.Import.seen_at < now - IMPORT_MEMORY).execute()
            for season, episode in sorted(episodes):
                cursor = db.database.execute_sql(
                    "INSERT OR IGNORE INTO imports (service, download_id, season, episode, "
                    "upgrade, seen_at) VALUES ('sonarr', ?, ?, ?, ?, ?)",
                    (download_id, season, episode, upgrade, str(now)))
                if cursor.rowcount:
                    claimed.add((season, episode))
        return claimed

    def _record(self, item: Item, episodes: Episodes) -> str:
        """Store the notice (episodes join an unsent one for the same series), then send
        whatever is due. Stored first, so a crash before sending loses nothing."""
        if not wanted.requests_for(item.service, item.external_id).exists():
            return "nobody asked"
        now = self.clock()
        gather = item.service == Service.SONARR and self.burst_seconds > 0 and not self._closed
        with db.database.atomic():
            notice = db.Notice.get_or_none(
                db.Notice.service == item.service, db.Notice.external_id == item.external_id,
                db.Notice.sent_at.is_null()) if gather else None
            if notice is None:
                due = now + dt.timedelta(seconds=self.burst_seconds if gather else 0)
                notice = db.Notice.create(service=item.service, external_id=item.external_id,
                                          title=item.title, created_at=now, due_at=due)
            stored = {tuple(pair) for pair in json.loads(notice.episodes)}
            notice.episodes = json.dumps(sorted(stored | episodes))
            notice.save()
        return f"notified {self.send_due(now)}" if not gather else "gathering"

    # -- sending ----------------------------------------------------------------------------

    def close(self) -> int:
        """At shutdown: send what is gathering now, and tell later imports at once."""
        self._closed = True
        return self.flush()

    def flush(self) -> int:
        """Send every unsent notice, due or not; returns texts sent."""
        return self.send_due(FAR_FUTURE)

    def send_due(self, now: dt.datetime | None = None) -> int:
        """Send the notices due by ``now`` (the scheduler's job); returns texts sent.

        Claiming a notice and queueing its texts in the outbox is one transaction: after a
        crash either the notice is still unsent or every text is in the outbox.
        """
        now = now or self.clock()
        with db.database.connection_context():
            due = list(db.Notice.select().where(db.Notice.sent_at.is_null(),
                                                db.Notice.due_at <= now).order_by(db.Notice.id))
            rows = [row for notice in due for row in self._queue_texts(notice)]
            for row in rows:
                self.sender.deliver(row.id)
        return len(rows)

    def _queue_texts(self, notice: db.Notice) -> list[db.Outbox]:
        with db.database.atomic():
            claimed = db.Notice.update(sent_at=self.clock()).where(
                db.Notice.id == notice.id, db.Notice.sent_at.is_null()).execute()
            if not claimed:
                return []
            episodes = {tuple(pair) for pair in json.loads(notice.episodes)}
            asked = wanted.requests_for(notice.service, notice.external_id,
                                          untold=not episodes)  # a movie: told once
            rows = [row for req in asked if (row := self._tell(req, notice, episodes))]
        log.info("%s import of %s: %d requester(s) told", notice.service, notice.external_id,
                 len(rows))
        return [row for row in rows if row.status == db.OutboxStatus.PENDING]

    def _tell(self, req: db.Request, notice: db.Notice, episodes: Episodes) -> db.Outbox | None:
        """Queue one requester's text: only the episodes not yet announced to them."""
        fresh = episodes - _announced_to(req) if episodes else episodes
        if episodes and not fresh:
            log.info("request %s: every episode was already announced; not told", req.id)
            return None
        title = _safe(notice.title) or sms_safe_title(req.title, fallback="")
        user = person_of(req.user, self.sms_config.language)   # the notice's one read
        text, tag = notice_text(user.language, title, fresh)
        wanted.mark_told(req.id, self.clock())
        _remember_announced(req, fresh, self.clock())
        if user.opted_out:
            log.info("request %s: user %s opted out; not told", req.id, user.id)
            return None
        key = ready_key(req, notice.id, tag) if episodes else movie_ready_key(req)
        return self.sender.enqueue(user, text, dedupe_key=key, shape=True,
                                   kind=db.TextKind.READY, subject=req.id)


def ready_key(req: db.Request, notice_id: int, tag: str) -> str:
    """The outbox dedupe_key of one requester's notice: one text per request, notice and
    set of episodes, however often the event is delivered."""
    return f"ready:{req.service}:{req.id}:{req.created_at.isoformat()}:{notice_id}:{tag}"[:255]


def movie_ready_key(req: db.Request) -> str:
    """A film is announced once per request, whoever tells: Radarr's import or Seerr's
    MEDIA_AVAILABLE share this key, so the same download never texts twice."""
    return ready_key(req, 0, "")


def told_by_sonarr(req: db.Request) -> bool:
    """Has Sonarr's webhook announced episodes of this series to this requester, or is a
    notice of them gathering? Then Seerr's MEDIA_AVAILABLE for it stays quiet."""
    gathering = db.Notice.select().where(db.Notice.service == req.service,
                                         db.Notice.external_id == req.external_id,
                                         db.Notice.sent_at.is_null()).exists()
    return gathering or db.Announced.select().where(db.Announced.request == req.id).exists()


def still_wanted(request_id: int) -> bool:
    """Is the request a "ready" text tells about (its ``outbox.subject``) still kept? False
    once its title left the library (``forget``): then the notice, if held, is withdrawn."""
    return wanted.still_kept(request_id)


# -- what was announced and what only upgraded ---------------------------------------------

def _announced_to(req: db.Request) -> Episodes:
    query = db.Announced.select(db.Announced.season, db.Announced.episode).where(
        db.Announced.request == req.id)
    return {(row.season, row.episode) for row in query}


def _remember_announced(req: db.Request, episodes: Episodes, now: dt.datetime) -> None:
    rows = [{"request": req.id, "season": season, "episode": episode, "announced_at": now}
            for season, episode in sorted(episodes)]
    for batch in chunked(rows, 100):
        db.Announced.insert_many(batch).on_conflict_ignore().execute()


def _forget_announced(tvdb_id: int, episodes: Episodes) -> None:
    asked = wanted.series_request_ids(tvdb_id)
    for season, episode in episodes:
        db.Announced.delete().where(db.Announced.request.in_(asked),
                                    db.Announced.season == season,
                                    db.Announced.episode == episode).execute()


def _imported_by(download_id: str) -> dict[tuple[int, int], bool]:
    """The episodes a download's per-file events reported, each with its isUpgrade."""
    query = db.Import.select(db.Import.season, db.Import.episode, db.Import.upgrade).where(
        db.Import.service == Service.SONARR, db.Import.download_id == download_id)
    return {(row.season, row.episode): row.upgrade for row in query}


# -- the text --------------------------------------------------------------------------------

def _safe(title: str) -> str:
    """The payload's title as it may stand in a text; "" when nothing of it is left."""
    return sms_safe_title(title, fallback="")


def notice_text(lang: Language, title: str, episodes: Episodes) -> tuple[str, str]:
    """The text in the requester's language, and the dedupe tag: 'Dune is ready to watch.' /
    'X: S02E01-E03 are ready.'. With no title left (the payload's and the request's were
    empty or all links), the sentence says "something you asked for" in its own words."""
    if not episodes:
        text = (lang.gettext("{title} is ready to watch.", title=title) if title else
                lang.gettext("Something you asked for is ready to watch."))
        return text, ""
    ranges = episode_ranges(episodes)
    if not title:
        return lang.ngettext("Something you asked for: {episodes} is ready.",
                             "Something you asked for: {episodes} are ready.",
                             len(episodes), episodes=ranges), ranges
    return lang.ngettext("{title}: {episodes} is ready.", "{title}: {episodes} are ready.",
                         len(episodes), title=title, episodes=ranges), ranges


def episode_ranges(episodes: Episodes) -> str:
    """{(2,1),(2,2),(2,3),(3,1)} -> 'S02E01-E03, S03E01' (consecutive episodes joined)."""
    by_season: defaultdict[int, list[int]] = defaultdict(list)
    for season, episode in sorted(episodes):
        by_season[season].append(episode)
    parts = []
    for season, numbers in by_season.items():
        start = prev = numbers[0]
        for number in numbers[1:] + [None]:
            if number is not None and number == prev + 1:
                prev = number
                continue
            parts.append(episode_code(season, start) + (f"-E{prev:02d}" if prev != start else ""))
            if number is not None:
                start = prev = number
    return ", ".join(parts)
