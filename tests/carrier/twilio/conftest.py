"""The mailbox's Twilio account (a fake Twilio on loopback) for the carrier's own tests."""

from tests.mailbox.conftest import config, twilio, twilio_account

__all__ = ["config", "twilio", "twilio_account"]
