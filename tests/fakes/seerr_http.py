"""The fake Seerr's HTTP edge: the spec gate, ``checkUser``, the routes, and the record.

Order as in Seerr's ``server/index.ts``: express-openapi-validator first (``seerr_spec``),
then ``checkUser`` (``server/middleware/auth.ts``: the main key acts as user 1, or as the
user in ``X-API-User``; a wrong key or an unknown user is no user), then the route, whose
auth middleware answers 403 when there is no user. Every call is kept in ``calls``; what
broke the spec, either way, in ``violations``.
"""

import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from werkzeug.exceptions import NotFound
from werkzeug.routing import Map, Rule
from werkzeug.wrappers import Request, Response

from tests.fakes.seerr_model import User
from tests.fakes.seerr_routes import FORBIDDEN, SeerrRoutes
from tests.fakes.seerr_spec import SpecViolation, check_request, check_response

_RULES = [("/api/v1/status", "status", "GET"), ("/api/v1/auth/me", "me", "GET"),
          ("/api/v1/user", "users", "GET"), ("/api/v1/user/<user_id>", "user", "GET"),
          ("/api/v1/user/<user_id>/quota", "quota", "GET"),
          ("/api/v1/search", "search", "GET"), ("/api/v1/movie/<tmdb_id>", "movie", "GET"),
          ("/api/v1/tv/<tmdb_id>", "tv", "GET"), ("/api/v1/request", "requests", "GET"),
          ("/api/v1/request", "file", "POST"), ("/api/v1/request/count", "count", "GET"),
          ("/api/v1/request/<request_id>", "one", "GET"),
          ("/api/v1/request/<request_id>/<action>", "decide", "POST")]
_NOT_SERVED = {"count"}      # in the spec, but not built: a test that needs one fails loudly


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    args: dict[str, str]
    body: Any
    api_user: str | None      # the X-API-User header as sent
    status: int


class SeerrHttp:
    """A WSGI app over ``routes``; ``lock`` guards the state the routes change."""

    def __init__(self, routes: SeerrRoutes, api_key: str, lock: threading.RLock):
        self.routes = routes
        self.api_key = api_key
        self.lock = lock
        self.calls: list[Recorded] = []
        self.violations: list[str] = []
        self.delay = 0.0                 # seconds before each answer (for timeouts)
        self._failures: list[int] = []
        self._refusals: list[tuple[str, str, int, str, Callable[[], None] | None]] = []
        self._map = Map([Rule(path, endpoint=name, methods=[method])
                         for path, name, method in _RULES])

    def fail_next(self, count: int, status: int = 503) -> None:
        """The next ``count`` calls meet a proxy answering ``status`` before Seerr."""
        with self.lock:
            self._failures.extend([status] * count)

    def refuse_next(self, method: str, path: str, status: int, message: str,
                    meanwhile: Callable[[], None] | None = None) -> None:
        """The next ``method path`` is answered ``status {"message": message}`` instead of
        being done, after ``meanwhile`` (what happened in Seerr just before) has run.
        Seerr 3.1 itself answers a second decision with 200 and decides again; this stands
        for a Seerr or a proxy in front of it that refuses one."""
        with self.lock:
            self._refusals.append((method, "/api/v1" + path, status, message, meanwhile))

    def _refusal(self, request: Request) -> Response | None:
        with self.lock:
            for index, (method, path, status, message, meanwhile) in enumerate(self._refusals):
                if method == request.method and path == request.path:
                    del self._refusals[index]
                    if meanwhile is not None:
                        meanwhile()
                    return _json(status, {"message": message})
        return None

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
        with self.lock:
            failure = self._failures.pop(0) if self._failures else None
        if failure is not None:
            return Response("<html><body>Service Unavailable</body></html>", status=failure,
                            mimetype="text/html")
        refused = self._refusal(request)
        if refused is not None:
            return refused
        rejection = check_request(request)
        if rejection is not None:
            if rejection[0] != 401:
                self.violations.append(f"request {request.method} {request.full_path}: "
                                       f"{rejection[1]['message']}")
            return _json(*rejection)
        with self.lock:
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
        return self.routes.state.users.get(user_id)

    def _route(self, request: Request) -> tuple[int, Any]:
        try:
            endpoint, args = self._map.bind_to_environ(request.environ).match()
        except NotFound:
            endpoint, args = "", {}
        if not endpoint or endpoint in _NOT_SERVED:
            message = f"the fake Seerr does not serve {request.method} {request.path}"
            self.violations.append(message)
            return 501, {"message": message}
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
