"""Sonarr/Radarr "Connect -> Webhook": tell whoever asked that it is ready to watch.

``POST /hooks/radarr`` and ``/hooks/sonarr`` take the apps' own webhook JSON, authenticated
by HTTP Basic with ``[notifications] webhook_secret`` as the password (refused entirely
while no secret is set). A movie import texts each requester once. Episode imports of a
series are gathered for ``burst_seconds`` and sent as one text per requester ("Severance:
S02E01-E03 are ready."). Upgrades notify nobody. Sending goes through the outbox with a
dedupe key, so a hook delivered twice never texts twice.
"""

import hmac
import logging
import threading
from collections import defaultdict

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
        self._lock = threading.Lock()
        self._bursts: dict[int, dict] = {}
        self._timers: dict[int, threading.Timer] = {}
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
        tmdb_id, title = int(movie["tmdbId"]), movie["title"]
        requests = _open_requests("radarr", tmdb_id).where(db.Request.notified_at.is_null())
        sent = self._tell_all(requests, f"{title} is ready to watch.")
        log.info("radarr import of tmdb %s: %d requester(s) told", tmdb_id, sent)
        return f"notified {sent}"

    def _episodes_ready(self, series: dict, episodes: list[dict]) -> str:
        key = int(series["tvdbId"])
        numbers = {(int(e["seasonNumber"]), int(e["episodeNumber"])) for e in episodes}
        if not numbers:
            return "ignored (no episodes)"
        with self._lock:
            burst = self._bursts.setdefault(key, {"title": series["title"], "episodes": set()})
            burst["episodes"] |= numbers
            gather = self.burst_seconds > 0 and not self._closed
            if key not in self._timers and gather:
                timer = threading.Timer(self.burst_seconds, self.flush, args=(key,))
                timer.daemon = True
                self._timers[key] = timer
                timer.start()
        if not gather:
            self.flush(key)
        return "gathering"

    def close(self) -> int:
        """At shutdown: send what is being gathered, and tell later imports at once (a
        burst timer would never fire in an exiting process). Returns texts sent."""
        with self._lock:
            self._closed = True
        return self.flush()

    def flush(self, key: int | None = None) -> int:
        """Send the gathered episode notices (of one series, or all); returns texts sent."""
        with self._lock:
            keys = [key] if key is not None else list(self._bursts)
            bursts = {k: self._bursts.pop(k) for k in keys if k in self._bursts}
            for k in keys:
                timer = self._timers.pop(k, None)
                if timer is not None:
                    timer.cancel()
        sent = 0
        with db.database.connection_context():
            for tvdb_id, burst in bursts.items():
                episodes = episode_ranges(burst["episodes"])
                verb = "is" if len(burst["episodes"]) == 1 else "are"
                sent += self._tell_all(_open_requests("sonarr", tvdb_id),
                                       f"{burst['title']}: {episodes} {verb} ready.", tag=episodes)
        return sent

    def _tell_all(self, requests, text: str, tag: str = "") -> int:
        """Text each request's user and mark the request notified; returns texts sent."""
        sent = 0
        for req in requests:
            sent += self._tell(req, text, tag)
            db.Request.update(notified_at=self.clock()).where(db.Request.id == req.id).execute()
        return sent

    def _tell(self, req: db.Request, text: str, tag: str) -> int:
        user = req.user
        if user.opted_out:
            log.info("request %s: user %s opted out; not told", req.id, user.id)
            return 0
        key = f"ready:{req.service}:{req.id}:{req.created_at.isoformat()}:{tag}"
        row = self.sender.send(user.phone, format_reply_for(self.config.sms, text),
                               user_id=user.id, dedupe_key=key[:255])
        return 1 if row is not None else 0


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
