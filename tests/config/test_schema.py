"""The settings and their defaults (``config/schema.py``): the documented defaults, and every
key in config.example.toml."""

from pathlib import Path

from mediabot.config import parse_config
from tests.support.config_files import MINIMAL

ROOT = Path(__file__).resolve().parents[2]


def test_defaults_are_the_documented_ones():
    config = parse_config(MINIMAL, environ={})
    assert (config.server.host, config.server.port) == ("127.0.0.1", 8080)
    assert config.database.path == "mediabot.db"
    assert config.llm.model == "gpt-4o-mini"
    assert (config.llm.timeout_seconds, config.llm.max_retries,
            config.llm.max_tool_rounds) == (120, 1, 6)
    assert config.llm.max_reply_tokens == 400
    assert config.llm.pin_slots is True, "each person keeps a llama-server slot"
    h = config.history
    assert (h.max_messages, h.max_context_tokens, h.fetch_limit, h.summaries, h.retention_days) == (
        20, 4000, 60, False, 90)
    assert (config.confirmation.ttl_seconds,
            config.confirmation.sweep_interval_seconds) == (300, 60)
    assert (config.sms.max_reply_chars, config.sms.allow_emoji, config.sms.unknown_senders) == (
        480, False, "ignore")
    assert config.sonarr is None and config.radarr is None, "a missing section turns its tools off"
    assert config.twilio.validate_signature is True


def test_example_file_lists_every_key():
    text = (ROOT / "config.example.toml").read_text()
    import dataclasses

    from mediabot.config.schema import SECTIONS
    for section, cls in SECTIONS.items():
        assert f"[{section}]" in text
        # an optional section the example leaves commented out ("# [seerr]") lists its keys
        # commented out too, inside that section
        commented = f"\n# [{section}]\n" in text
        block = text.split(f"\n# [{section}]\n", 1)[1].split("\n\n", 1)[0] if commented else ""
        for f in dataclasses.fields(cls):
            assert f"\n{f.name} =" in text or f"# {f.name} =" in block, \
                f"[{section}] {f.name} missing from the example"
