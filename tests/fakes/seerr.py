"""A fake Seerr (the merged Overseerr/Jellyseerr) on loopback HTTP, faithful where mediabot
depends on it, and checked against Seerr's own OpenAPI spec on every request and response.

    seerr = FakeSeerr().start()
    sam = seerr.add_user("sam", permissions=Permission.REQUEST, movie_quota=(1, 7))
    requests.post(seerr.url + "/api/v1/request", json={"mediaType": "movie", "mediaId": 693134},
                  headers={"X-Api-Key": seerr.api_key, "X-API-User": str(sam)})   # 201, pending
    seerr.approve_in_web_ui(1, as_user=1)
    seerr.set_media_status("movie", 693134, MediaStatus.AVAILABLE)   # MEDIA_AVAILABLE hook

Behaviour (``server/middleware/auth.ts`` and the server modules named in ``seerr_filing``,
``seerr_state`` and ``seerr_routes``): ``X-Api-Key`` with the right key acts as user 1, the
owner, or as the user in ``X-API-User``; no key at all is 401 (the spec validator's), a wrong
key or an unknown ``X-API-User`` is the auth middleware's 403. A request filed with the admin
key is approved by the admin's permissions even for another ``userId`` (the auto-approval
trap); filed as the member it follows theirs. Quota exceeded and blocklisted are 403, a
duplicate film 409, a series with no season left 202, approving or declining without
MANAGE_REQUESTS 403. Searches understand ``tmdb:N``, ``tvdb:N`` and ``imdb:ttN`` as Seerr's do.

Every request passes ``seerr_spec.check_request`` first and every answer
``seerr_spec.check_response``: a request the spec refuses is answered as Seerr's validator
answers it (400/404) and a response that breaks the spec becomes a 500; both are kept in
``violations``, which a test should find empty (``assert_clean``).

The control surface stands in for Seerr's web UI and library scans: ``add_user``,
``request_in_web_ui``, ``approve_in_web_ui``/``decline_in_web_ui``, ``set_media_status``,
``blocklist``, ``fail_request``, ``set_display_name`` (the user's own Display Name),
``cancel_in_web_ui``; ``refuse_next`` scripts a refusal. Each change that Seerr notifies
about is recorded in ``notifications`` and, once ``configure_webhook`` is called, posted
from the default template (``seerr_webhook``) to that URL with that Authorization header,
in order, on a background thread (``wait_for_webhooks``; what was posted is in ``deliveries``).
"""

import datetime as dt
import threading
from collections.abc import Callable
from typing import Any

from mediabot.trial.sim.loopback import LoopbackServer
from tests.fakes.seerr_catalog import CATALOG, Title
from tests.fakes.seerr_filing import file_request
from tests.fakes.seerr_http import Recorded, SeerrHttp
from tests.fakes.seerr_model import (
    MediaStatus,
    Notification,
    Permission,
    Refusal,
    RequestStatus,
    User,
)
from tests.fakes.seerr_routes import SeerrRoutes
from tests.fakes.seerr_state import SeerrState
from tests.fakes.seerr_webhook import Delivery, SeerrHooks, WebhookSettings

API_KEY = "MTcwMDAwMDAwMDAwMGE1ZWVycmZha2VrZXk="   # Seerr's keys are base64 text like this
VERSION = "3.1.0"


