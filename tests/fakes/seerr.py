"""A fake Seerr (the merged Overseerr/Jellyseerr) on loopback HTTP, faithful where mediabot
depends on it, and checked against Seerr's own OpenAPI spec on every request and response.

    seerr = FakeSeerr().start()
    sam = seerr.add_user("sam", permissions=Permission.REQUEST, movie_quota=(1, 7))
    requests.post(seerr.url + "/api/v1/request", json={"mediaType": "movie", "mediaId": 693134},
                  headers={"X-Api-Key": seerr.api_key, "X-API-User": str(sam)})   # 201, pending
    seerr.approve_in_web_ui(1, as_user=1)
    seerr.set_media_status("movie", 693134, MediaStatus.AVAILABLE)   # MEDIA_AVAILABLE hook

Behaviour (``server/middleware/auth.ts`` and the modules named in ``seerr_state`` and
``seerr_routes``): ``X-Api-Key`` with the right key acts as user 1, the owner, or as the user
in ``X-API-User``; no key at all is 401 (the spec validator's), a wrong key or an unknown
``X-API-User`` is the auth middleware's 403. A request filed with the admin key is approved
by the admin's permissions even for another ``userId`` (the auto-approval trap); filed as the
member it follows theirs. Quota exceeded and blocklisted are 403, a duplicate film 409, a
series with no season left 202, approving or declining without MANAGE_REQUESTS 403.

Every request passes ``seerr_spec.check_request`` first and every answer
``seerr_spec.check_response``: a request the spec refuses is answered as Seerr's validator
answers it (400/404) and a response that breaks the spec becomes a 500; both are kept in
``violations``, which a test should find empty (``assert_clean``).

The control surface stands in for Seerr's web UI and library scans: ``add_user``,
``request_in_web_ui``, ``approve_in_web_ui``/``decline_in_web_ui``, ``set_media_status``,
``blocklist``, ``fail_request``. Each change that Seerr notifies about is recorded in
``notifications`` and, once ``configure_webhook`` is called, posted from the default
template (``seerr_webhook``) to that URL with that Authorization header, in order, on a
background thread (``wait_for_webhooks``; what was posted is in ``deliveries``).
"""

import datetime as dt
import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from werkzeug.exceptions import NotFound
from werkzeug.routing import Map, Rule
from werkzeug.wrappers import Request, Response

from mediabot.trial.sim.loopback import LoopbackServer
from tests.fakes.seerr_catalog import CATALOG, Title
from tests.fakes.seerr_routes import FORBIDDEN, SeerrRoutes
from tests.fakes.seerr_spec import SpecViolation, check_request, check_response
from tests.fakes.seerr_state import (
    MediaRequest,
    MediaStatus,
    Notification,
    Permission,
    Refusal,
    RequestStatus,
    SeerrState,
    User,
)
from tests.fakes.seerr_webhook import (
    Delivery,
    WebhookPoster,
    WebhookSettings,
    enabled,
    render,
    truncate,
)

API_KEY = "MTcwMDAwMDAwMDAwMGE1ZWVycmZha2VrZXk="   # Seerr's keys are base64 text like this
VERSION = "3.1.0"
_RULES = [("/api/v1/status", "status", "GET"), ("/api/v1/auth/me", "me", "GET"),
          ("/api/v1/user", "users", "GET"), ("/api/v1/user/<user_id>", "user", "GET"),
          ("/api/v1/user/<user_id>/quota", "quota", "GET"),
          ("/api/v1/search", "search", "GET"), ("/api/v1/movie/<tmdb_id>", "movie", "GET"),
          ("/api/v1/tv/<tmdb_id>", "tv", "GET"), ("/api/v1/request", "requests", "GET"),
          ("/api/v1/request", "file", "POST"), ("/api/v1/request/<request_id>", "one", "GET"),
          ("/api/v1/request/<request_id>/<action>", "decide", "POST")]
