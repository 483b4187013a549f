"""Tests of ``mediabot/conversation/prompt``: the pure prompt builder, its message rules and
window, and every prompt shape through real chat templates."""
