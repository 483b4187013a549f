"""Fake Sonarr and Radarr: WSGI apps speaking the v3 API the way the real servers do.

What arrapi and the tools rely on (see the project's reference notes) is kept faithful:
the API key from ``?apikey=`` or the ``X-Api-Key`` header, else 401 with an EMPTY body;
case-insensitive paths; ``Z`` timestamps; lookups that carry ``id`` for library items and
understand ``tvdb:``/``tmdb:`` terms (unknown id -> ``[]``); 201 on add; the 400 list for a
duplicate add and for a missing root folder or quality profile; problem+json 404 for a
missing resource and an empty 404 for an unknown route; the paged queue; both calendars;
delete answering 200 with no body; ``system/status`` with a configurable version (Sonarr
3.x serves language profiles, 4.x does not).

Knobs: ``delay`` (answer late, for timeouts), ``lookup_status`` (e.g. 503, the search
backend being down), ``command_status`` (commands fail with it), ``echo_status`` (every
API call but ``system/status`` fails with that status and a body that quotes the request
URL, API key included, as some servers and reverse proxies do; ``echo_json`` False sends it as an
HTML page). Every request is recorded in ``requests`` for assertions; every command (``POST
command``: MoviesSearch, SeriesSearch, SeasonSearch, EpisodeSearch...) in ``commands``, answered
like the real CommandResource (201, status "queued", trigger "manual") and readable at
``command/{id}``.
"""

import copy
import datetime as dt
import json
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from wsgiref.types import StartResponse, WSGIEnvironment

from werkzeug.wrappers import Request, Response

from mediabot.trial.sim.arr_fixtures import LANGUAGE_PROFILES, quality_profiles, root_folders, z
from mediabot.trial.sim.arr_seed import radarr_seed, sonarr_seed

API_KEY = "0123456789abcdef0123456789abcdef"
NOT_FOUND = {"type": "https://tools.ietf.org/html/rfc7231#section-6.5.4", "title": "Not Found",
             "status": 404, "traceId": "00-4f1c2d9e8a7b6c5d4e3f2a1b0c9d8e7f-1a2b3c4d5e6f7a8b-00"}


@dataclass
class Recorded:
    method: str
    path: str
    args: dict
    body: object
    status: int
    response_bytes: int
    key_in_url: bool


Route = tuple[str, str, Callable[..., Response]]   # method, path pattern, handler


def _json(body: object, status: int = 200, mimetype: str = "application/json") -> Response:
    return Response(json.dumps(body), status=status, mimetype=mimetype)


def _validation(*errors: tuple[str, str, object, str]) -> Response:
    """The 400 body of FluentValidation failures, as Sonarr and Radarr send it."""
    return _json([{"propertyName": prop, "errorMessage": message, "attemptedValue": value,
                   "severity": "error", "errorCode": code}
                  for prop, message, value, code in errors], 400)


def _flag(request: Request, name: str) -> bool:
    return request.args.get(name, "false").lower() == "true"


def _when(text: str | None, default: dt.datetime) -> dt.datetime:
    if not text:
        return default
    moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


