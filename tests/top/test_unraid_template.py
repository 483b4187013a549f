"""docker/unraid/mediabot.xml, the Unraid template: the household's user and folders, every
secret masked, and its variables a config mediabot loads as Unraid passes them: every one,
the household's filled in and the rest empty."""

import xml.etree.ElementTree as ElementTree
from pathlib import Path

from mediabot.carrier.configured import carrier_needs, twilio_in_use
from mediabot.config import load_config

TEMPLATE = Path(__file__).resolve().parents[2] / "docker" / "unraid" / "mediabot.xml"
SECRET_WORDS = ("KEY", "TOKEN", "PASSWORD", "SECRET")


def configs() -> list[ElementTree.Element]:
    return ElementTree.parse(TEMPLATE).getroot().findall("Config")


def test_it_runs_as_unraid_s_nobody_with_config_and_data_mounted():
    by_target = {c.get("Target"): c for c in configs()}
    assert (by_target["PUID"].get("Default"), by_target["PGID"].get("Default")) == ("99", "100")
    assert by_target["/config"].get("Mode") == "ro" and by_target["/data"].get("Mode") == "rw"
    assert by_target["8080"].get("Type") == "Port"


def test_every_secret_is_masked_and_nothing_else_is():
    for config in configs():
        target = config.get("Target", "")
        secret = target.startswith("MEDIABOT_") and target.endswith(SECRET_WORDS)
        assert (config.get("Mask") == "true") is secret, target


def test_the_twilio_household_s_variables_load_as_a_config(tmp_path):
    values = {"MEDIABOT_LLM_API_KEY": "sk-test", "MEDIABOT_SONARR_API_KEY": "s" * 32,
              "MEDIABOT_RADARR_API_KEY": "r" * 32, "MEDIABOT_TWILIO_ACCOUNT_SID": "AC" + "1" * 32,
              "MEDIABOT_TWILIO_AUTH_TOKEN": "t" * 32, "MEDIABOT_TWILIO_FROM_NUMBER": "+12025550143",
              "MEDIABOT_SERVER_PUBLIC_URL": "https://sms.example.com",
              "MEDIABOT_NOTIFICATIONS_WEBHOOK_SECRET": "hook-secret"}
    env = {c.get("Target", ""): values.get(c.get("Target", ""), c.text or c.get("Default") or "")
           for c in configs() if c.get("Type") == "Variable"}
    assert env["MEDIABOT_SEERR_URL"] == env["MEDIABOT_SMS_GATEWAY_URL"] == "", \
        "what a household may not use is empty until filled in"
    env["MEDIABOT_CONFIG"] = str(tmp_path / "config.toml")
    config = load_config(environ=env)
    assert config.sonarr.url == "http://192.168.1.10:8989"
    assert config.twilio.from_number == "+12025550143"
    assert config.seerr is None


def test_the_phone_household_s_variables_load_with_twilio_s_left_empty(tmp_path):
    values = {"MEDIABOT_LLM_API_KEY": "sk-test", "MEDIABOT_SONARR_API_KEY": "s" * 32,
              "MEDIABOT_RADARR_API_KEY": "r" * 32,
              "MEDIABOT_SMS_GATEWAY_URL": "http://192.168.1.60:8080",
              "MEDIABOT_SMS_GATEWAY_USERNAME": "sms", "MEDIABOT_SMS_GATEWAY_PASSWORD": "k3Yq-8Zp"}
    env = {c.get("Target", ""): values.get(c.get("Target", ""), c.text or c.get("Default") or "")
           for c in configs() if c.get("Type") == "Variable"}
    env["MEDIABOT_CONFIG"] = str(tmp_path / "config.toml")
    config = load_config(environ=env, needs=(carrier_needs,))
    assert config.sms_gateway is not None and config.sms_gateway.poll_seconds == 3.0
    assert not twilio_in_use(config) and config.seerr is None
