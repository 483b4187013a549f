"""Masking secrets in text that came from outside: URLs, library errors, tracebacks.

Only texts a secret can really be in go through here (a URL with credentials, an exception
from a client that was handed the key), never our own file names or config paths. A secret
is masked only as a whole token of its own (not in the middle of a longer word), and a
secret shorter than ``MIN_SECRET_CHARS`` is never searched for at all: masking "key" would
turn ``/etc/key.toml`` into ``/etc/***.toml`` while hiding nothing worth hiding.
"""

import re

MIN_SECRET_CHARS = 6
MASK = "***"
_QUERY_SECRET = re.compile(r"(?i)\b((?:api[-_]?key|key|(?:access_|auth_)?token)=)[^&\s'\"]+")
_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s]+@")


def mask_secret(text: str, secret: str | None) -> str:
    """``text`` with every standalone occurrence of ``secret`` replaced by ***."""
    if not secret or len(secret) < MIN_SECRET_CHARS:
        return text
    pattern = rf"(?<![A-Za-z0-9]){re.escape(secret)}(?![A-Za-z0-9])"
    return re.sub(pattern, MASK, text, flags=re.IGNORECASE)


def mask_url_secrets(text: str) -> str:
    """Mask ``user:password@`` in URLs and any key or token in a query string."""
    text = _QUERY_SECRET.sub(rf"\1{MASK}", text)
    return _URL_CREDENTIALS.sub(rf"\1{MASK}@", text)


def redact(text: str, secrets=()) -> str:
    """URL credentials, query-string keys, then each of ``secrets`` (see ``mask_secret``)."""
    text = mask_url_secrets(text)
    for secret in secrets:
        text = mask_secret(text, secret)
    return text
