"""Tests of ``mediabot/text``: the pure text helpers (SMS and WhatsApp formatting, keywords,
languages, phones, local time, masking, public URLs), one file per module."""