_EVENTS = {Notification.MEDIA_PENDING: "New {k}{t} Request",
           Notification.MEDIA_APPROVED: "{k}{t} Request Approved",
           Notification.MEDIA_DECLINED: "{k}{t} Request Declined",
           Notification.MEDIA_AUTO_APPROVED: "{k}{t} Request Automatically Approved",
           Notification.MEDIA_FAILED: "{k}{t} Request Failed",
           Notification.MEDIA_AVAILABLE: "{k}{t} Request Now Available"}


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    args: dict[str, str]
    body: Any
    api_user: str | None      # the X-API-User header as sent
    status: int


class FakeSeerr:
    def __init__(self, *, api_key: str = API_KEY, version: str = VERSION,
                 clock: Callable[[], dt.datetime] | None = None,
                 catalog: tuple[Title, ...] = CATALOG):
        self.api_key = api_key
        self.clock = clock or (lambda: dt.datetime.now(dt.UTC))
        self.state = SeerrState(catalog, self.clock, self._notify)
        self.routes = SeerrRoutes(self.state, version)
        self.calls: list[Recorded] = []
        self.violations: list[str] = []
        self.notifications: list[tuple[Notification, int]] = []
        self.webhook: WebhookSettings | None = None
        self.poster = WebhookPoster()
        self._failures: list[int] = []
        self.delay = 0.0          # seconds before each answer (for timeouts)
        self._lock = threading.RLock()
        self._map = Map([Rule(path, endpoint=name, methods=[method])
                         for path, name, method in _RULES])
        self._server = LoopbackServer(self)
        self.add_user("owner", email="owner@seerr.example", plex_username="owner",
                      permissions=Permission.ADMIN)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> "FakeSeerr":
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()
        self.poster.close()

    def down(self) -> None:
        """Stop listening (connection refused) but keep the state; ``up`` starts again."""
        self._server.stop()

    def up(self) -> None:
        self._server.start(port=self._server.port or 0)

    @property
    def url(self) -> str:
        return self._server.url

    def __enter__(self) -> "FakeSeerr":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ the web UI and scans

    def add_user(self, name: str, *, email: str | None = None, permissions: int = 0,
                 plex_username: str | None = None, local: bool = False,
                 movie_quota: tuple[int, int] | None = None,
                 tv_quota: tuple[int, int] | None = None) -> int:
        """A Seerr user; ``name`` is the username of a local user (``local``), else the
        Plex username unless ``plex_username`` is given. Quotas are (limit, days)."""
        with self._lock:
            user = User(self.state.next_id("user"), (email or f"{name}@example.com").lower(),
                        name if local else None,
                        None if local else (plex_username or name), None, 2 if local else 1,
                        int(permissions), self.clock())
            user.movie_quota_limit, user.movie_quota_days = movie_quota or (None, None)
            user.tv_quota_limit, user.tv_quota_days = tv_quota or (None, None)
            self.state.users[user.id] = user
            return user.id

    def user(self, user_id: int) -> User:
        return self.state.users[user_id]

    def request_in_web_ui(self, user_id: int, media_type: str, tmdb_id: int, *,
                          seasons: list[int] | str | None = None, is_4k: bool = False) -> int:
        """File a request as ``user_id`` signed in to the web UI; raises ``Refusal``."""
        body: dict[str, Any] = {"mediaType": media_type, "mediaId": tmdb_id, "is4k": is_4k}
        if seasons is not None:
            body["seasons"] = seasons
        with self._lock:
            return self.state.file_request(body, self.state.users[user_id]).id

    def approve_in_web_ui(self, request_id: int, *, as_user: int = 1) -> None:
        self._decide(request_id, RequestStatus.APPROVED, as_user)

    def decline_in_web_ui(self, request_id: int, *, as_user: int = 1) -> None:
        self._decide(request_id, RequestStatus.DECLINED, as_user)

    def _decide(self, request_id: int, status: int, as_user: int) -> None:
        with self._lock:
            user = self.state.users[as_user]
            if not user.can(Permission.MANAGE_REQUESTS):
                raise Refusal(403, "You do not have permission to access this endpoint")
            self.state.decide(self.state.requests[request_id], status, user)

    def set_media_status(self, media_type: str, tmdb_id: int, status: int, *,
                         seasons: dict[int, int] | None = None, is_4k: bool = False) -> None:
        """What Seerr's Plex/Jellyfin scan or the arr sync sets; completes and notifies."""
        with self._lock:
            media = self.state.ensure_media(media_type, tmdb_id)
            self.state.set_media_status(media, status, seasons or {}, is_4k)

    def blocklist(self, media_type: str, tmdb_id: int) -> None:
        with self._lock:
            self.state.ensure_media(media_type, tmdb_id).status = MediaStatus.BLOCKLISTED

    def fail_request(self, request_id: int) -> None:
        with self._lock:
            self.state.fail(self.state.requests[request_id])

    def request_status(self, request_id: int) -> int:
        with self._lock:
            return self.state.requests[request_id].status

    def fail_next(self, count: int, status: int = 503) -> None:
        """The next ``count`` calls meet a proxy answering ``status`` before Seerr."""
        with self._lock:
            self._failures.extend([status] * count)

    # ------------------------------------------------------------------ webhooks

    def configure_webhook(self, url: str, *, authorization: str | None = None,
                          types: int | None = None, template: str | None = None) -> None:
        """Seerr's webhook agent settings: URL, "Authorization Header", notification types
        (default: every media notification) and JSON payload (default: Seerr's)."""
        settings = WebhookSettings(url, authorization)
        if types is not None:
            settings = WebhookSettings(url, authorization, types)
        if template is not None:
            settings = WebhookSettings(url, authorization, settings.types, template)
        self.webhook = settings

    def webhook_body(self, kind: Notification, request_id: int | None = None) -> Any:
        """The JSON Seerr would post now for ``kind`` about that request (or, without one,
        the settings page's test notification), from the configured or default template."""
        with self._lock:
            request = self.state.requests[request_id] if request_id is not None else None
            template = self.webhook.template if self.webhook else WebhookSettings("").template
            return render(template, kind, self._payload(kind, request))

    def send_test_webhook(self) -> None:
        """The settings page's "Test" button (sent whatever types are enabled)."""
        if self.webhook is not None:
            self.poster.post(self.webhook, Notification.TEST_NOTIFICATION,
                             self.webhook_body(Notification.TEST_NOTIFICATION))

    def wait_for_webhooks(self, timeout: float = 10.0) -> bool:
        return self.poster.wait_idle(timeout)

    @property
    def deliveries(self) -> list[Delivery]:
        return list(self.poster.delivered)

    def _notify(self, kind: Notification, request: MediaRequest) -> None:
        self.notifications.append((kind, request.id))
        if self.webhook is not None and enabled(kind, self.webhook.types):
            body = render(self.webhook.template, kind, self._payload(kind, request))
            self.poster.post(self.webhook, kind, body)

    def _payload(self, kind: Notification, request: MediaRequest | None) -> dict[str, Any]:
        """The ``NotificationPayload`` Seerr builds (``MediaRequest.sendNotification`` and
        the availability notices in ``MediaRequestSubscriber``)."""
        if request is None:
            owner = self.routes.user_json(self.state.users[1])
            return {"subject": "Test Notification", "notifyUser": owner,
                    "message": "Check check, 1, 2, 3. Are we coming in clear?"}
        media, title = request.media, request.media.title
        event = _EVENTS[kind].format(k="4K " if request.is_4k else "",
                                     t="Movie" if title.media_type == "movie" else "Series")
        requester = self.routes.user_json(request.requested_by)
        payload: dict[str, Any] = {
            "event": event, "subject": f"{title.title} ({title.year})",
            "message": truncate(title.overview),
            "image": f"https://image.tmdb.org/t/p/w600_and_h900_bestv2{title.poster_path}",
            "media": {"tmdbId": title.tmdb_id, "tvdbId": media.tvdb_id,
                      "mediaType": title.media_type, "status": media.status,
                      "status4k": media.status_4k},
            "request": {"id": request.id, "requestedBy": requester},
        }
        if kind not in (Notification.MEDIA_PENDING, Notification.MEDIA_AUTO_APPROVED,
                        Notification.MEDIA_FAILED):
            payload["notifyUser"] = requester
        if title.media_type == "tv":
            payload["extra"] = [{"name": "Requested Seasons",
                                 "value": ", ".join(str(s.number) for s in request.seasons)}]
        return payload

    # ------------------------------------------------------------------ HTTP

    def assert_clean(self) -> None:
        assert not self.violations, "the fake Seerr saw off-spec traffic:\n" + "\n".join(
            self.violations)

    def calls_to(self, method: str, path: str) -> list[Recorded]:
        return [c for c in self.calls if c.method == method and c.path == "/api/v1" + path]

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        request = Request(environ)
        response = self._serve(request)
        self.calls.append(Recorded(request.method, request.path, dict(request.args),
                                   request.get_json(silent=True),
                                   request.headers.get("X-API-User"), response.status_code))
        return response(environ, start_response)

    def _serve(self, request: Request) -> Response:
        if self.delay:
            time.sleep(self.delay)
        with self._lock:
            failure = self._failures.pop(0) if self._failures else None
        if failure is not None:
            return Response("<html><body>Service Unavailable</body></html>", status=failure,
                            mimetype="text/html")
        rejection = check_request(request)
        if rejection is not None:
            if rejection[0] != 401:
                self.violations.append(f"request {request.method} {request.full_path}: "
                                       f"{rejection[1]['message']}")
            return _json(*rejection)
        with self._lock:
            status, body = self._route(request)
        response = _json(status, body)
        try:
            check_response(request, response)
        except SpecViolation as exc:
            self.violations.append(f"response {exc}")
            return _json(500, {"message": f"fake Seerr broke Seerr's spec: {exc}"})
        return response

    def _acting_user(self, request: Request) -> User | None:
        """``checkUser``: the main key acts as user 1 or as ``X-API-User``."""
        if request.headers.get("X-Api-Key") != self.api_key:
            return None
        chosen = request.headers.get("X-API-User")
        try:
            user_id = int(chosen) if chosen else 1
        except ValueError:
            return None
        return self.state.users.get(user_id)

    def _route(self, request: Request) -> tuple[int, Any]:
        try:
            endpoint, args = self._map.bind_to_environ(request.environ).match()
        except NotFound:
            self.violations.append(f"the fake Seerr does not serve {request.method} "
                                   f"{request.path}")
            return 501, {"message": f"the fake Seerr does not serve {request.method} "
                                    f"{request.path}"}
        if endpoint == "status":
            return self.routes.status()
        acting = self._acting_user(request)
        if acting is None:
            return FORBIDDEN
        return self._dispatch(endpoint, args, acting, request)

    def _dispatch(self, endpoint: str, args: Mapping[str, Any], acting: User,
                  request: Request) -> tuple[int, Any]:
        routes, query = self.routes, request.args
        handlers: dict[str, Callable[[], tuple[int, Any]]] = {
            "me": lambda: routes.me(acting),
            "users": lambda: routes.users(acting, query),
            "user": lambda: routes.user(acting, args.get("user_id", "")),
            "quota": lambda: routes.quota(acting, args.get("user_id", "")),
            "search": lambda: routes.search(query),
            "movie": lambda: routes.details("movie", args.get("tmdb_id", "")),
            "tv": lambda: routes.details("tv", args.get("tmdb_id", "")),
            "requests": lambda: routes.requests(acting, query),
            "file": lambda: routes.file(acting, request.get_json(silent=True) or {}),
            "one": lambda: routes.request(acting, args.get("request_id", "")),
            "decide": lambda: routes.decide(acting, args.get("request_id", ""),
                                            args.get("action", "")),
        }
        return handlers[endpoint]()


def _json(status: int, body: Any) -> Response:
    """Express's ``res.json``: compact JSON, ``application/json; charset=utf-8``."""
    return Response(json.dumps(body, separators=(",", ":"), ensure_ascii=False), status=status,
                    content_type="application/json; charset=utf-8")
