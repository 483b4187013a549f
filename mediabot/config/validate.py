"""What makes a config wrong, and what a command needs beyond a well-formed file.

``find_problems`` holds every section's values to their rules (ranges, choices, URLs, a
real time zone and region, a language with a catalog); ``read_users`` checks ``[[users]]``
while reading it. A need (``twilio_needs``, ``model_needs``) is asked only by the commands
that talk to that service. Each problem is one line naming the file, the key, the bad value
(a secret never shown, a URL without its credentials) and the fix.
"""

import re
import unicodedata
from urllib.parse import urlparse

from mediabot.config.schema import (
    OPTIONAL_SECTIONS,
    ROLES,
    SECRET_KEYS,
    ArrConfig,
    Config,
    HistoryConfig,
    SeerrConfig,
    ServerConfig,
    SmsConfig,
    TwilioConfig,
    UserConfig,
)
from mediabot.store.db import Role
from mediabot.text.language import problem as language_problem
from mediabot.text.masking import mask_url_secrets
from mediabot.text.phones import (
    CHANNELS,
    DEFAULT_REGION,
    E164,
    is_region,
    normalise_phone,
    split_channel,
)

SENT_SECRETS = ("api_key", "auth_token", "password")   # sent by mediabot in a header
ACCENTS = ("fold", "keep", "")   # "": the language's default (text.sms.accents_for)
POSITIVE_KEYS = {
    "server": ("port", "connection_limit", "channel_timeout_seconds", "drain_seconds"),
    "twilio": ("timeout_seconds",),
    "sms_gateway": ("poll_seconds", "timeout_seconds"),
    "llm": ("timeout_seconds", "max_tool_rounds", "max_reply_tokens"),
    "history": ("max_messages", "max_context_tokens", "max_prompt_tokens", "fetch_limit",
                "retention_days"),
    "confirmation": ("ttl_seconds", "sweep_interval_seconds"),
    "sonarr": ("timeout_seconds",),
    "radarr": ("timeout_seconds",),
    "seerr": ("timeout_seconds",),
    "sms": ("max_reply_chars", "rate_limit_per_hour"),
    "requests": ("approval_ttl_hours", "search_again_hours"),
}
MIN_REPLY_TOKENS = 64   # a tool call with its arguments, or a three-sentence SMS
NON_NEGATIVE_KEYS = {"llm": ("max_retries", "temperature"),
                     "requests": ("movies_per_week", "seasons_per_week")}
CHOICES = {("sms", "unknown_senders"): ("ignore", "reply"),
           ("twilio", "whatsapp_outside_window"): ("wait", "template", "sms"),
           ("requests", "approval"): ("none", "members")}
USER_KEYS = ("phone", "name", "role", "channel", "language", "seerr_user")
MAX_PORT = 65535
SYSTEMD_STOP_SECONDS = 45  # TimeoutStopSec in systemd/mediabot.service


def find_problems(config: Config, source: str, require_arr_keys: bool = True) -> list[str]:
    """Every value of ``config`` that breaks its rule, one line each; [] when none does."""
    problems = []
    url = config.server.public_url
    if url and not _is_http_url(url):
        problems.append(f"{source}: [server] public_url = {show_value('url', url)} is not an "
                        "http(s) URL; write it like \"https://sms.example.com\"")
    problems += _validate_port(config.server, source)
    problems += _validate_ranges(config, source)
    problems += _validate_drain(config.server, source)
    problems += _validate_history(config.history, source)
    problems += _validate_timezone(config.server, source)
    problems += _validate_region(config.sms, source)
    problems += _validate_language(config.sms, source)
    for name in OPTIONAL_SECTIONS:
        problems += _validate_arr(name, getattr(config, name), source, require_arr_keys)
    problems += _validate_seerr(config.seerr, source, require_arr_keys)
    if 0 < config.llm.max_reply_tokens < MIN_REPLY_TOKENS:
        problems.append(f"{source}: [llm] max_reply_tokens = {config.llm.max_reply_tokens} is "
                        f"too few for a tool call or an SMS reply; use at least "
                        f"{MIN_REPLY_TOKENS} (the default is 400)")
    if not _is_http_url(config.llm.base_url):
        problems.append(f"{source}: [llm] base_url = {show_value('url', config.llm.base_url)} "
                        "is not an http(s) URL; e.g. \"https://api.openai.com/v1\" or "
                        "\"http://localhost:11434/v1\"")
    if config.twilio.api_base_url and not _is_http_url(config.twilio.api_base_url):
        problems.append(f"{source}: [twilio] api_base_url = "
                        f"{show_value('url', config.twilio.api_base_url)} is not an "
                        "http(s) URL; leave it empty to use Twilio's")
    return problems


