"""Seerr's OpenAPI spec as a gate on every request and response of the fake Seerr.

The spec (``seerr-api.yml`` beside this file, Seerr's own, vendored unchanged) is loaded once
per process and checked by ``openapi-core``. A request goes through ``check_request`` before
the fake looks at it, as the real server runs express-openapi-validator 4.13.8 before its
routes (``server/index.ts``): a path the spec does not have is 404 ``not found``, a request
without ``X-Api-Key`` (or a session cookie) is 401 ``cookie 'connect.sid' required``, a
parameter or body the spec does not allow is 400, and so is an unknown query parameter
(``allowUnknownQueryParameters`` is off). The wording of a 400 is openapi-core's, not Ajv's.

``check_response`` judges what the fake answers: a documented status must match its schema;
an undocumented one (Seerr's spec documents successes only) must be an error status, or the
202 of "no seasons left", with one of Seerr's two error bodies: ``{"message", "errors"?}``
from the error handler or ``{"status", "error"}`` from the auth middleware.

``CORRECTIONS`` lists the few places where Seerr's server sends what its own spec forbids;
each one names the server code it follows. They are applied to the loaded spec, never to the
file, so the fake stays faithful to the server and valid against the spec as corrected.
"""

import functools
import pathlib
import re
from collections.abc import Mapping
from typing import Any

import yaml
from openapi_core import OpenAPI
from openapi_core.contrib.werkzeug import WerkzeugOpenAPIRequest, WerkzeugOpenAPIResponse
from openapi_core.templating.paths.exceptions import PathNotFound
from openapi_core.templating.responses.exceptions import ResponseNotFound
from openapi_core.validation.request.exceptions import SecurityValidationError
from werkzeug.wrappers import Request, Response

SPEC_PATH = pathlib.Path(__file__).with_name("seerr-api.yml")
BASE_PATH = "/api/v1"

# (JSON path inside components.schemas, change, why: the server code that sends it)
CORRECTIONS: tuple[tuple[str, str, str], ...] = (
    ("User.properties.username", "nullable",
     "server/entity/User.ts: username is a nullable column; Plex and Jellyfin users have none"),
    ("User.properties.plexUsername", "nullable",
     "server/entity/User.ts: plexUsername is nullable; local and Jellyfin users have none"),
    ("User.required.email", "not required",
     "server/entity/User.ts filter(): email is left out for a caller without MANAGE_USERS"),
    ("MediaRequest.properties.serverId", "nullable",
     "server/entity/MediaRequest.ts: serverId is a nullable column, null unless chosen"),
    ("MediaRequest.properties.profileId", "nullable",
     "server/entity/MediaRequest.ts: profileId is a nullable column"),
    ("MediaRequest.properties.rootFolder", "nullable",
     "server/entity/MediaRequest.ts: rootFolder is a nullable column"),
)


class SpecViolation(AssertionError):
    """The fake answered something Seerr's spec does not allow: a bug in the fake."""


