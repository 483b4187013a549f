"""What a config holds: one frozen dataclass per TOML section, ``Config`` over them, the
one error every config problem is reported in, and ``webhook_url``.

Reading a file into these is ``load.py``; what makes a value wrong is ``validate.py``.
Every field's default is what an empty file means.
"""

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field

from mediabot.store.db import Role
from mediabot.text.localtime import zone_named
from mediabot.text.phones import DEFAULT_REGION

ROLES = tuple(role.value for role in Role)   # plain strings, for click.Choice
SECRET_KEYS = frozenset({"api_key", "auth_token", "webhook_secret", "password", "signing_key"})


class ConfigError(Exception):
    """Raised with every problem of one config file; ``problems`` holds one line each."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class ServerConfig:
    public_url: str = ""
    host: str = "127.0.0.1"
    port: int = 8080
    # Open connections waitress keeps (its default, 100, let ~100 slow clients shut out
    # Twilio); each one is a file descriptor, and serve raises its own limit to fit.
    connection_limit: int = 500
    # A connection silent this long is closed (waitress's default is 120).
    channel_timeout_seconds: float = 30.0
    # SIGTERM: how long turns in flight may finish; below systemd's TimeoutStopSec=45.
    drain_seconds: float = 20.0
    timezone: str = ""      # IANA name; "" = the host's zone

    @property
    def zone(self) -> dt.tzinfo:
        """The household's zone, in which every time a person reads is shown."""
        return zone_named(self.timezone)


def webhook_url(public_url: str) -> str:
    """The URL Twilio calls and signs: ``public_url`` + "/sms".

    Operators also paste the webhook URL itself into public_url; taken literally, every SMS
    would then be refused with 403, so a URL already ending in /sms is used as it is.
    """
    public = public_url.rstrip("/")
    return public if public.endswith("/sms") else public + "/sms"


@dataclass(frozen=True)
class DatabaseConfig:
    path: str = "mediabot.db"


@dataclass(frozen=True)
class TwilioConfig:
    account_sid: str = ""
    auth_token: str = field(default="", repr=False)
    from_number: str = ""
    messaging_service_sid: str = ""
    api_base_url: str = ""
    validate_signature: bool = True
    timeout_seconds: float = 10.0
    # WhatsApp on the same account: the sender (E.164, or "whatsapp:+1...", or the
    # messaging service "MG..."); what a notice outside the 24-hour window does ("wait",
    # "template", "sms"); the approved Content templates (HX...) for each kind of notice.
    whatsapp_from: str = ""
    whatsapp_outside_window: str = "wait"
    whatsapp_ready_template: str = ""
    whatsapp_approval_template: str = ""


@dataclass(frozen=True)
class SmsGatewayConfig:
    """The household's Android phone as its SMS carrier ("SMS Gateway for Android"): the
    phone's Local server (``http://<phone-ip>:8080``), the app's cloud or a private server
    (``.../3rdparty/v1``); the mode is read from the URL (``carrier.sms_gateway.settings``).
    ``signing_key`` checks the webhooks of the cloud and private modes; ``poll_seconds`` is
    how often Local mode reads the phone's inbox; ``device_id`` picks one phone of several
    on a cloud account."""

    url: str = ""
    username: str = ""
    password: str = field(default="", repr=False)
    signing_key: str = field(default="", repr=False)
    poll_seconds: float = 3.0
    timeout_seconds: float = 10.0
    device_id: str = ""


@dataclass(frozen=True)
class LLMConfig:
    base_url: str = "https://api.openai.com/v1"
    api_key: str = field(default="", repr=False)
    model: str = "gpt-4o-mini"
    timeout_seconds: float = 120.0   # a local model on a CPU reads ~1,800 tokens uncached
    max_retries: int = 1
    max_tool_rounds: int = 6
    temperature: float = 0.3
    max_reply_tokens: int = 400
    # llama-server with several slots: each person's requests name one (id_slot), so each
    # keeps their own prompt between texts; other servers never get it (conversation.slots).
    pin_slots: bool = True
    # llama-server only (others never get it): once a reply has gone, have the server read
    # the prompt the person's next text will get, so that text reads only its own tokens
    # (model.read_ahead).
    read_ahead: bool = True


