"""Configuration: one TOML file plus ``MEDIABOT_<SECTION>_<KEY>`` environment overrides,
read into frozen dataclasses.

A secret may instead be named by a file holding it (``auth_token_file =
"/run/secrets/..."`` or ``MEDIABOT_TWILIO_AUTH_TOKEN_FILE``), as containers pass secrets, so
every command reads the secret the daemon reads. Every problem found becomes one line of a
single ``ConfigError`` naming the file, the key, the bad value and the fix, so an operator
fixes everything in one pass. Unknown sections and keys are errors: a typo must not be
silently ignored.

- ``schema``: the dataclasses, ``ConfigError``, ``webhook_url``;
- ``load``: the file, the ``env`` file beside it, the environment and secret files, into a
  ``Config`` (``load_config``, ``parse_config``);
- ``validate``: the rules each value is held to, and the needs a command names.

This module only names what the rest of mediabot uses.
"""

from mediabot.config.load import load_config, parse_config, resolve_path
from mediabot.config.schema import (
    ROLES,
    ArrConfig,
    Config,
    ConfigError,
    ConfirmationConfig,
    DatabaseConfig,
    HistoryConfig,
    LLMConfig,
    Need,
    NotificationsConfig,
    RequestsConfig,
    SeerrConfig,
    ServerConfig,
    SmsConfig,
    SmsGatewayConfig,
    TwilioConfig,
    UserConfig,
    webhook_url,
)
from mediabot.config.validate import model_needs, twilio_needs

__all__ = [
    "ROLES",
    "ArrConfig",
    "Config",
    "ConfigError",
    "ConfirmationConfig",
    "DatabaseConfig",
    "HistoryConfig",
    "LLMConfig",
    "Need",
    "NotificationsConfig",
    "RequestsConfig",
    "SeerrConfig",
    "ServerConfig",
    "SmsConfig",
    "SmsGatewayConfig",
    "TwilioConfig",
    "UserConfig",
    "load_config",
    "model_needs",
    "parse_config",
    "resolve_path",
    "twilio_needs",
    "webhook_url",
]
