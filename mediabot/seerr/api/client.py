"""A small client for Seerr's API (``/api/v1``), as mediabot uses it.

Every call carries the main API key in ``X-Api-Key``; a call made for a household member
also carries ``X-API-User: <their Seerr id>``, and Seerr then acts as that user: their
permissions, quotas and auto-approval rules apply and the request is theirs in Seerr's list.
``request_media`` therefore takes ``as_user`` and never sends ``userId``: with the admin key and
a ``userId`` Seerr files the request *for* the member but approves it by the *admin's*
permissions, so it would skip the household's approval step.

Bounded: each call has a timeout; GETs are retried (``retries`` more times, on no answer or a
502/503/504, with a doubling pause through the injected ``sleep``); a POST is sent once, since
sending it again could file a request twice. Every failure leaves as a ``SeerrError`` with a
kind and Seerr's own message (``api_errors.py``). The key is never logged nor put in a message.
Building a client does no I/O.
"""

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

import requests

from mediabot.seerr.api.api_errors import SeerrError, error_for
from mediabot.seerr.api.models import (
    Json,
    Page,
    SeerrMedia,
    SeerrQuota,
    SeerrRequest,
    SeerrStatus,
    SeerrUser,
)

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({502, 503, 504})
RequestFilter = Literal["all", "approved", "available", "pending", "processing",
                        "unavailable", "failed", "deleted", "completed"]
T = TypeVar("T")


def api_base(url: str) -> str:
    """``http://host:5055`` (or ``.../api/v1``, or a sub-path) -> ``http://host:5055/api/v1``."""
    base = url.strip().rstrip("/")
    if base.endswith("/api/v1"):
        base = base[: -len("/api/v1")]
    return base + "/api/v1"


