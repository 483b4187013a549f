"""Masking secrets in text that came from outside: servers' answers, library errors, URLs.

``scrub`` is the one scrubber for every text that comes from Sonarr, Radarr or a download
client they quote (tool results, the messages the model sees and relays into texts, log
lines, ``mediabot check``'s lines). It removes what would *unlock* something:

* URL userinfo (``http://admin:hunter2@qbit.lan:8080`` -> ``http://qbit.lan:8080``), whole;
* the query string of any URL or path (``?apikey=...&term=...``), and any ``apikey=``,
  ``api_key=``, ``key=``, ``token=`` or ``password=`` value standing outside one;
* each of ``secrets`` (our own API keys) and ``words`` (a failed request's search terms).

Host names, ports and paths stay, in a member's text too: they open nothing without the
credentials above, they are what an admin needs to find the broken download client
("qBittorrent at http://qbit.lan:8080 is not answering"), and a member who relays them only
repeats what every device in the house can see. Cut such a text only after scrubbing:
a URL cut between the password and its ``@`` no longer looks like userinfo.

Only texts a secret can really be in go through here, never our own file names or config
paths. A secret is masked only as a whole token of its own (not in the middle of a longer
word), and a secret shorter than ``MIN_SECRET_CHARS`` is never searched for at all: masking
"key" would turn ``/etc/key.toml`` into ``/etc/***.toml`` while hiding nothing worth hiding.
"""

import re
from collections.abc import Iterable

MIN_SECRET_CHARS = 6
MASK = "***"
_SECRET_WORDS = r"api[-_]?key|key|(?:access_|auth_)?token|pass(?:word)?"
_QUERY_SECRET = re.compile(rf"(?i)\b((?:{_SECRET_WORDS})=)[^&\s'\"<>]+")
_SCHEME = r"(?i)\b([a-z][a-z0-9+.-]*://)"
# greedy up to the last @ before the host: a password may hold an unencoded @
_URL_CREDENTIALS = re.compile(_SCHEME + r"[^/?#\s'\"<>]*@")
_URL_QUERY = re.compile(r"((?:https?://|/)[^\s?#'\"<>]*)\?(?=[^\s#'\"<>]*=)[^\s#'\"<>]*")


def scrub(text: str, secrets: Iterable[str | None] = (), words: Iterable[str] = ()) -> str:
    """``text`` from a server, without URL userinfo, query strings, key/token/password
    values, ``secrets`` (masked as whole tokens) or ``words`` (masked anywhere)."""
    text = _URL_CREDENTIALS.sub(r"\1", text)
    text = _QUERY_SECRET.sub(rf"\1{MASK}", text)
    text = _URL_QUERY.sub(r"\1", text)
    for secret in secrets:
        text = mask_secret(text, secret)
    for word in sorted(filter(None, set(words)), key=len, reverse=True):
        text = re.sub(re.escape(word), MASK, text, flags=re.IGNORECASE)
    return text


def mask_secret(text: str, secret: str | None) -> str:
    """``text`` with every standalone occurrence of ``secret`` replaced by ***."""
    if not secret or len(secret) < MIN_SECRET_CHARS:
        return text
    pattern = rf"(?<![A-Za-z0-9]){re.escape(secret)}(?![A-Za-z0-9])"
    return re.sub(pattern, MASK, text, flags=re.IGNORECASE)


def mask_url_secrets(text: str) -> str:
    """A value of the operator's own (a config setting shown in an error): ``user:password@``
    and key/token values masked, the rest kept so the operator recognises the setting."""
    text = _QUERY_SECRET.sub(rf"\1{MASK}", text)
    return _URL_CREDENTIALS.sub(rf"\1{MASK}@", text)
