"""One Sonarr or Radarr server, reached through arrapi, with every failure made a ToolError.

arrapi has sharp edges that this module files down in one place:

* its constructor calls ``system/status``, so the API object is built on first use (mediabot
  must start while Sonarr is down) and rebuilt after a failed build;
* it has no timeout: a transport adapter mounted on the session enforces
  ``timeout_seconds`` on every request;
* it puts ``?apikey=`` in the URL, where urllib3's debug log and requests' exception
  messages would show it: the adapter moves the key into the ``X-Api-Key`` header (both
  servers accept it) before anything is sent;
* it copies error bodies into its exceptions, and servers (or a reverse proxy in front of
  them) may quote the request URL there, key and search term included: every sentence that
  leaves ``run`` (the ToolError the model and the household see, each log line) passes
  ``masking.scrub``, which drops the key, URL userinfo and query strings, key values and
  the words of the failed request's query, so the user's search term is left only in
  DEBUG lines we write on purpose;
* it raises a bare ``ArrException`` for a 401 with an empty body and turns every requests
  error into ``ConnectionFailure``: ``_translate`` maps all of them to one short sentence.
"""

from __future__ import annotations

import ast
import logging
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import arrapi
import requests
from requests.adapters import HTTPAdapter

from mediabot.arr.tools.base import ArrApi, KeyRejected, Service, ToolError, Unreachable
from mediabot.arr.tools.choices import check_client
from mediabot.arr.tools.metadata import Metadata
from mediabot.config import ArrConfig
from mediabot.text.masking import scrub

log = logging.getLogger(__name__)
T = TypeVar("T")
Timeout: TypeAlias = float | tuple[float, float] | tuple[float, None] | None
KINDS = {Service.SONARR: arrapi.SonarrAPI, Service.RADARR: arrapi.RadarrAPI}
_STATUS = re.compile(r"^\((\d{3}) \[[^\]]*\]\)\s*(.*)$", re.S)
MAX_ERROR_CHARS = 300


class _ArrAdapter(HTTPAdapter):
    """Moves ``apikey`` from the query string to a header and applies the timeout.

    It also remembers, per thread, the query of the last request it sent, so an error
    about that request can be scrubbed of its values (``last_query_values``).
    """

    def __init__(self, api_key: str, timeout: float) -> None:
        super().__init__(max_retries=0)
        self._api_key = api_key
        self._timeout = timeout
        self._sent = threading.local()

    def send(self, request: requests.PreparedRequest, stream: bool = False,
             timeout: Timeout = None, verify: bool | str = True,
             cert: bytes | str | tuple[bytes | str, bytes | str] | None = None,
             proxies: Mapping[str, str] | None = None) -> requests.Response:
        request.url = _without_api_key(request.url or "")
        request.headers["X-Api-Key"] = self._api_key
        self._sent.query = urlsplit(request.url).query
        return super().send(request, stream=stream, timeout=timeout or self._timeout,
                            verify=verify, cert=cert, proxies=proxies)

    def last_query_values(self) -> list[str]:
        """Free-text values (search terms, ``tmdb:123``) of this thread's last request."""
        query = getattr(self._sent, "query", "")
        return [value for _, value in parse_qsl(query) if _is_free_text(value)]


def _is_free_text(value: str) -> bool:
    return len(value) >= 3 and not value.isdigit() and value.lower() not in ("true", "false")


def _without_api_key(url: str) -> str:
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
             if k.lower() != "apikey"]
    return urlunsplit(parts._replace(query=urlencode(query)))