@dataclass(frozen=True)
class HistoryConfig:
    max_messages: int = 20
    max_context_tokens: int = 4000   # the hard cap, from the model's context size
    # What a text's first request may cost (conversation.prompt.window): a cold read on a
    # home server's CPU at 20-60 tokens a second is 25-70 s at this size, of which the shared
    # rules and tools take ~750 (docs/models.md, "What a text costs").
    max_prompt_tokens: int = 1400
    fetch_limit: int = 60
    summaries: bool = False
    retention_days: int = 90


@dataclass(frozen=True)
class ConfirmationConfig:
    ttl_seconds: int = 300
    sweep_interval_seconds: int = 60


@dataclass(frozen=True)
class ArrConfig:
    url: str = ""
    api_key: str = field(default="", repr=False)
    root_folder: str = ""
    quality_profile: str = ""
    timeout_seconds: float = 10.0


@dataclass(frozen=True)
class SeerrConfig:
    """The household's Seerr (Overseerr/Jellyseerr): with it, adds are Seerr requests filed
    as the member's own Seerr user (``[[users]] seerr_user``)."""

    url: str = ""
    api_key: str = field(default="", repr=False)
    timeout_seconds: float = 10.0
    # the "ready" text carries Seerr's link to the title on Plex/Jellyfin (its mediaUrl)
    link_to_library: bool = False


@dataclass(frozen=True)
class SmsConfig:
    max_reply_chars: int = 480
    allow_emoji: bool = False
    unknown_senders: str = "ignore"
    rate_limit_per_hour: int = 30
    default_region: str = DEFAULT_REGION    # how numbers written without +country are read
    posters: bool = False
    language: str = "en"    # a BCP 47 tag with a catalog in mediabot/locales (text.language)
    # Letters outside GSM-7 ("á", "ç", "ã") in an SMS: "fold" them to their GSM-7 neighbours
    # (160 characters a segment) or "keep" them (the text goes as UCS-2, 70 a segment);
    # "": the recipient's language decides (text.sms.accents_for: "keep" for Portuguese).
    accents: str = ""


@dataclass(frozen=True)
class RequestsConfig:
    """Household rules for adds: admin approval of members' adds, weekly quotas (0 = none),
    and how often one title may be searched for again."""

    approval: str = "none"
    approval_ttl_hours: int = 48
    movies_per_week: int = 0
    seasons_per_week: int = 0
    search_again_hours: int = 6


@dataclass(frozen=True)
class NotificationsConfig:
    webhook_secret: str = field(default="", repr=False)


@dataclass(frozen=True)
class UserConfig:
    phone: str
    name: str = ""
    role: str = Role.MEMBER
    channel: str = ""     # "sms" or "whatsapp" for notices; "": the one they used last
    language: str = ""    # a BCP 47 tag; "": the household's [sms] language
    seerr_user: str = ""  # their Seerr user: an id, email or username; "": not linked


@dataclass(frozen=True)
class Config:
    server: ServerConfig = ServerConfig()
    database: DatabaseConfig = DatabaseConfig()
    twilio: TwilioConfig = TwilioConfig()
    sms_gateway: SmsGatewayConfig | None = None
    llm: LLMConfig = LLMConfig()
    history: HistoryConfig = HistoryConfig()
    confirmation: ConfirmationConfig = ConfirmationConfig()
    sonarr: ArrConfig | None = None
    radarr: ArrConfig | None = None
    seerr: SeerrConfig | None = None
    sms: SmsConfig = SmsConfig()
    notifications: NotificationsConfig = NotificationsConfig()
    requests: RequestsConfig = RequestsConfig()
    users: tuple[UserConfig, ...] = ()
    source: str = "<defaults>"


# What a command needs beyond a well-formed file: one problem line per missing key.
Need = Callable[[Config], list[str]]

# The TOML tables and the dataclass each is read into ([[users]] is read on its own).
SECTIONS: dict[str, type] = {
    "server": ServerConfig,
    "database": DatabaseConfig,
    "twilio": TwilioConfig,
    "sms_gateway": SmsGatewayConfig,
    "llm": LLMConfig,
    "history": HistoryConfig,
    "confirmation": ConfirmationConfig,
    "sonarr": ArrConfig,
    "radarr": ArrConfig,
    "seerr": SeerrConfig,
    "sms": SmsConfig,
    "notifications": NotificationsConfig,
    "requests": RequestsConfig,
}
OPTIONAL_SECTIONS = ("sonarr", "radarr")