class SeerrClient:
    def __init__(self, url: str, api_key: str, *, timeout: float = 10.0, retries: int = 2,
                 backoff: float = 0.5, sleep: Callable[[float], None] = time.sleep,
                 session: requests.Session | None = None):
        self.base = api_base(url)
        self._api_key = api_key
        self.timeout = timeout
        self.retries = max(0, retries)
        self.backoff = backoff
        self._sleep = sleep
        self._session = session

    def __repr__(self) -> str:
        return f"SeerrClient({self.base!r})"

    def close(self) -> None:
        if self._session is not None:
            self._session.close()

    # ------------------------------------------------------------------ server and users

    def status(self) -> SeerrStatus:
        """Seerr's version (a public route: it answers whatever the key)."""
        return _parsed(SeerrStatus.from_json, self._get("/status"))

    def me(self, *, acting_as: int | None = None) -> SeerrUser:
        """Who the key (or the key acting as a member) is; ``unauthorized`` for a wrong key."""
        return _parsed(SeerrUser.from_json, self._get("/auth/me", acting_as=acting_as))

    def users(self, *, take: int = 50, skip: int = 0, query: str | None = None) -> Page[SeerrUser]:
        params: dict[str, Any] = {"take": take, "skip": skip}
        if query:
            params["q"] = query
        body = self._get("/user", params=params)
        return _parsed(lambda b: _page(b, SeerrUser.from_json), body)

    def all_users(self, *, page_size: int = 100, max_pages: int = 20) -> list[SeerrUser]:
        """Every user, page by page (at most ``max_pages`` pages)."""
        found: list[SeerrUser] = []
        for number in range(max_pages):
            page = self.users(take=page_size, skip=number * page_size)
            found.extend(page.results)
            if len(found) >= page.total or not page.results:
                break
        return found

    def user(self, user_id: int) -> SeerrUser:
        return _parsed(SeerrUser.from_json, self._get(f"/user/{int(user_id)}"))

    def find_user(self, link: str) -> SeerrUser | None:
        """The Seerr user a member's link names (``SeerrUser.named_by``: an id, an email, or
        a Plex or Jellyfin username; never a Display Name). None when nobody matches;
        ``SeerrError("ambiguous")`` when several do."""
        wanted = link.strip()
        if not wanted:
            return None
        if wanted.isdigit():
            try:
                return self.user(int(wanted))
            except SeerrError as exc:
                if exc.kind == "not_found":
                    return None
                raise
        candidates = self.users(take=100, query=wanted).results
        matches = [u for u in candidates if u.named_by(wanted)]
        if len(matches) > 1:
            ids = ", ".join(str(u.id) for u in matches)
            raise SeerrError("ambiguous", f"{wanted!r} names several Seerr users ({ids}); "
                                          "link the member by id instead")
        return matches[0] if matches else None

    def quota(self, user_id: int, *, acting_as: int | None = None) -> SeerrQuota:
        """What a user may still request; another user's needs MANAGE_USERS and
        MANAGE_REQUESTS, so ask as the member or with the main key."""
        body = self._get(f"/user/{int(user_id)}/quota", acting_as=acting_as)
        return _parsed(SeerrQuota.from_json, body)

    # ------------------------------------------------------------------ titles

    def search(self, query: str, *, page: int = 1) -> list[SeerrMedia]:
        """Films and series matching ``query`` (people and collections left out), each
        with Seerr's status for it when Seerr has a record."""
        body = self._get("/search", params={"query": query, "page": page})
        return _parsed(lambda b: [SeerrMedia.from_json(r) for r in b.get("results") or ()
                                      if r.get("mediaType") in ("movie", "tv")], body)

    def find_series_by_tvdb(self, tvdb_id: int) -> SeerrMedia | None:
        """The series Sonarr knows by ``tvdb_id``, as Seerr knows it (Seerr files series by
        TMDB id): Seerr's ``tvdb:`` search, then its details. None when TMDB has no match."""
        hits = [m for m in self.search(f"tvdb:{int(tvdb_id)}") if m.media_type == "tv"]
        return self.tv(hits[0].tmdb_id) if hits else None

    def movie(self, tmdb_id: int) -> SeerrMedia:
        return self.media("movie", tmdb_id)

    def tv(self, tmdb_id: int) -> SeerrMedia:
        return self.media("tv", tmdb_id)

    def media(self, media_type: Literal["movie", "tv"], tmdb_id: int) -> SeerrMedia:
        """A title's details with Seerr's record: status, seasons, requests and by whom,
        and ``media_url`` (Plex/Jellyfin) once it is available."""
        body = self._get(f"/{media_type}/{int(tmdb_id)}")
        return _parsed(lambda b: SeerrMedia.from_json(b, media_type), body)

    # ------------------------------------------------------------------ requests

    def request_media(self, media_type: Literal["movie", "tv"], tmdb_id: int, *, as_user: int,
                      seasons: Sequence[int] | Literal["all"] | None = None,
                      is_4k: bool = False, tvdb_id: int | None = None) -> SeerrRequest:
        """File a request as the member ``as_user``: pending or approved as Seerr's rules
        for that member decide. Refusals: ``quota``, ``duplicate``, ``blocklisted``,
        ``no_seasons_left``, ``forbidden``. A series without ``seasons`` asks for all."""
        body: dict[str, Any] = {"mediaType": media_type, "mediaId": int(tmdb_id), "is4k": is_4k}
        if media_type == "tv":
            body["seasons"] = "all" if seasons in (None, "all") else [int(s) for s in seasons]
            if tvdb_id:
                body["tvdbId"] = int(tvdb_id)
        answer = self._call("POST", "/request", acting_as=as_user, body=body, expect=201)
        return _parsed(SeerrRequest.from_json, answer)

    def get_request(self, request_id: int, *, acting_as: int | None = None) -> SeerrRequest:
        body = self._get(f"/request/{int(request_id)}", acting_as=acting_as)
        return _parsed(SeerrRequest.from_json, body)

    def list_requests(self, *, filter: RequestFilter = "all", requested_by: int | None = None,
                 take: int = 20, skip: int = 0, sort: Literal["added", "modified"] = "added",
                 acting_as: int | None = None) -> Page[SeerrRequest]:
        """Requests, newest first; a member without MANAGE_REQUESTS sees only their own."""
        params: dict[str, Any] = {"take": take, "skip": skip, "filter": filter, "sort": sort}
        if requested_by is not None:
            params["requestedBy"] = int(requested_by)
        body = self._get("/request", params=params, acting_as=acting_as)
        return _parsed(lambda b: _page(b, SeerrRequest.from_json), body)

    def approve(self, request_id: int, *, as_user: int) -> SeerrRequest:
        """Approve as that admin's own Seerr user; ``forbidden`` without MANAGE_REQUESTS."""
        return self._decide(request_id, "approve", as_user)

    def decline(self, request_id: int, *, as_user: int) -> SeerrRequest:
        return self._decide(request_id, "decline", as_user)

    def _decide(self, request_id: int, action: str, as_user: int) -> SeerrRequest:
        body = self._call("POST", f"/request/{int(request_id)}/{action}", acting_as=as_user)
        return _parsed(SeerrRequest.from_json, body)

    # ------------------------------------------------------------------ plumbing

    def _get(self, path: str, *, params: dict[str, Any] | None = None,
             acting_as: int | None = None) -> Any:
        return self._call("GET", path, params=params, acting_as=acting_as)

    def _call(self, method: str, path: str, *, acting_as: int | None = None,
              params: dict[str, Any] | None = None, body: Any = None,
              expect: int = 200) -> Any:
        response = self._send(method, path, acting_as, params, body)
        log.debug("seerr %s %s -> %s", method, path, response.status_code)
        if response.status_code != expect:
            raise error_for(response, acting_as=acting_as)
        try:
            return response.json()
        except ValueError as exc:
            raise SeerrError("unexpected", f"the answer to {method} {path} is not JSON; is "
                                           f"{self.base} Seerr's address?",
                             response.status_code) from exc

    def _send(self, method: str, path: str, acting_as: int | None,
              params: dict[str, Any] | None, body: Any) -> requests.Response:
        headers = {"X-Api-Key": self._api_key, "Accept": "application/json"}
        if acting_as is not None:
            headers["X-API-User"] = str(int(acting_as))
        attempts = 1 + (self.retries if method == "GET" else 0)
        for attempt in range(attempts):
            last = attempt + 1 == attempts
            try:
                response = self._http().request(method, self.base + path, params=params,
                                                json=body, headers=headers,
                                                timeout=self.timeout)
            except requests.RequestException as exc:
                if last:
                    raise _unreachable(method, path, exc) from exc
                log.warning("seerr %s %s: no answer (%s); trying again", method, path,
                            type(exc).__name__)
            else:
                if response.status_code not in RETRY_STATUSES or last:
                    return response
                log.warning("seerr %s %s: %s; trying again", method, path,
                            response.status_code)
            self._sleep(self.backoff * 2 ** attempt)
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    def _http(self) -> requests.Session:
        if self._session is None:
            self._session = requests.Session()
        return self._session


def _parsed(parse: Callable[[Any], T], body: Any) -> T:
    """``parse(body)``, or SeerrError("unexpected") when the JSON is not the shape Seerr's
    answers have (another server, or a Seerr too different from the one this was built on)."""
    try:
        return parse(body)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise SeerrError("unexpected", f"Seerr's answer has an unexpected shape "
                                       f"({type(exc).__name__}: {exc})") from exc


def _page(body: Json, parse: Callable[[Json], T]) -> Page[T]:
    info = body.get("pageInfo") or {}
    results = tuple(parse(item) for item in body.get("results") or ())
    return Page(results, int(info.get("results", len(results))), int(info.get("pages", 1)))


def _unreachable(method: str, path: str, exc: requests.RequestException) -> SeerrError:
    if isinstance(exc, requests.Timeout):
        message = f"Seerr did not answer {method} {path} in time"
        if method != "GET":
            message += "; it may still have done it"
    else:
        message = f"cannot reach Seerr ({type(exc).__name__})"
    return SeerrError("unreachable", message)