def _validate_ranges(config: Config, source: str) -> list[str]:
    """POSITIVE_KEYS above 0, NON_NEGATIVE_KEYS at least 0, CHOICES among their values."""
    problems = []
    for name, keys in POSITIVE_KEYS.items():
        section = getattr(config, name)
        for key in keys if section is not None else ():
            value = getattr(section, key)
            if value <= 0:
                problems.append(f"{source}: [{name}] {key} = {value!r} must be greater than 0")
    for name, keys in NON_NEGATIVE_KEYS.items():
        for key in keys:
            value = getattr(getattr(config, name), key)
            if value < 0:
                problems.append(f"{source}: [{name}] {key} = {value!r} must be 0 or more")
    for (name, key), allowed in CHOICES.items():
        value = getattr(getattr(config, name), key)
        if value not in allowed:
            problems.append(f"{source}: [{name}] {key} = {value!r} is not allowed; use "
                            + " or ".join(f'"{a}"' for a in allowed))
    return problems


def _validate_drain(server: ServerConfig, source: str) -> list[str]:
    if server.drain_seconds < SYSTEMD_STOP_SECONDS:
        return []
    return [f"{source}: [server] drain_seconds = {server.drain_seconds:g} must be below "
            f"{SYSTEMD_STOP_SECONDS}: systemd kills mediabot after TimeoutStopSec="
            f"{SYSTEMD_STOP_SECONDS} (systemd/mediabot.service), in the middle of the drain; "
            "use 20, the default"]


def _validate_history(history: HistoryConfig, source: str) -> list[str]:
    """The window is built from the fetched rows: fetching fewer than it may hold would drop
    older messages without the pruned line (or a summary) ever naming them."""
    if 0 < history.fetch_limit < history.max_messages:
        return [f"{source}: [history] fetch_limit = {history.fetch_limit} is smaller than "
                f"max_messages = {history.max_messages}; set fetch_limit to at least "
                f"{history.max_messages} (or lower max_messages)"]
    return []


# Names zoneinfo knows that are a fixed offset or an old POSIX rule, not a place: "EST"
# never switches to daylight saving, so every time shown would be an hour off all summer.
NOT_A_PLACE = {"EST": "America/New_York", "MST": "America/Denver", "HST": "Pacific/Honolulu",
               "EST5EDT": "America/New_York", "CST6CDT": "America/Chicago",
               "MST7MDT": "America/Denver", "PST8PDT": "America/Los_Angeles"}


def _validate_timezone(server: ServerConfig, source: str) -> list[str]:
    name = server.timezone
    if name.upper() in NOT_A_PLACE:
        return [f"{source}: [server] timezone = {name!r} is a fixed offset without daylight "
                f"saving; use the place's IANA name, e.g. \"{NOT_A_PLACE[name.upper()]}\""]
    try:
        server.zone  # noqa: B018 - reading it raises ValueError for an unknown zone
    except ValueError:
        return [f"{source}: [server] timezone = {name!r} is not a time zone; use an "
                "IANA name like \"America/New_York\" or \"Europe/London\" (list them with "
                "`timedatectl list-timezones`), or leave it empty for this machine's zone"]
    return []


def _validate_port(server: ServerConfig, source: str) -> list[str]:
    if server.port <= MAX_PORT:
        return []   # 0 and below: _validate_ranges
    return [f"{source}: [server] port = {server.port} is not a TCP port; use one from 1 to "
            f"{MAX_PORT}, e.g. 8080"]


def model_needs(config: Config) -> list[str]:
    """A need (``load_config``) of the daemon: OpenAI's URL (the default) without a key means
    no [llm] was written at all, most likely."""
    llm = config.llm
    if "api.openai.com" not in llm.base_url or llm.api_key:
        return []
    return [f"{config.source}: [llm] api_key is required for OpenAI ({llm.base_url}); set it "
            "(or MEDIABOT_LLM_API_KEY), or point [llm] base_url and model at your own model "
            "server, e.g. \"http://localhost:11434/v1\""]


def _validate_language(sms: SmsConfig, source: str) -> list[str]:
    problems = []
    if why := language_problem(sms.language):
        problems.append(f"{source}: [sms] language = {why}")
    if sms.accents not in ACCENTS:
        problems.append(f"{source}: [sms] accents = {sms.accents!r} is not a choice; use "
                        "\"fold\" (GSM-7 neighbours, 160 characters a segment), \"keep\" "
                        "(UCS-2, 70 a segment), or leave it out for the language's default")
    return problems