def load_spec_dict() -> dict[str, Any]:
    """The vendored spec as a dict, unchanged (the CSafeLoader keeps this well under 1 s)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with SPEC_PATH.open(encoding="utf-8") as handle:
        spec: dict[str, Any] = yaml.load(handle, Loader=loader)
    return spec


def apply_corrections(spec: dict[str, Any]) -> dict[str, Any]:
    schemas = spec["components"]["schemas"]
    for where, change, _why in CORRECTIONS:
        name, kind, field = where.split(".")
        if change == "nullable":
            schemas[name][kind][field]["nullable"] = True
        else:
            schemas[name][kind].remove(field)
    return spec


@functools.cache
def _gate_spec() -> tuple[OpenAPI, dict[str, Any]]:
    """Loaded and checked once per process (openapi-core validates the spec itself, ~1 s)."""
    spec = apply_corrections(load_spec_dict())
    spec["servers"] = [{"url": BASE_PATH}]
    return OpenAPI.from_dict(spec), spec


def _error(status: int, message: str, path: str) -> tuple[int, dict[str, Any]]:
    return status, {"message": message, "errors": [{"path": path, "message": message}]}


def _express_route(template: str) -> str:
    return BASE_PATH + re.sub(r"\{(\w+)\}", r":\1", template)


def check_request(request: Request) -> tuple[int, dict[str, Any]] | None:
    """The status and body express-openapi-validator answers instead of Seerr's route, or
    None when the spec allows the request."""
    openapi, spec = _gate_spec()
    wrapped = WerkzeugOpenAPIRequest(request)
    try:
        openapi.validate_request(wrapped)
    except PathNotFound:
        return _error(404, "not found", request.path)
    except SecurityValidationError:
        return _error(401, "cookie 'connect.sid' required", request.path)
    except Exception as exc:  # noqa: BLE001 (openapi-core raises many kinds; each is a 400)
        return _error(400, _describe(exc), request.path)
    template = _template_for(spec, request.path)
    operation = spec["paths"].get(template, {}).get(request.method.lower(), {})
    if operation.get("security", spec["security"]) and not (
            request.headers.get("X-Api-Key") or request.cookies.get("connect.sid")):
        return _error(401, "cookie 'connect.sid' required", request.path)   # an empty key
    declared = _query_names(spec, template, request.method.lower())
    for name in request.args:
        if name not in declared:
            return _error(400, f"Unknown query parameter '{name}'", _express_route(template))
    return None


def check_response(request: Request, response: Response) -> None:
    """Raise SpecViolation unless the spec (as corrected) allows ``response`` to ``request``."""
    openapi, _spec = _gate_spec()
    try:
        openapi.validate_response(WerkzeugOpenAPIRequest(request),
                                  WerkzeugOpenAPIResponse(response))
    except ResponseNotFound:
        _check_error_body(response)
    except Exception as exc:  # any failure of the schema is the fake's bug
        raise SpecViolation(f"{request.method} {request.path} -> {response.status_code}: "
                            f"{_describe(exc)}") from exc


def _check_error_body(response: Response) -> None:
    body = response.get_json(silent=True)
    status = response.status_code
    allowed = status >= 400 or status == 202
    shaped = isinstance(body, Mapping) and (
        isinstance(body.get("message"), str)
        or (isinstance(body.get("error"), str) and body.get("status") == status))
    if not (allowed and shaped):
        raise SpecViolation(f"undocumented answer {status} {body!r}: Seerr sends an error "
                            "status with {message} or {status, error} there")


def _describe(exc: BaseException) -> str:
    """openapi-core's message with the schema errors it wraps, in one line."""
    parts = [str(exc)]
    cause = exc.__cause__
    for error in getattr(cause, "schema_errors", ()) or ():
        parts.append(getattr(error, "message", str(error)))
    if cause is not None and not getattr(cause, "schema_errors", None):
        parts.append(str(cause))
    return "; ".join(dict.fromkeys(part for part in parts if part))


def _template_for(spec: dict[str, Any], path: str) -> str:
    """The spec's path template (``/request/{requestId}``) that ``path`` matched; literal
    segments win over parameters, as they do in openapi-core."""
    relative = path[len(BASE_PATH):]
    candidates = []
    for template in spec["paths"]:
        pattern = "^" + re.sub(r"\\\{\w+\\\}", "[^/]+", re.escape(template)) + "$"
        if re.match(pattern, relative):
            candidates.append((template.count("{"), template))
    return min(candidates)[1] if candidates else relative


def _query_names(spec: dict[str, Any], template: str, method: str) -> set[str]:
    item = spec["paths"].get(template, {})
    parameters = list(item.get("parameters", [])) + list(item.get(method, {}).get(
        "parameters", []))
    return {p["name"] for p in parameters if p.get("in") == "query"}