class FakeArr:
    app_name = "Arr"
    item = "item"
    # Each service (FakeSonarr, FakeRadarr) sets these and the three methods below.
    id_key: str           # the id a lookup matches: tvdbId or tmdbId
    queue_key: str        # a queue record's link to its item: seriesId or movieId
    library: list[dict]
    catalog: list[dict]   # what a lookup finds besides the library
    queue: list[dict]

    def __init__(self, *, api_key: str = API_KEY, version: str, now: dt.datetime | None = None,
                 root: str):
        self.api_key = api_key
        self.version = version
        self.now = now or dt.datetime.now(dt.UTC).replace(microsecond=0)
        self.delay = 0.0
        self.lookup_status: int | None = None
        self.echo_status: int | None = None
        self.echo_json = True
        self.requests: list[Recorded] = []
        self.quality_profiles = quality_profiles()
        self.root_folders = root_folders(root)
        self.tags: list[dict] = []
        self.deleted: list[dict] = []
        self.commands: list[dict] = []
        self.command_status: int | None = None   # e.g. 503: commands fail, nothing else
        self._lock = threading.Lock()

    def __call__(self, environ: WSGIEnvironment,
                 start_response: StartResponse) -> Iterable[bytes]:
        request = Request(environ)
        if self.delay:
            time.sleep(self.delay)
        with self._lock:
            response = self._dispatch(request)
        self._record(request, response)
        return response(environ, start_response)

    def _record(self, request: Request, response: Response) -> None:
        body = request.get_json(silent=True) if request.data else None
        self.requests.append(Recorded(
            request.method, request.path.lower(), {k: v for k, v in request.args.items()
                                                   if k.lower() != "apikey"},
            body, response.status_code, len(response.get_data()),
            any(k.lower() == "apikey" for k in request.args)))

    def requests_to(self, path: str, method: str = "GET") -> list[Recorded]:
        return [r for r in self.requests if r.path == f"/api/v3/{path}" and r.method == method]

    def _dispatch(self, request: Request) -> Response:
        path = request.path.lower().rstrip("/")
        if not path.startswith("/api/v3/"):
            return Response(status=404)
        route = path[len("/api/v3/"):]
        if self.echo_status and route != "system/status":
            return self._echo(request, self.echo_status)
        if not self._authorised(request):
            return Response(status=401)
        for method, pattern, handler in self._routes():
            match = re.fullmatch(pattern, route)
            if match and request.method == method:
                return handler(request, *match.groups())
        return Response(status=404)

    def _authorised(self, request: Request) -> bool:
        keys = [v for k, v in request.args.items() if k.lower() == "apikey"]
        keys.append(request.headers.get("X-Api-Key", ""))
        return self.api_key in keys

    def _echo(self, request: Request, status: int) -> Response:
        """An error body quoting the URL with the key (from the header when not in it)."""
        url = request.url
        if not any(k.lower() == "apikey" for k in request.args):
            key = request.headers.get("X-Api-Key", "")
            url += ("&" if request.query_string else "?") + f"apikey={key}"
        term = request.args.get("term", "")
        if self.echo_json:
            return _json({"message": f"Search for '{term}' failed for {url}",
                          "description": f"{request.method} {url}"}, status)
        page = f"<html><body><h1>Error</h1><p>{request.method} {url}</p></body></html>"
        return Response(page, status=status, mimetype="text/html")

    def _routes(self) -> list[Route]:
        return [
            ("GET", "system/status", self._status),
            ("GET", "qualityprofile", lambda r: _json(self.quality_profiles)),
            ("GET", r"qualityprofile/(\d+)", lambda r, i: self._by_id(self.quality_profiles, i)),
            ("GET", "rootfolder", lambda r: _json(self.root_folders)),
            ("GET", "tag", lambda r: _json(self.tags)),
            ("POST", "tag", self._add_tag),
            ("GET", "queue", self._queue),
            ("GET", "calendar", self._calendar),
            ("POST", "command", self._command),
            ("GET", r"command/(\d+)", lambda r, i: self._by_id(self.commands, i)),
        ]

    def _status(self, request: Request) -> Response:
        return _json({
            "appName": self.app_name, "instanceName": self.app_name, "version": self.version,
            "buildTime": "2025-01-12T18:31:07Z", "isDebug": False, "isProduction": True,
            "isAdmin": False, "isUserInteractive": False, "startupPath": "/app/bin",
            "appData": "/config", "osName": "ubuntu", "osVersion": "22.04", "isNetCore": True,
            "isLinux": True, "isOsx": False, "isWindows": False, "isDocker": True,
            "mode": "console", "branch": "main", "authentication": "forms",
            "sqliteVersion": "3.44.2", "migrationVersion": 214, "urlBase": "",
            "runtimeVersion": "6.0.36", "runtimeName": ".NET", "startTime": z(self.now),
            "packageUpdateMechanism": "docker"})

    def _by_id(self, items: list[dict], item_id: str) -> Response:
        for item in items:
            if item["id"] == int(item_id):
                return _json(item)
        return _json(NOT_FOUND, 404, "application/problem+json")

    def _add_tag(self, request: Request) -> Response:
        tag = {"id": len(self.tags) + 1, "label": request.get_json()["label"]}
        self.tags.append(tag)
        return _json(tag, 201)

    def _command(self, request: Request) -> Response:
        """A CommandResource as Sonarr/Radarr answer it: queued, the body echoed back."""
        if self.command_status:
            return _json({"message": "The command could not be queued"}, self.command_status)
        body = request.get_json(silent=True)
        if not isinstance(body, dict) or not body.get("name"):
            return _validation(("Name", "'Name' must not be empty.", None, "NotEmptyValidator"))
        name = body["name"]
        words = re.sub(r"(?<!^)(?=[A-Z])", " ", name)
        command = {
            "id": len(self.commands) + 1, "name": name, "commandName": words,
            "body": {**body, "sendUpdatesToClient": True, "updateScheduledTask": True,
                     "requiresDiskAccess": False, "isExclusive": False, "isLongRunning": False,
                     "name": name, "trigger": "manual", "suppressMessages": False},
            "priority": "normal", "status": "queued", "result": "unknown",
            "queued": z(self.now), "trigger": "manual", "stateChangeTime": z(self.now),
            "sendUpdatesToClient": True, "updateScheduledTask": True}
        self.commands.append(command)
        return _json(command, 201)

    def _queue(self, request: Request) -> Response:
        page = int(request.args.get("page", 1))
        size = int(request.args.get("pageSize", 10))
        records = self.queue[(page - 1) * size:page * size]
        return _json({"page": page, "pageSize": size, "sortKey": "timeleft",
                      "sortDirection": "ascending", "totalRecords": len(self.queue),
                      "records": [self._embed(copy.deepcopy(r), request) for r in records]})

    def _lookup(self, request: Request, id_key: str, prefix: str) -> Response:
        if self.lookup_status:
            return _json({"message": "Search for 'x' failed. Invalid response received from "
                                     "the metadata service."}, self.lookup_status)
        term = request.args.get("term", "").strip().lower()
        if term.startswith(prefix + ":"):
            wanted = int(term.split(":", 1)[1])
            hits = [item for item in self._everything() if item[id_key] == wanted]
        else:
            hits = [item for item in self._everything() if _matches(item, term)]
            hits.sort(key=lambda item: _rank(item, term))
        return _json([self._as_lookup(item) for item in hits])

    def _as_lookup(self, item: dict) -> dict:
        raise NotImplementedError

    def _calendar(self, request: Request) -> Response:
        raise NotImplementedError

    def _embed(self, record: dict, request: Request) -> dict:
        raise NotImplementedError

    def _everything(self) -> list[dict]:
        owned = {item[self.id_key] for item in self.library}
        return self.library + [item for item in self.catalog if item[self.id_key] not in owned]

    def _validate_add(self, body: dict, existing_message: str, id_prop: str) -> Response | None:
        errors = []
        if any(item[self.id_key] == body.get(self.id_key) for item in self.library):
            errors.append((id_prop, existing_message, body.get(self.id_key),
                           f"{self.item.title()}ExistsValidator"))
        path = body.get("rootFolderPath")
        if not any(f["path"] == path and f["accessible"] for f in self.root_folders):
            errors.append(("RootFolderPath", f"Root folder '{path}' does not exist", path,
                           "RootFolderExistsValidator"))
        if not any(p["id"] == body.get("qualityProfileId") for p in self.quality_profiles):
            errors.append(("QualityProfileId", "Quality Profile does not exist",
                           body.get("qualityProfileId"), "QualityProfileExistsValidator"))
        return _validation(*errors) if errors else None

    def _new_id(self) -> int:
        return max((item["id"] for item in self.library), default=0) + 1

    def _delete(self, request: Request, item_id: str) -> Response:
        for item in self.library:
            if item["id"] == int(item_id):
                self.library.remove(item)
                self.deleted.append({"id": item["id"], "title": item["title"],
                                     "deleteFiles": _flag(request, "deleteFiles")})
                self.queue = [r for r in self.queue if r.get(self.queue_key) != item["id"]]
                return Response(status=200)
        return _json(NOT_FOUND, 404, "application/problem+json")