def _validate_region(sms: SmsConfig, source: str) -> list[str]:
    if is_region(sms.default_region):
        return []
    hint = ' (the United Kingdom is "GB")' if sms.default_region.upper() == "UK" else ""
    return [f"{source}: [sms] default_region = {sms.default_region!r} is not a region with "
            f"known phone numbers{hint}; use a two-letter ISO 3166 code like \"US\", \"GB\" "
            "or \"DE\""]


def twilio_needs(config: Config) -> list[str]:
    """A need (``load_config``) of whatever talks to Twilio (``serve``, and ``check``, which
    checks a config for it): the public URL Twilio calls and signs, the account, its token
    and a sender, each well formed. Demo, eval, chat and users never reach Twilio."""
    problems = []
    if not config.server.public_url:
        problems.append(f"{config.source}: [server] public_url is required; set it to the "
                        "https URL Twilio calls, e.g. \"https://sms.example.com\"")
    return problems + _validate_twilio(config.twilio, config.source)


def _validate_twilio(twilio: TwilioConfig, source: str) -> list[str]:
    problems = []
    if not twilio.account_sid:
        problems.append(f"{source}: [twilio] account_sid is required; copy it from the Twilio "
                        "console (it starts with AC)")
    if not twilio.auth_token:
        problems.append(f"{source}: [twilio] auth_token is required; copy it from the Twilio "
                        "console into it, MEDIABOT_TWILIO_AUTH_TOKEN (the env file beside the "
                        "config) or a file named by auth_token_file")
    if not twilio.from_number and not twilio.messaging_service_sid and not twilio.whatsapp_from:
        problems.append(f"{source}: [twilio] from_number or messaging_service_sid is required; "
                        "set from_number to your Twilio number, e.g. \"+15550001111\"")
    elif twilio.from_number and not E164.match(twilio.from_number):
        problems.append(f"{source}: [twilio] from_number = {twilio.from_number!r} is not in "
                        "E.164; write it like \"+15550001111\"")
    return problems + _validate_whatsapp(twilio, source)


def _validate_whatsapp(twilio: TwilioConfig, source: str) -> list[str]:
    """``whatsapp_from`` is a number or a messaging service; the templates are Content SIDs;
    a fallback names something that exists."""
    problems = []
    sender = twilio.whatsapp_from
    if sender and not (E164.match(split_channel(sender)[1]) or sender.startswith("MG")):
        problems.append(f"{source}: [twilio] whatsapp_from = {sender!r} is neither a number in "
                        "E.164 (\"whatsapp:+14155238886\") nor a messaging service (MG...)")
    for key in ("whatsapp_ready_template", "whatsapp_approval_template"):
        value = getattr(twilio, key)
        if value and not re.fullmatch(r"HX[0-9a-fA-F]{32}", value):
            problems.append(f"{source}: [twilio] {key} = {value!r} is not a Content SID; copy "
                            "the HX... SID of the approved template from the Content Template "
                            "Builder")
    if (sender and twilio.whatsapp_outside_window == "sms" and not twilio.from_number
            and not twilio.messaging_service_sid):
        problems.append(f"{source}: [twilio] whatsapp_outside_window = \"sms\" needs an SMS "
                        "sender; set from_number, or choose \"wait\" or \"template\"")
    return problems


def _validate_arr(name: str, arr: ArrConfig | None, source: str,
                  require_key: bool = True) -> list[str]:
    if arr is None:
        return []
    problems = []
    if not arr.url:
        problems.append(f"{source}: [{name}] url is required when [{name}] is present; "
                        f"e.g. \"http://localhost:{8989 if name == 'sonarr' else 7878}\", "
                        f"or remove [{name}] to turn its tools off")
    elif not _is_http_url(arr.url):
        problems.append(f"{source}: [{name}] url = {show_value('url', arr.url)} is not an "
                        "http(s) URL")
    if require_key and not arr.api_key:
        problems.append(f"{source}: [{name}] api_key is required when [{name}] is present; "
                        f"find it under Settings > General > Security in {name.title()}, "
                        f"or set MEDIABOT_{name.upper()}_API_KEY")
    return problems


def _validate_seerr(seerr: SeerrConfig | None, source: str,
                    require_key: bool = True) -> list[str]:
    if seerr is None:
        return []
    problems = []
    if not seerr.url:
        problems.append(f"{source}: [seerr] url is required when [seerr] is present; e.g. "
                        "\"http://localhost:5055\", or remove [seerr] to file adds in "
                        "Sonarr/Radarr directly")
    elif not _is_http_url(seerr.url):
        problems.append(f"{source}: [seerr] url = {show_value('url', seerr.url)} is not an "
                        "http(s) URL")
    if require_key and not seerr.api_key:
        problems.append(f"{source}: [seerr] api_key is required when [seerr] is present; "
                        "find it under Settings > General (API Key) in Seerr, or set "
                        "MEDIABOT_SEERR_API_KEY")
    return problems


