"""Which carriers a config sets up, and what each needs before the daemon may start.

Twilio is in use when ``[twilio]`` holds anything of an account; the phone when
``[sms_gateway]`` is written. With the phone alone, SMS goes through it and nothing of
Twilio is asked for (nor ``[server] public_url`` in Local mode, where nothing calls in);
with both, SMS goes through the phone and WhatsApp stays on Twilio. ``carrier_needs`` is
the need (``config.load_config``) of whatever sends texts: ``serve`` and ``check``.
"""

from mediabot.carrier.sms_gateway.settings import GatewaySettings, Mode, settings_problem
from mediabot.config.schema import Config
from mediabot.config.validate import twilio_needs

GATEWAY_PATH = "/sms/gateway"   # where the cloud and private modes post their webhooks


def twilio_in_use(config: Config) -> bool:
    """Whether ``[twilio]`` names an account or a sender: without the phone, always (the
    daemon then has no other carrier, and ``carrier_needs`` asks for what is missing)."""
    if config.sms_gateway is None:
        return True
    twilio = config.twilio
    return any((twilio.account_sid, twilio.auth_token, twilio.from_number,
                twilio.messaging_service_sid, twilio.whatsapp_from))


def gateway_settings(config: Config) -> GatewaySettings | None:
    """The phone's settings as its client takes them, or None without ``[sms_gateway]``."""
    gateway = config.sms_gateway
    if gateway is None:
        return None
    return GatewaySettings(url=gateway.url, username=gateway.username,
                           password=gateway.password, signing_key=gateway.signing_key,
                           timeout=gateway.timeout_seconds, poll_seconds=gateway.poll_seconds,
                           device_id=gateway.device_id)


def carrier_needs(config: Config) -> list[str]:
    """What the configured carriers still lack, one line each naming the key and the fix."""
    settings = gateway_settings(config)
    if settings is None:
        return twilio_needs(config)
    problems = _gateway_needs(config, settings)
    if twilio_in_use(config):
        problems += [line.replace("is required;", "is required (or remove [twilio] to run "
                                  "on the phone alone);", 1)
                     for line in twilio_needs(config)]
    return problems


def _gateway_needs(config: Config, settings: GatewaySettings) -> list[str]:
    where = f"{config.source}: [sms_gateway]"
    if not settings.url:
        return [f"{where} url is required; set it to the phone's Local server, e.g. "
                "\"http://192.168.1.60:8080\" (the app's Home screen shows it)"]
    problems = []
    ranges_refused = settings.poll_seconds <= 0 or settings.timeout <= 0   # said by validate
    if not ranges_refused and (problem := settings_problem(settings)):
        problems.append(f"{where} {problem}")
    if settings.mode is not Mode.LOCAL and not config.server.public_url:
        problems.append(f"{config.source}: [server] public_url is required in the phone's "
                        f"{settings.mode} mode: its webhooks call {GATEWAY_PATH} there; set it "
                        "to mediabot's https URL, or use the phone's Local server instead")
    return problems


def sms_by_twilio(config: Config) -> bool:
    """Whether SMS goes through Twilio: only without the phone."""
    return config.sms_gateway is None