def _matches(item: dict, term: str) -> bool:
    titles = [item["title"]] + [alt["title"] for alt in item.get("alternateTitles") or []]
    words = re.findall(r"\w+", term)
    return bool(words) and any(all(w in title.lower() for w in words) for title in titles)


def _rank(item: dict, term: str) -> tuple:
    """Exact titles first (ignoring a leading "the"), then the most voted, like SkyHook."""
    title = re.sub(r"^the |\s*\(.*\)$", "", item["title"].lower())
    term = term.removeprefix("the ")
    votes = item.get("ratings", {}).get("votes") or item.get("popularity") or 0
    return (title != term, not title.startswith(term), -votes)


class FakeSonarr(FakeArr):
    """Sonarr; ``version`` "4.0.x" (default) or "3.0.10.1567" (with language profiles)."""

    app_name, item, id_key, queue_key = "Sonarr", "series", "tvdbId", "seriesId"

    def __init__(self, *, version: str = "4.0.14.2939", **kwargs: Any) -> None:
        super().__init__(version=version, root="/tv", **kwargs)
        seed = sonarr_seed(self.now)
        self.library, self.catalog = seed["series"], seed["catalog"]
        self.episodes, self.queue = seed["episodes"], seed["queue"]
        self.language_profiles = copy.deepcopy(LANGUAGE_PROFILES)

    @property
    def v3(self) -> bool:
        return self.version.startswith("3.")

    def _routes(self) -> list[Route]:
        routes = super()._routes() + [
            ("GET", "series", self._all),
            ("GET", "series/lookup", lambda r: self._lookup(r, "tvdbId", "tvdb")),
            ("GET", r"series/(\d+)", lambda r, i: self._by_id(self.library, i)),
            ("POST", "series", self._add),
            ("DELETE", r"series/(\d+)", self._delete),
        ]
        if self.v3:
            routes += [("GET", "languageprofile", lambda r: _json(self.language_profiles)),
                       ("GET", r"languageprofile/(\d+)",
                        lambda r, i: self._by_id(self.language_profiles, i))]
        return routes

    def _all(self, request: Request) -> Response:
        wanted = request.args.get("tvdbId")
        return _json([s for s in self.library if not wanted or s["tvdbId"] == int(wanted)])

    def _as_lookup(self, item: dict) -> dict:
        """Lookups carry the library id and path but not the episode statistics."""
        data = copy.deepcopy(item)
        for season in data["seasons"]:
            season.pop("statistics", None)
        data["statistics"] = {"seasonCount": len(data["seasons"])}
        return data

    def _add(self, request: Request) -> Response:
        body = request.get_json()
        invalid = self._validate_add(body, "This series has already been added", "TvdbId")
        if self.v3 and not any(p["id"] == body.get("languageProfileId")
                               for p in self.language_profiles):
            invalid = invalid or _validation(("LanguageProfileId", "Language profile does not "
                                              "exist", body.get("languageProfileId"),
                                              "LanguageProfileExistsValidator"))
        if invalid:
            return invalid
        series = copy.deepcopy(body)
        series.update(id=self._new_id(), path=f"{body['rootFolderPath']}/{body['title']}",
                      added=z(self.now))
        _monitor_seasons(series["seasons"], (body.get("addOptions") or {}).get("monitor"))
        for season in series["seasons"]:
            season["statistics"] = {"episodeFileCount": 0, "episodeCount": 0,
                                    "totalEpisodeCount": 0, "sizeOnDisk": 0,
                                    "percentOfEpisodes": 0.0}
        series["statistics"] = {"seasonCount": len(series["seasons"]), "episodeFileCount": 0,
                                "episodeCount": 0, "totalEpisodeCount": 0, "sizeOnDisk": 0}
        self.library.append(series)
        return _json(series, 201)

    def _calendar(self, request: Request) -> Response:
        start = _when(request.args.get("start"), self.now)
        end = _when(request.args.get("end"), start + dt.timedelta(days=2))
        series = {s["id"]: s for s in self.library}
        found = [copy.deepcopy(e) for e in self.episodes
                 if e["seriesId"] in series and start <= _when(e["airDateUtc"], start) <= end
                 and (_flag(request, "unmonitored") or e["monitored"])]
        for episode in found if _flag(request, "includeSeries") else []:
            episode["series"] = copy.deepcopy(series[episode["seriesId"]])
        return _json(sorted(found, key=lambda e: e["airDateUtc"]))

    def _embed(self, record: dict, request: Request) -> dict:
        if _flag(request, "includeSeries"):
            record["series"] = next(copy.deepcopy(s) for s in self.library
                                    if s["id"] == record["seriesId"])
        if _flag(request, "includeEpisode"):
            record["episode"] = next(copy.deepcopy(e) for e in self.episodes
                                     if e["id"] == record["episodeId"])
        return record


