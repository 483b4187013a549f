"""What the gateway needs to be reached, as one frozen value, and the mode its URL names.

The same app is reached three ways, told apart by the URL alone:

- **Local**: the phone's own server on the LAN, ``http://192.168.1.60:8080`` (plain HTTP,
  no path). mediabot reads the phone's inbox; nothing calls in.
- **Cloud**: ``https://api.sms-gate.app/3rdparty/v1``; the phone posts signed webhooks.
- **Private**: a self-hosted server, ``https://host/api/3rdparty/v1``; as the cloud.

``GatewaySettings`` is built by whoever reads the config (this package does not import it);
``settings_problem`` names what is wrong with one in a sentence with the fix, or None, so a
config loader can refuse it once, at start. Secrets are kept out of ``repr``.
"""

from dataclasses import dataclass, field
from enum import StrEnum
from urllib.parse import urlsplit

CLOUD_URL = "https://api.sms-gate.app/3rdparty/v1"
THIRD_PARTY_PATH = "/3rdparty/v1"
DEFAULT_TIMEOUT = 10.0     # seconds for one call; the phone answers a LAN call in well under 1 s


class Mode(StrEnum):
    LOCAL = "local"
    CLOUD = "cloud"
    PRIVATE = "private"


@dataclass(frozen=True)
class GatewaySettings:
    """``url`` is the base every path is joined to; ``timeout`` bounds each call (connect
    and read), ``poll_seconds`` how often Local mode reads the inbox, ``device_id`` picks one
    phone of several on a cloud account (without it the server picks one at random)."""

    url: str
    username: str
    password: str = field(repr=False)
    signing_key: str = field(default="", repr=False)
    timeout: float = DEFAULT_TIMEOUT
    poll_seconds: float = 3.0
    device_id: str = ""

    @property
    def base(self) -> str:
        return self.url.rstrip("/")

    @property
    def mode(self) -> Mode:
        return mode_of(self.url)


def mode_of(url: str) -> Mode:
    """Local for a URL without the third-party API path (the phone itself), Cloud for the
    app's own host, Private for any other host serving that path."""
    parts = urlsplit(url)
    if not parts.path.rstrip("/").endswith(THIRD_PARTY_PATH):
        return Mode.LOCAL
    return Mode.CLOUD if parts.hostname == urlsplit(CLOUD_URL).hostname else Mode.PRIVATE


def settings_problem(settings: GatewaySettings) -> str | None:
    """What makes these settings unusable, with the fix, or None. The password and key are
    never quoted."""
    parts = urlsplit(settings.url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return (f"url {settings.url!r} is not an http(s) URL; use the phone's "
                "http://<phone-ip>:8080, or " + CLOUD_URL)
    mode = settings.mode
    if mode is not Mode.LOCAL and parts.scheme != "https":
        return f"url {settings.url!r}: the {mode} API is served over https only"
    if mode is Mode.PRIVATE and not parts.path.rstrip("/").endswith("/api" + THIRD_PARTY_PATH):
        return (f"url {settings.url!r}: a private server's API is at "
                "https://<host>/api/3rdparty/v1 (the /api prefix is needed)")
    if not settings.username or not settings.password:
        return "username and password are both needed (shown in the app's Home screen)"
    if settings.timeout <= 0 or settings.poll_seconds <= 0:
        return "timeout and poll_seconds must be more than 0 seconds"
    if mode is not Mode.LOCAL and not settings.signing_key:
        return (f"signing_key is needed in {mode} mode, to check the phone's webhooks "
                "(the app's Settings > Webhooks > Signing Key)")
    return None
