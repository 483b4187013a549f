"""Sonarr/Radarr "Connect -> Webhook": tell whoever asked that it is ready to watch.

``POST /hooks/radarr`` and ``/hooks/sonarr`` take the apps' own webhook JSON, authenticated
by HTTP Basic with ``[notifications] webhook_secret`` as the password (refused entirely
while no secret is set). A movie import texts each requester once. Episode imports of a
series are gathered for ``burst_seconds`` in a stored notice and sent as one text per
requester ("Severance: S02E01-E03 are ready.") by the scheduler's ``send_due`` job, so a
restart loses no notice. Upgrades notify nobody. Sending goes through the outbox with a
dedupe key, so a hook delivered twice never texts twice.
"""

import datetime as dt
import hmac
import json
import logging
from collections import defaultdict
from dataclasses import dataclass

from flask import jsonify, request

from . import db
from .sms import format_reply_for
from .tools.format import episode_code

log = logging.getLogger(__name__)
BURST_SECONDS = 60.0


class Hooks:
    def __init__(self, config, sender, *, clock=db.utcnow, burst_seconds: float = BURST_SECONDS):
        self.config = config
        self.sender = sender
        self.clock = clock
        self.burst_seconds = burst_seconds
        self._closed = False

    def init_app(self, app) -> None:
        app.add_url_rule("/hooks/<service>", "hooks", self._endpoint, methods=["POST"])

    # -- HTTP -------------------------------------------------------------------------------

    def _endpoint(self, service: str):
        if service not in ("sonarr", "radarr"):
            return jsonify({"error": "unknown hook; use /hooks/sonarr or /hooks/radarr"}), 404
        refusal = self._refusal()
        if refusal:
            return refusal
        payload = request.get_json(force=True, silent=True)
        if not isinstance(payload, dict) or not isinstance(payload.get("eventType"), str):
            log.warning("/hooks/%s: malformed payload", service)
            return jsonify({"error": "expected Sonarr/Radarr webhook JSON with eventType"}), 400
        try:
            outcome = self.handle(service, payload)
        except (KeyError, TypeError, ValueError) as exc:
            log.warning("/hooks/%s: %s payload missing %s", service, payload["eventType"], exc)
            return jsonify({"error": f"malformed {payload['eventType']} payload"}), 400
        return jsonify({"ok": True, "result": outcome}), 200

    def _refusal(self):
        secret = self.config.notifications.webhook_secret
        if not secret:
            return jsonify({"error": "hooks are off: set [notifications] webhook_secret"}), 403
        auth = request.authorization
        given = (auth.password or "") if auth and auth.type == "basic" else ""
        if not hmac.compare_digest(given.encode(), secret.encode()):
            log.warning("/hooks: rejected a request with a wrong or missing password")
            response = jsonify({"error": "wrong or missing webhook password"})
            response.headers["WWW-Authenticate"] = 'Basic realm="mediabot"'
            return response, 401
        return None

    # -- events -----------------------------------------------------------------------------

    def handle(self, service: str, payload: dict) -> str:
        """Act on one webhook event; returns a word for the response and the log."""
        event = payload["eventType"]
        if event == "Test":
            log.info("/hooks/%s: test event received", service)
            return "test ok"
        if event in ("SeriesDelete", "MovieDelete"):
            return self._forget(service, payload)
        if event != "Download":
            return "ignored"
        if payload.get("isUpgrade"):
            return "upgrade ignored"
        if service == "radarr":
            return self._movie_ready(payload["movie"])
        return self._episodes_ready(payload["series"], payload["episodes"])

    def _forget(self, service: str, payload: dict) -> str:
        item = payload["movie" if service == "radarr" else "series"]
        external = int(item["tmdbId" if service == "radarr" else "tvdbId"])
        db.Request.delete().where(db.Request.service == service,
                                  db.Request.external_id == external).execute()
        return "forgotten"

    def _movie_ready(self, movie: dict) -> str:
        return self._record(Item("radarr", int(movie["tmdbId"]), movie["title"]), set())

    def _episodes_ready(self, series: dict, episodes: list[dict]) -> str:
        numbers = {(int(e["seasonNumber"]), int(e["episodeNumber"])) for e in episodes}
        if not numbers:
            return "ignored (no episodes)"
        return self._record(Item("sonarr", int(series["tvdbId"]), series["title"]), numbers)

    def _record(self, item: "Item", episodes: set) -> str:
        """Store the notice (episodes join an unsent one for the same series), then send
        whatever is due. Stored first, so a crash before sending loses nothing."""
        if not _open_requests(item.service, item.external_id).exists():
            return "nobody asked"
        now = self.clock()
        gather = item.service == "sonarr" and self.burst_seconds > 0 and not self._closed
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
            requests = _open_requests(notice.service, notice.external_id)
            episodes = {tuple(pair) for pair in json.loads(notice.episodes)}
            if not episodes:  # a movie: each requester is told once
                requests = requests.where(db.Request.notified_at.is_null())
            text, tag = _notice_text(notice.title, episodes)
            rows = [row for req in requests if (row := self._queue_text(req, text, tag))]
        log.info("%s import of %s: %d requester(s) told", notice.service, notice.external_id,
                 len(rows))
        return [row for row in rows if row.status == "pending"]

    def _queue_text(self, req: db.Request, text: str, tag: str) -> db.Outbox | None:
        db.Request.update(notified_at=self.clock()).where(db.Request.id == req.id).execute()
        user = req.user
        if user.opted_out:
            log.info("request %s: user %s opted out; not told", req.id, user.id)
            return None
        key = f"ready:{req.service}:{req.id}:{req.created_at.isoformat()}:{tag}"
        return self.sender.enqueue(user.phone, format_reply_for(self.config.sms, text),
                                   user_id=user.id, dedupe_key=key[:255])


@dataclass(frozen=True)
class Item:
    service: str
    external_id: int
    title: str


FAR_FUTURE = dt.datetime(9999, 1, 1)


def _notice_text(title: str, episodes: set) -> tuple[str, str]:
    """The text and the dedupe tag: 'Dune is ready to watch.' / 'X: S02E01-E03 are ready.'"""
    if not episodes:
        return f"{title} is ready to watch.", ""
    ranges = episode_ranges(episodes)
    return f"{title}: {ranges} {'is' if len(episodes) == 1 else 'are'} ready.", ranges


def _open_requests(service: str, external_id: int):
    return (db.Request.select(db.Request, db.User).join(db.User)
            .where(db.Request.service == service, db.Request.external_id == external_id))


def episode_ranges(episodes: set[tuple[int, int]]) -> str:
    """{(2,1),(2,2),(2,3),(3,1)} -> 'S02E01-E03, S03E01' (consecutive episodes joined)."""
    by_season = defaultdict(list)
    for season, number in sorted(episodes):
        by_season[season].append(number)
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
