"""The SMS Gateway app's own OpenAPI file as a gate on every request, answer and webhook of
the fake phone, checked by ``openapi-core`` (HTTP) and ``openapi-schema-validator`` (webhook
bodies, which the file declares as schemas, not as paths).

Source: ``android-sms-gateway-openapi.json`` beside this file is the app's
``app/src/main/assets/api/swagger.json`` from capcom6/android-sms-gateway at tag v1.68.0
(commit 0cdc5d86c6f3cc24101f27feefd926e801e8b2c7, git blob
3c463d8c1e1082d82b934703a211babf3944e2d9), copied unchanged; Apache-2.0, (c) capcom6. The
phone serves the same file at ``/docs/swagger.json``. It describes the cloud API; the phone's
Local server serves the same paths at its root, so ``base`` is "" there.

``CORRECTIONS`` are the places where the app sends what its file forbids, or serves what it
leaves out; each names the app code it follows. They are applied to the loaded spec, never
to the file, so the fake stays faithful to the app and valid against the file as corrected.
"""

import copy
import functools
import json
import pathlib
from typing import Any

from openapi_core import OpenAPI
from openapi_core.contrib.werkzeug import WerkzeugOpenAPIRequest, WerkzeugOpenAPIResponse
from openapi_core.templating.paths.exceptions import PathNotFound
from openapi_core.validation.request.exceptions import SecurityValidationError
from openapi_schema_validator import OAS30Validator, oas30_format_checker
from werkzeug.wrappers import Request, Response

SPEC_PATH = pathlib.Path(__file__).with_name("android-sms-gateway-openapi.json")
Spec = dict[str, Any]

CORRECTIONS: tuple[tuple[str, str], ...] = (
    ("properties typed `object` beside an `allOf` of a string or integer enum (state, event, "
     "status, type, priority...) lose the `type`",
     "swaggo writes `type: object` there; the app sends the enum's plain value "
     "(domain/ProcessingState.kt and the other enums)"),
    ("ProcessingState gains Cancelling and Cancelled",
     "domain/ProcessingState.kt lists them; the file lags the app"),
    ("smsgateway.WebhookEvent gains sms:cancelled and app:started",
     "modules/webhooks/domain/WebHookEvent.kt"),
    ("MessageState/GetMessageResponse deviceId loses maxLength 21",
     "the Local server answers with its own id, 32 hex characters "
     "(localserver/LocalServerService.kt getDeviceId)"),
    ("GET /health may answer 500 with the health body",
     "localserver/WebService.kt answers InternalServerError when the status is fail"),
    ("GET /device is served, as a list of smsgateway.Device",
     "localserver/WebService.kt route(\"/device\"); the phone has no /devices"),
    ("204 answers lose their empty `content` map",
     "the app answers NoContent with no body (localserver/routes/WebhooksRoutes.kt); an "
     "empty map would make openapi-core ask for one"),
    ("WebHookEvent.payload is anyOf, not oneOf",
     "no payload schema has a required field or forbids others, so every payload matches "
     "all eight and oneOf could never hold"),
)


def _load() -> Spec:
    with SPEC_PATH.open(encoding="utf-8") as handle:
        spec: Spec = json.load(handle)
    return spec


def corrected() -> Spec:
    spec = _load()
    schemas = spec["components"]["schemas"]
    _untype_enum_refs(spec, schemas)
    schemas["smsgateway.ProcessingState"]["enum"] += ["Cancelling", "Cancelled"]
    schemas["smsgateway.WebhookEvent"]["enum"] += ["sms:cancelled", "app:started"]
    for name in ("smsgateway.MessageState", "smsgateway.GetMessageResponse"):
        schemas[name]["properties"]["deviceId"].pop("maxLength")
    health = spec["paths"]["/health"]["get"]["responses"]
    health["500"] = copy.deepcopy(health["503"])
    devices = copy.deepcopy(spec["paths"]["/devices"]["get"])
    spec["paths"]["/device"] = {"get": devices}
    for item in spec["paths"].values():
        for operation in item.values():
            for answer in operation.get("responses", {}).values():
                if answer.get("content") == {}:
                    answer.pop("content")
    payload = schemas["WebHookEvent"]["properties"]["payload"]
    payload["anyOf"] = payload.pop("oneOf")
    return spec


def _untype_enum_refs(node: Any, schemas: Spec) -> None:
    if isinstance(node, dict):
        refs = [item.get("$ref", "") for item in node.get("allOf", []) if isinstance(item, dict)]
        if len(refs) == 1 and node.get("type") == "object":
            target = schemas.get(refs[0].rsplit("/", 1)[-1], {})
            if target.get("type") != "object":
                node.pop("type")
        for value in node.values():
            _untype_enum_refs(value, schemas)
    elif isinstance(node, list):
        for value in node:
            _untype_enum_refs(value, schemas)


@functools.cache
def _gate(base: str) -> tuple[OpenAPI, Spec]:
    """Built once per base path (openapi-core checks the spec itself, about a second)."""
    spec = corrected()
    spec["servers"] = [{"url": base or "/"}]
    return OpenAPI.from_dict(spec), spec


class SpecViolation(AssertionError):
    """The fake sent or answered what the app's file (as corrected) does not allow."""


def check_request(request: Request, base: str) -> int | None:
    """None when the file allows ``request``; else the status the phone answers instead
    (401 for missing credentials, 404 for a path it does not serve, 400 for the rest)."""
    openapi, _ = _gate(base)
    try:
        openapi.validate_request(WerkzeugOpenAPIRequest(request))
    except PathNotFound:
        return 404
    except SecurityValidationError:
        return 401
    except Exception:  # noqa: BLE001 (openapi-core raises many kinds; each is a 400)
        return 400
    return None


def check_response(request: Request, response: Response, base: str) -> None:
    """Raise SpecViolation unless the file allows ``response``. An empty 401 is ktor's
    Basic-auth challenge (no body), which the file cannot describe."""
    if response.status_code == 401 and not response.get_data():
        return
    openapi, _ = _gate(base)
    try:
        openapi.validate_response(WerkzeugOpenAPIRequest(request),
                                  WerkzeugOpenAPIResponse(response))
    except Exception as exc:
        raise SpecViolation(f"{request.method} {request.path} -> {response.status_code}: "
                            f"{exc} {getattr(exc, '__cause__', '') or ''}") from exc


@functools.cache
def _schema_validator(name: str) -> OAS30Validator:
    spec = corrected()
    root = {"$ref": f"#/components/schemas/{name}", "components": spec["components"]}
    return OAS30Validator(root, format_checker=oas30_format_checker)


PAYLOAD_SCHEMAS = {"sms:received": "SmsReceivedPayload", "sms:sent": "SmsSentPayload",
                   "sms:delivered": "SmsDeliveredPayload", "sms:failed": "SmsFailedPayload",
                   "system:ping": "SystemPingPayload"}


def check_webhook(envelope: Any) -> None:
    """Raise SpecViolation unless ``envelope`` is a ``WebHookEvent`` whose payload matches
    its event's own schema."""
    problems = [error.message for error in _schema_validator("WebHookEvent").iter_errors(
        envelope)]
    name = PAYLOAD_SCHEMAS.get(envelope.get("event", "")) if isinstance(envelope, dict) else None
    if name:
        problems += [error.message for error in
                     _schema_validator(name).iter_errors(envelope.get("payload"))]
    if problems:
        raise SpecViolation("webhook body: " + "; ".join(problems))