def _monitor_seasons(seasons: list[dict], monitor: str | None) -> None:
    """Sonarr's addOptions.monitor; "unknown"/"skip" keep the seasons' flags as sent."""
    numbers = [s["seasonNumber"] for s in seasons if s["seasonNumber"] > 0]
    last = max(numbers, default=0)
    chosen = {"all": set(numbers), "missing": set(numbers), "existing": set(numbers),
              "future": {last}, "latestSeason": {last}, "lastSeason": {last},
              "firstSeason": {1}, "pilot": {1}, "none": set()}.get(monitor or "unknown")
    if chosen is None:
        return
    for season in seasons:
        season["monitored"] = season["seasonNumber"] in chosen


class FakeRadarr(FakeArr):
    """Radarr (v5/v6 API shape)."""

    app_name, item, id_key, queue_key = "Radarr", "movie", "tmdbId", "movieId"

    def __init__(self, *, version: str = "5.14.0.9383", **kwargs: Any) -> None:
        super().__init__(version=version, root="/movies", **kwargs)
        seed = radarr_seed(self.now)
        self.library, self.catalog, self.queue = seed["movies"], seed["catalog"], seed["queue"]

    def _routes(self) -> list[Route]:
        return super()._routes() + [
            ("GET", "movie", self._all),
            ("GET", "movie/lookup", lambda r: self._lookup(r, "tmdbId", "tmdb")),
            ("GET", r"movie/(\d+)", lambda r, i: self._by_id(self.library, i)),
            ("POST", "movie", self._add),
            ("DELETE", r"movie/(\d+)", self._delete),
        ]

    def _all(self, request: Request) -> Response:
        wanted = request.args.get("tmdbId")
        return _json([m for m in self.library if not wanted or m["tmdbId"] == int(wanted)])

    def _as_lookup(self, item: dict) -> dict:
        data = copy.deepcopy(item)
        data.pop("movieFile", None)
        return data

    def _add(self, request: Request) -> Response:
        body = request.get_json()
        invalid = self._validate_add(body, "This movie has already been added", "TmdbId")
        if invalid:
            return invalid
        movie = copy.deepcopy(body)
        movie.update(id=self._new_id(), path=f"{body['rootFolderPath']}/{body['title']} "
                                             f"({body['year']})", added=z(self.now))
        self.library.append(movie)
        return _json(movie, 201)

    def _calendar(self, request: Request) -> Response:
        start = _when(request.args.get("start"), self.now)
        end = _when(request.args.get("end"), start + dt.timedelta(days=2))
        found = [copy.deepcopy(m) for m in self.library
                 if (_flag(request, "unmonitored") or m["monitored"])
                 and any(m.get(key) and start <= _when(m[key], start) <= end
                         for key in ("inCinemas", "digitalRelease", "physicalRelease"))]
        return _json(found)

    def _embed(self, record: dict, request: Request) -> dict:
        if _flag(request, "includeMovie"):
            record["movie"] = next(copy.deepcopy(m) for m in self.library
                                   if m["id"] == record["movieId"])
        return record
