"""Is a URL one that a service outside the house (Twilio fetching an MMS picture) may be
handed? Only an https URL without credentials that names a public host.

Twilio cannot fetch a private address, and a URL with ``user:password@`` would carry the
password out of the house; plain http is refused too (the picture could be swapped on the
way). The check is on the text alone, with no DNS lookup (a name that resolves to a private
address passes; it is still useless to Twilio, but nothing leaks): an IP literal must be
global (``ipaddress``: not loopback, private, link-local, shared, reserved or multicast);
a name must have a dot, end in an alphabetic top-level label and not be one of the
household suffixes below.
"""

import ipaddress
import re
from collections.abc import Iterable
from typing import TypeGuard
from urllib.parse import urlsplit

HOUSE_SUFFIXES = (".local", ".lan", ".home.arpa", ".internal", ".localhost", ".home",
                  ".localdomain", ".intranet", ".corp", ".private")
_TOP_LABEL = re.compile(r"^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$")


def is_public_https(url: object) -> TypeGuard[str]:
    """True for ``https://image.tmdb.org/...``; False for http, userinfo, an IP that is
    not global, a bare or household name, or anything that is not a URL at all."""
    if not isinstance(url, str) or any(c.isspace() for c in url):
        return False
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port   # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        return False
    if parts.scheme.lower() != "https" or not host or "@" in parts.netloc:
        return False
    ip = _ip(host)
    return _public_ip(ip) if ip else _public_name(host)


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _public_ip(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def _public_name(host: str) -> bool:
    name = host.lower().rstrip(".")
    if "." not in name or name.endswith(HOUSE_SUFFIXES):
        return False
    return bool(_TOP_LABEL.match(name.rsplit(".", 1)[1]))


MAX_POSTERS = 3   # Twilio takes up to 10 media per message; three keep an MMS small


def web_urls(urls: Iterable[object], limit: int = MAX_POSTERS) -> list[str]:
    """The URLs among ``urls`` Twilio may fetch (public https, no credentials), each once,
    in order, at most ``limit``. The sender checks again what it is handed."""
    seen: list[str] = []
    for url in urls:
        if is_public_https(url) and url not in seen:
            seen.append(url)
    return seen[:limit]