class FakeSeerr:
    """``http`` is the WSGI app (its ``delay`` knob, ``calls``), ``hooks`` the webhook agent,
    ``state`` the memory; the methods below are what a test usually needs."""

    def __init__(self, *, api_key: str = API_KEY, version: str = VERSION,
                 clock: Callable[[], dt.datetime] | None = None,
                 catalog: tuple[Title, ...] = CATALOG):
        self.api_key = api_key
        self.clock = clock or (lambda: dt.datetime.now(dt.UTC))
        self._lock = threading.RLock()
        self.state = SeerrState(catalog, self.clock, self._notify)
        self.routes = SeerrRoutes(self.state, version)
        self.hooks = SeerrHooks(self.routes)
        self.http = SeerrHttp(self.routes, api_key, self._lock)
        self._server = LoopbackServer(self.http)
        self.add_user("owner", email="owner@seerr.example", plex_username="owner",
                      permissions=Permission.ADMIN)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> "FakeSeerr":
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()
        self.hooks.poster.close()

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
                 plex_username: str | None = None, jellyfin_username: str | None = None,
                 local: bool = False,
                 movie_quota: tuple[int, int] | None = None,
                 tv_quota: tuple[int, int] | None = None) -> int:
        """A Seerr user; ``name`` is the username (the Display Name) of a local user
        (``local``), else the Jellyfin username when ``jellyfin_username`` is given, else the
        Plex username unless ``plex_username`` is given. Quotas are (limit, days)."""
        with self._lock:
            user = User(self.state.next_id("user"), (email or f"{name}@example.com").lower(),
                        name if local else None,
                        None if local or jellyfin_username else (plex_username or name),
                        None if local else jellyfin_username,
                        2 if local else 3 if jellyfin_username else 1,
                        int(permissions), self.clock())
            user.movie_quota_limit, user.movie_quota_days = movie_quota or (None, None)
            user.tv_quota_limit, user.tv_quota_days = tv_quota or (None, None)
            self.state.users[user.id] = user
            return user.id

    def user(self, user_id: int) -> User:
        return self.state.users[user_id]

    def set_display_name(self, user_id: int, name: str) -> None:
        """What the user's own Settings > General > Display Name saves
        (``POST /user/{id}/settings/main``): Seerr's ``username`` column, which
        ``displayName`` shows first, whatever its owner types (line breaks and links included)."""
        with self._lock:
            self.state.users[user_id].username = name

    def cancel_in_web_ui(self, request_id: int) -> None:
        """The requester cancels (or an admin deletes) the request: ``DELETE /request/{id}``
        removes it, so every later call about it is 404 "Request not found."."""
        with self._lock:
            self.state.remove(self.state.requests[request_id])

    def request_in_web_ui(self, user_id: int, media_type: str, tmdb_id: int, *,
                          seasons: list[int] | str | None = None, is_4k: bool = False) -> int:
        """File a request as ``user_id`` signed in to the web UI; raises ``Refusal``."""
        body: dict[str, Any] = {"mediaType": media_type, "mediaId": tmdb_id, "is4k": is_4k}
        if seasons is not None:
            body["seasons"] = seasons
        with self._lock:
            return file_request(self.state, body, self.state.users[user_id]).id

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
        """Radarr or Sonarr refused the approved request: FAILED, and MEDIA_FAILED."""
        with self._lock:
            self.state.fail(self.state.requests[request_id])

    def request_status(self, request_id: int) -> int:
        with self._lock:
            return self.state.requests[request_id].status

    # ------------------------------------------------------------------ webhooks

    def configure_webhook(self, url: str, *, authorization: str | None = None,
                          types: int | None = None, template: str | None = None) -> None:
        """Seerr's webhook agent settings: URL, "Authorization Header", notification types
        (default: every media notification) and JSON payload (default: Seerr's)."""
        default = WebhookSettings(url)
        self.hooks.settings = WebhookSettings(
            url, authorization, default.types if types is None else types,
            template or default.template)

    def webhook_body(self, kind: Notification, request_id: int | None = None) -> Any:
        """The JSON Seerr would post now for ``kind`` about that request (or, without one,
        the settings page's test notification)."""
        with self._lock:
            request = self.state.requests[request_id] if request_id is not None else None
            return self.hooks.body(kind, request)

    def send_test_webhook(self) -> None:
        """The settings page's "Test" button (sent whatever types are enabled)."""
        with self._lock:
            self.hooks.send_test()

    def wait_for_webhooks(self, timeout: float = 10.0) -> bool:
        return self.hooks.poster.wait_idle(timeout)

    @property
    def deliveries(self) -> list[Delivery]:
        return list(self.hooks.poster.delivered)

    @property
    def notifications(self) -> list[tuple[Notification, int]]:
        return list(self.hooks.notifications)

    def _notify(self, kind: Notification, request: Any) -> None:
        self.hooks.notify(kind, request)

    # ------------------------------------------------------------------ the record

    @property
    def violations(self) -> list[str]:
        return self.http.violations

    def assert_clean(self) -> None:
        assert not self.http.violations, "the fake Seerr saw off-spec traffic:\n" + \
            "\n".join(self.http.violations)

    def calls_to(self, method: str, path: str) -> list[Recorded]:
        return [c for c in self.http.calls
                if c.method == method and c.path == "/api/v1" + path]

    def fail_next(self, count: int, status: int = 503) -> None:
        self.http.fail_next(count, status)

    def refuse_next(self, method: str, path: str, status: int, message: str,
                    meanwhile: Callable[[], None] | None = None) -> None:
        self.http.refuse_next(method, path, status, message, meanwhile)
