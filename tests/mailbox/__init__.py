"""Tests of ``mediabot/mailbox``: the inbox's intake, the outbox, the delivery loop, the
Twilio client and the rule for held texts."""
