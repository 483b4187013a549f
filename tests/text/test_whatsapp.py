"""``format_whatsapp``: a model's Markdown as one WhatsApp message (WhatsApp's own markup,
every character kept, at most 1600 characters)."""

import pytest

from mediabot.text.whatsapp import MAX_CHARS, format_whatsapp


@pytest.mark.parametrize(("markdown", "whatsapp"), [
    ("**Added** Dune: Part Three", "*Added* Dune: Part Three"),
    ("__Added__ it", "*Added* it"),
    ("It's *really* good", "It's _really_ good"),
    ("~~Cancelled~~ renewed", "~Cancelled~ renewed"),
    ("Run `mediabot check`", "Run ```mediabot check```"),
    ("## Coming up", "*Coming up*"),
    ("# **Tonight** #", "*Tonight*"),
    ("### New on _Severance_", "*New on _Severance_*"),
    ("* Severance\n+ Slow Horses\n• The Office", "- Severance\n- Slow Horses\n- The Office"),
    ("* Dune\n  * Part Two", "- Dune\n  - Part Two"),
    ("1. Dune\n2. Dune: Part Two", "1. Dune\n2. Dune: Part Two"),
    ("See [the trailer](https://example.org/t?v=1)",
     "See the trailer (https://example.org/t?v=1)"),
    ("![Dune poster](https://image.tmdb.org/p.jpg)", "Dune poster"),
    ("[not a link](ftp://x)", "[not a link](ftp://x)"),
    ("```\nls -l\n```", "ls -l"),
    ("one<br>two<BR/>three", "one\ntwo\nthree"),
    ("a\r\n\r\n\r\n\r\nb", "a\n\nb"),
    ("Ready 🎬🍿 — “Dune” ✓ 東京", "Ready 🎬🍿 — “Dune” ✓ 東京"),
    ("2 * 3 = 6 and a*b", "2 * 3 = 6 and a*b"),
    ("   \n\t ", ""),
])
def test_markdown_becomes_whatsapps_own_markup(markdown, whatsapp):
    assert format_whatsapp(markdown) == whatsapp


def test_a_long_answer_is_cut_at_a_sentence_within_twilios_limit():
    answer = "Dune is downloading. " * 100 + "The end."
    folded = format_whatsapp(answer)
    assert len(folded) <= MAX_CHARS == 1600
    assert folded.endswith("downloading.") and len(folded) > 1500


def test_a_smaller_budget_keeps_whole_sentences_and_emoji():
    assert format_whatsapp("Dune is ready 🎬. Severance is at 45%.", max_chars=20) == \
        "Dune is ready 🎬."


def test_the_sms_limit_does_not_apply():
    answer = "x" * 900
    assert format_whatsapp(answer) == answer, "480 characters is an SMS rule, not WhatsApp's"