def _region(sms: SmsConfig | None) -> str:
    """The region [[users]] phones are read in (a bad one is reported by _validate_region)."""
    region = sms.default_region if sms is not None else DEFAULT_REGION
    return region if is_region(region) else DEFAULT_REGION


def read_users(entries: object, source: str, problems: list[str],
               sms: SmsConfig | None = None) -> tuple[UserConfig, ...]:
    """The ``[[users]]`` entries that are right, phones in E.164 (read in ``sms``'s
    default_region); one problem for each entry that is not, which is left out."""
    region = _region(sms)
    if not isinstance(entries, list):
        problems.append(f"{source}: users must be written as [[users]] tables")
        return ()
    users: list[UserConfig] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries, 1):
        where = f"{source}: [[users]] #{i}"
        if not isinstance(entry, dict):
            problems.append(f"{where} must be a table with phone, name, role")
            continue
        unknown = set(entry) - set(USER_KEYS)
        if unknown:
            problems.append(f"{where}: {', '.join(sorted(unknown))} is not a known key; "
                            f"known keys are {', '.join(USER_KEYS)}")
        phone = entry.get("phone")
        if not isinstance(phone, str):
            problems.append(f"{where}: phone = {phone!r} must be a string, e.g. "
                            "\"+15551234567\"")
            continue
        try:
            phone = normalise_phone(phone, region)
        except ValueError as exc:
            problems.append(f"{where}: phone = {exc}")
            continue
        if phone in seen:
            problems.append(f"{where}: phone {phone} is listed twice; keep one entry")
            continue
        seen.add(phone)
        role = entry.get("role", Role.MEMBER)
        if role not in ROLES:
            problems.append(f"{where}: role = {role!r} is not a role; use \"admin\" or \"member\"")
            continue
        name = entry.get("name", "")
        if not isinstance(name, str):
            problems.append(f"{where}: name = {name!r} must be a string")
            continue
        channel = entry.get("channel", "")
        if channel not in ("", *CHANNELS):
            problems.append(f"{where}: channel = {channel!r} is not a channel; use \"sms\" "
                            "or \"whatsapp\", or leave it out for the one they used last")
            continue
        language = entry.get("language", "")
        if language != "" and (why := language_problem(language)):
            problems.append(f"{where}: language = {why}")
            continue
        seerr_user = entry.get("seerr_user", "")
        if isinstance(seerr_user, int) and not isinstance(seerr_user, bool):
            seerr_user = str(seerr_user)
        if not isinstance(seerr_user, str):
            problems.append(f"{where}: seerr_user = {seerr_user!r} must be a Seerr user id, "
                            "email or username, e.g. \"7\" or \"sam@example.com\"")
            continue
        users.append(UserConfig(phone=phone, name=name.strip(), role=role, channel=channel,
                                language=language, seerr_user=seerr_user.strip()))
    return tuple(users)


def _is_http_url(url: str) -> bool:
    parsed = urlparse(url)
    return parsed.scheme in ("http", "https") and bool(parsed.netloc)


def header_unsafe(key: str, secret: object) -> str | None:
    """The first character of a secret mediabot sends (``SENT_SECRETS``) that an HTTP
    header cannot carry, named by its code point ("U+FEFF ZERO WIDTH NO-BREAK SPACE"), or
    None when there is none.

    An API key goes in a header and Twilio's token in Basic auth: requests refuses what is
    not Latin-1 and line breaks, httpx (the model's client) what is not ASCII, and servers
    control characters, so only printable ASCII is safe. A real key never holds anything
    else, so naming the stray character gives nothing of the secret away. The webhook
    secret only comes back, base64-encoded in Basic auth, so any text serves there
    (``local_checks`` warns of one Sonarr cannot send)."""
    if key not in SENT_SECRETS or not isinstance(secret, str):
        return None
    for ch in secret:
        if not " " <= ch <= "~":
            return f"U+{ord(ch):04X} {unicodedata.name(ch, 'a control character')}"
    return None


def show_value(key: str, value: object) -> str:
    """Show a bad value in an error: a secret key's value never, a URL without credentials."""
    if key in SECRET_KEYS:
        return "(hidden)"
    return repr(mask_url_secrets(value) if isinstance(value, str) else value)