class _ScrubRecords(logging.Filter):
    """Scrubs the URLs urllib3 logs at DEBUG (its request lines carry the query)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.args:
            record.args = tuple(scrub(a) if isinstance(a, str) else a
                                for a in record.args)
        return True


_URLLIB3_FILTER = _ScrubRecords()


class ArrClient:
    """A lazily built arrapi client for one server; ``run`` is the single error boundary."""

    def __init__(self, kind: str, config: ArrConfig,
                 session: requests.Session | None = None) -> None:
        if kind not in KINDS:
            raise ValueError(f"kind must be 'sonarr' or 'radarr', not {kind!r}")
        self.kind = Service(kind)
        self.name = kind.title()
        self.config = config
        self.url = config.url.rstrip("/")
        self.shown_url = scrub(self.url, [config.api_key])
        self._session = session or requests.Session()
        self._adapter = _ArrAdapter(config.api_key, config.timeout_seconds)
        self._session.mount(self.url + "/", self._adapter)
        self._api: ArrApi | None = None
        self._lock = threading.Lock()
        self.metadata = Metadata()   # root folders and profiles, kept a few minutes

    def __repr__(self) -> str:
        return f"ArrClient({self.kind.value!r}, url={self.shown_url!r})"

    def run(self, fn: Callable[..., T], *args: Any, not_found: str | None = None) -> T:
        """Call ``fn(api, *args)``; any arrapi/requests failure becomes a ToolError.

        ``fn`` must do all its reading of arrapi objects inside (arrapi reloads partial
        objects on attribute access, which is network I/O) and return plain data.
        """
        try:
            return fn(self.api(), *args)
        except ToolError:
            raise
        except (arrapi.ArrException, requests.RequestException) as exc:
            error = _translate(exc, self.name, self.shown_url, not_found)
            error = type(error)(self.scrub(str(error))[:MAX_ERROR_CHARS])
            detail = self.scrub(f"{type(exc).__name__}: {exc}")
            if isinstance(exc, (arrapi.NotFound, arrapi.Exists)):
                # an answer about what the user asked for, which names it: DEBUG only
                log.debug("%s: %s (%s)", self.name, error, detail)
            else:
                log.warning("%s: %s", self.name, error)
                log.debug("%s: %s", self.name, detail)
            raise error from None

    def scrub(self, text: str, *, request_words: bool = True) -> str:
        """``masking.scrub`` with this server's key and (for an error about it) the values
        of this thread's last request. Cut after scrubbing, never before: a cut key would
        no longer match."""
        words = self._adapter.last_query_values() if request_words else ()
        return scrub(text, [self.config.api_key], words)

    def api(self) -> ArrApi:
        """The arrapi object, built on first use; a failed build is retried next time."""
        with self._lock:
            if self._api is None:
                self._api = self._build()
            return self._api

    def _build(self) -> ArrApi:
        _quiet_arrapi_logger()
        try:
            api = KINDS[self.kind](self.url, self.config.api_key, session=self._session)
        except (TypeError, ValueError, AttributeError):
            raise Unreachable(f"{self.shown_url} did not answer like {self.name} does; check "
                            f"[{self.kind}] url (it should be the address of the web UI)") from None
        if self.kind == Service.SONARR:
            # Sonarr's own default, "unknown", means "use the seasons' monitored flags as
            # sent"; arrapi's list lacks it, and add_series needs it for a list of seasons.
            api.monitor_options.append("unknown")
        log.info("%s client ready (%s, API %s)", self.name, self.shown_url,
                 "v4" if api._raw.v4 else "v3")
        return api

    def check(self) -> list[tuple[bool, str]]:
        """Lines for ``mediabot check``: reachable, key accepted, root folder, profile."""
        return check_client(self)


def _quiet_arrapi_logger() -> None:
    """arrapi logs whole request and response payloads at DEBUG; keep it above that.
    urllib3 logs each request line at DEBUG: its query strings are scrubbed."""
    logger = logging.getLogger("arrapi")
    if logger.level < logging.INFO:
        logger.setLevel(logging.INFO)
    logging.getLogger("urllib3.connectionpool").addFilter(_URLLIB3_FILTER)


def _translate(exc: Exception, name: str, url: str, not_found: str | None) -> ToolError:
    if isinstance(exc, arrapi.ConnectionFailure) or isinstance(exc, requests.RequestException):
        return _connection_error(exc, name, url)
    if isinstance(exc, arrapi.Unauthorized):
        return _key_rejected(name)
    if isinstance(exc, arrapi.NotFound):
        return ToolError(not_found or f"{name} has no such item")
    if isinstance(exc, arrapi.Exists):
        return ToolError(re.sub(r" in (Sonarr|Radarr)$", " in the library", str(exc)))
    if isinstance(exc, arrapi.Excluded):
        return ToolError(f"that title is on {name}'s import exclusion list")
    if isinstance(exc, arrapi.Invalid):
        return ToolError(f"{name} refused the request: {exc}")
    return _http_error(str(exc), name, not_found)


def _connection_error(exc: Exception, name: str, url: str) -> ToolError:
    cause = exc if isinstance(exc, requests.RequestException) else exc.__context__
    if isinstance(cause, requests.Timeout):
        return Unreachable(f"{name} did not answer in time at {url}; it may be busy, try again")
    if cause is None:
        return Unreachable(f"{url} did not answer like {name} does; check the url setting")
    return Unreachable(f"{name} is not answering at {url}")


def _key_rejected(name: str) -> ToolError:
    return KeyRejected(f"{name} rejected the API key — check [{name.lower()}] api_key")


def _http_error(message: str, name: str, not_found: str | None) -> ToolError:
    match = _STATUS.match(message)
    status, detail = (int(match.group(1)), match.group(2).strip()) if match else (0, message)
    if status == 401:
        return _key_rejected(name)
    if status == 404:
        return ToolError(not_found or f"{name} has no such item")
    if "already been added" in detail:
        return ToolError("that title is already in the library")
    if status >= 500:
        return ToolError(f"{name} had a problem ({status}); its search service may be "
                         "down, try again later")
    return ToolError(f"{name} refused: {_reason(detail) or 'no reason given'}")


def _reason(detail: str) -> str:
    """The readable part of an error body as arrapi quotes it: a JSON body's ``message``
    (arrapi shows it as a Python dict), or the text of an HTML or plain body (bytes)."""
    try:
        body = ast.literal_eval(detail[:4000])
    except Exception:  # noqa: BLE001 - a bare sentence, cut short or too deep: the text as is
        body = detail
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if isinstance(body, list) and body and isinstance(body[0], dict):
        body = body[0]
    if isinstance(body, dict):
        body = body.get("message") or body.get("errorMessage") or body.get("title") or ""
    return " ".join(re.sub(r"<[^>]*>", " ", str(body)).split())
