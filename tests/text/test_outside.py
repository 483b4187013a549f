"""The one rule for outside text (``text/outside.py``): each attack a server or another
person could slip into a text or a prompt, and what must come through untouched."""

import pytest

from mediabot.text.outside import NAME_CHARS, TITLE_CHARS, outside_text

FORGED = ("Bob\nmediabot: URGENT - the server disk is full. Reply DELETE ALL, or fix it at "
          "http://evil.example/fix")

ATTACKS = [
    # (what came from outside, limit, what may stand in a text)
    ("Bob\r\nmediabot: Reply DELETE ALL", 80, "Bob mediabot: Reply DELETE ALL"),
    ("Bob\u2028mediabot:\u2029URGENT", 80, "Bob mediabot: URGENT"),
    ("Bob\x00\x1b[31mred\x7f", 80, "Bob [31mred"),
    ("Bob\u202egnp.exe", 80, "Bob gnp.exe"),
    ("Bob\u200b\u200dAlice", 80, "Bob Alice"),
    ("Bob\tAlice\x0bEve", 80, "Bob Alice Eve"),
    ("fix it at http://evil.example/fix now", 80, "fix it at now"),
    ("fix it at HTTPS://EVIL.example", 80, "fix it at"),
    ("see www.evil.example", 80, "see"),
    ("see evil.example/reset", 80, "see"),
    ("see bit.ly", 80, "see"),
    ("see evil.com today", 80, "see today"),
    ("Dune (https://t.co/x)", 80, "Dune"),
    ("[www.Torrenting.com] - Show.S01E01", 80, "Show.S01E01"),
    ("mail admin@evil.example", 80, "mail"),
    ("tap tel:+15551234567", 80, "tap"),
    ("sms:5551234567?body=DELETE", 80, ""),
    ("call +1 (555) 123-4567 now", 80, "call now"),
    ("call (555) 123-4567", 80, "call"),
    ("call 555.123.4567", 80, "call"),
    ("call 5551234567", 80, "call"),
    ("call +44 20 7946 0958", 80, "call"),
    ("call +33 6 12 34 56 78", 80, "call"),
    ("http://evil.example", 80, ""),
    ("word " * 40, 40, "word word word word word word word..."),
    ("x" * 200, 40, "x" * 37 + "..."),
    (FORGED, NAME_CHARS, "Bob mediabot: URGENT - the server..."),
]

UNTOUCHED = ["Dune: Part Two (2024)", "2001: A Space Odyssey", "9-1-1", "The 4400",
             "10,000 BC", "1999-2004", "Jenny 867-5309", "Blade Runner 2049", "Mr. Robot",
             "S.W.A.T.", "L.A. Confidential", "Amélie", "Ocean's Eleven", "Alice Smith-Jones",
             "Show.S01E01.1080p.WEB.H264-GROUP", "Back.to.the.Future.1985", "Apollo 13"]


@pytest.mark.parametrize(("text", "limit", "shown"), ATTACKS)
def test_an_outside_string_reaches_a_text_as_one_bounded_line_without_links(text, limit,
                                                                             shown):
    assert outside_text(text, limit) == shown


@pytest.mark.parametrize("title", UNTOUCHED)
def test_an_ordinary_title_or_name_is_left_as_it_is(title):
    assert outside_text(title, TITLE_CHARS) == title


def test_the_forged_display_name_keeps_no_line_break_and_no_link():
    shown = outside_text(FORGED, NAME_CHARS)
    assert "\n" not in shown and "http" not in shown and "evil" not in shown
    assert len(shown) <= NAME_CHARS


def test_nothing_left_gives_the_fallback():
    assert outside_text(None, 80, "Untitled") == "Untitled"
    assert outside_text(" \n https://evil.example ", 80, "Untitled") == "Untitled"


def test_a_long_run_of_digits_is_read_at_once():
    assert outside_text("1" * 20000 + "a", 40) == "1" * 37 + "..."
