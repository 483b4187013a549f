"""The one way the webhooks check who is calling and answer what they refuse.

Sonarr and Radarr send HTTP Basic with ``[notifications] webhook_secret`` as the password,
encoded as ISO-8859-1 (ManagedHttpDispatcher), curl and browsers as UTF-8: either encoding
of the secret is accepted, any user name. Seerr sends its "Authorization Header" setting
verbatim, so ``Bearer <secret>`` is accepted there too. A refusal or a bad body is one plain
line, which all three show in their log as it is.
"""

import base64
import binascii
import hmac

from flask import Response, current_app


def password_matches(header: str | None, secret: str) -> bool:
    """Does a Basic ``Authorization`` header carry ``secret`` as its password?

    The password bytes are compared with the secret in UTF-8 and in ISO-8859-1 (what
    Sonarr/Radarr send); any user name is accepted. Constant-time per candidate.
    """
    scheme, _, token = (header or "").partition(" ")
    if scheme.lower() != "basic":
        return False
    try:
        decoded = base64.b64decode(token.strip(), validate=True)
    except (binascii.Error, ValueError):
        return False
    _, colon, given = decoded.partition(b":")
    if not colon:
        return False
    candidates = {secret.encode("utf-8")}
    try:
        candidates.add(secret.encode("iso-8859-1"))
    except UnicodeEncodeError:
        pass  # a character Sonarr/Radarr cannot send: only UTF-8 clients can match
    return any([hmac.compare_digest(given, candidate) for candidate in candidates])


def bearer_or_basic(header: str | None, secret: str) -> bool:
    """Does ``Authorization`` carry the secret, as ``Bearer <secret>`` or Basic?"""
    scheme, _, token = (header or "").strip().partition(" ")
    if scheme.lower() == "bearer":
        return hmac.compare_digest(token.strip().encode("utf-8"), secret.encode("utf-8"))
    return password_matches(header, secret)


def plain(line: str, status: int) -> Response:
    """One plain line: Sonarr, Radarr and Seerr show a failed call's body in their log as it is."""
    return current_app.response_class(line + "\n", status=status,
                                      mimetype="text/plain")
