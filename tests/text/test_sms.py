"""Reply formatting, segment counting and signature checks (mediabot.text.sms)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from twilio.request_validator import RequestValidator

from mediabot.config import SmsConfig
from mediabot.text.sms import (
    accents_for,
    count_segments,
    format_reply,
    format_reply_for,
    is_gsm7,
    signature_ok,
)


@pytest.mark.parametrize("markdown, plain", [
    ("**Dune** is *in* the library", "Dune is in the library"),
    ("__Dune__ and _Arrival_", "Dune and Arrival"),
    ("## Downloading\nDune", "Downloading\nDune"),
    ("Use `RESET` now", "Use RESET now"),
    ("```\nDune (2021)\n```", "Dune (2021)"),
    ("See [IMDb](https://imdb.com/title/tt1)", "See IMDb (https://imdb.com/title/tt1)"),
    ("See [Dune](#anchor)", "See Dune"),
    ("* Dune\n* Arrival\n+ Sicario", "- Dune\n- Arrival\n- Sicario"),
    ("  - nested item", "- nested item"),
    ("\u2022 Dune \u2022 2021", "- Dune - 2021"),
    ("> quoted", "quoted"),
    ("~~old~~ new", "old new"),
    ("one\n\n---\n\ntwo", "one\n\ntwo"),
    ("| Title | Year |\n|---|:---:|\n| Dune | 2021 |", "Title, Year\nDune, 2021"),
    ("file_name_here stays", "file_name_here stays"),
    ("2 * 3 * 4", "2 * 3 * 4"),
])
def test_markdown_is_stripped(markdown, plain):
    assert format_reply(markdown) == plain


@pytest.mark.parametrize("fancy, plain", [
    ("\u201cDune\u201d isn\u2019t here", "\"Dune\" isn't here"),
    ("1999\u20132001", "1999-2001"),
    ("Dune\u2014Part Two", "Dune - Part Two"),
    ("Wait\u2026", "Wait..."),
    ("62\u00a0GB\u202ffree\u2009now", "62 GB free now"),
    ("zero\u200bwidth", "zerowidth"),
    ("Fran\u00e7ois \u00bd \ufb01ne", "Francois 1/2 fine"),
    ("Caf\u00e9 \u00e0 \u00c9mile", "Caf\u00e9 \u00e0 \u00c9mile"),
    ("\u0127\u0141\u00de\u014b \u00b5s", "hLTHn us"),
])
def test_typography_becomes_gsm7(fancy, plain):
    result = format_reply(fancy)
    assert result == plain
    assert is_gsm7(result)


def test_emoji_dropped_unless_allowed():
    text = "Added Dune \U0001F3AC\U0001F37F! \U0001F44D\U0001F3FD Enjoy \u2764\ufe0f"
    assert format_reply(text) == "Added Dune ! Enjoy"
    kept = format_reply(text, allow_emoji=True)
    assert "\U0001F3AC" in kept and "\u2764\ufe0f" in kept
    assert format_reply("“quotes” \U0001F600", allow_emoji=True) == "\"quotes\" \U0001F600"


def test_letters_of_other_scripts_are_kept():
    """A film's original title must survive, even though it costs UCS-2."""
    assert (format_reply("Added \u5343\u3068\u5343\u5c0b (2001)")
            == "Added \u5343\u3068\u5343\u5c0b (2001)")


def test_blank_lines_collapse():
    assert format_reply("a\n\n\n\n b  c \n\n\n") == "a\n\nb c"


def test_short_text_is_untouched_and_cut_prefers_sentence_end():
    text = "Dune is downloading. It is 45% done. About 10 minutes left. Arrival is queued."
    assert format_reply(text, max_chars=200) == text
    assert format_reply(text, max_chars=58) == "Dune is downloading. It is 45% done."


def test_cut_prefers_line_end():
    text = "Downloading:\n- Dune 45%\n- Arrival 10%\n- Sicario 3%"
    assert format_reply(text, max_chars=40) == "Downloading:\n- Dune 45%\n- Arrival 10%"


def test_cut_without_boundary_uses_word_and_ellipsis():
    text = "word " * 50
    result = format_reply(text, max_chars=30)
    assert result == "word word word word word..."
    assert format_reply("x" * 100, max_chars=10) == "xxxxxxx..."


def test_cut_ignores_a_tiny_first_sentence():
    text = "Yes. " + "this is a long explanation that keeps going " * 5
    result = format_reply(text, max_chars=80)
    assert result.endswith("...") and len(result) <= 80 and len(result) > 40


def test_meaningful_input_never_becomes_empty():
    assert format_reply("![](http://example.com/x)") != ""
    assert format_reply("**\U0001F600 ok**") == "ok"
    assert format_reply("\U0001F600") == ""


@pytest.mark.parametrize("text, segments", [
    ("", 0),
    ("a" * 160, 1),
    ("a" * 161, 2),
    ("a" * 306, 2),
    ("a" * 307, 3),
    ("{" * 80, 1),
    ("{" * 81, 2),
    ("a" * 158 + "\u20ac", 1),
    ("a" * 159 + "[", 2),
    ("a" * 152 + "\u20ac" + "a" * 152, 3),  # an escape pair never straddles two parts
    ("\u00e9" * 160, 1),          # é is GSM-7
    ("\u00e7" * 70, 1),           # ç is not: UCS-2
    ("\u00e7" * 71, 2),
    ("\u00e7" * 134, 2),
    ("\u00e7" * 135, 3),
    ("\U0001F600" * 35, 1),       # each emoji is 2 UTF-16 units
    ("\U0001F600" * 36, 2),
])
def test_segment_counts(text, segments):
    assert count_segments(text) == segments


def test_is_gsm7():
    assert is_gsm7("Hello @ £5 {x} [y] ~ ^ | \\ \u20ac \u00e9\n")
    assert not is_gsm7("\u2019")
    assert not is_gsm7("\U0001F600")
    assert not is_gsm7("`")


def test_signature_ok():
    validator = RequestValidator("token123")
    url = "https://sms.example.com/sms"
    params = {"From": "+15551234567", "Body": "get Dune", "MessageSid": "SM1"}
    good = validator.compute_signature(url, params)
    assert signature_ok(validator, url, params, good)
    assert not signature_ok(validator, url, params, None)
    assert not signature_ok(validator, url, params, "")
    assert not signature_ok(validator, url, {**params, "Body": "delete it"}, good)
    assert not signature_ok(validator, "http://sms.example.com/sms", params, good)
    assert not signature_ok(RequestValidator("other"), url, params, good)


def test_a_signature_over_the_url_with_its_port_is_accepted_as_twilio_does():
    """Twilio's back end sometimes signs https://host:443/...: the quick check on the URL
    as configured misses it, and the library's full check (both forms) still accepts."""
    validator = RequestValidator("token123")
    params = {"From": "+15551234567", "Body": "get Dune", "MessageSid": "SM1"}
    with_port = validator.compute_signature("https://sms.example.com:443/sms", params)
    assert signature_ok(validator, "https://sms.example.com/sms", params, with_port)
    assert not signature_ok(validator, "https://sms.example.com/sms",
                            {**params, "Body": "delete it"}, with_port)
    assert not signature_ok(validator, "https://sms.example.com/sms", params, "bön")


latin_and_noise = st.text(alphabet=st.one_of(
    st.characters(min_codepoint=0x20, max_codepoint=0x24F),
    st.sampled_from("\n\t*_`#>|[]()-\u2018\u2019\u201c\u201d\u2013\u2014\u2026\u00a0\u2022"
                    "\U0001F600\U0001F3AC\u2764\ufe0f\u200d\u2122\u00bd"),
), max_size=700)


@given(text=latin_and_noise, max_chars=st.integers(min_value=1, max_value=600))
def test_property_latin_text_is_gsm7_and_fits(text, max_chars):
    result = format_reply(text, max_chars=max_chars)
    assert is_gsm7(result)
    assert len(result) <= max_chars
    if any(c.isascii() and c.isalnum() for c in text):
        assert result.strip()


@given(text=st.text(max_size=600), max_chars=st.integers(min_value=1, max_value=500),
       allow_emoji=st.booleans())
def test_property_any_text_fits_and_has_no_emoji_unless_allowed(text, max_chars, allow_emoji):
    result = format_reply(text, max_chars=max_chars, allow_emoji=allow_emoji)
    assert len(result) <= max_chars
    if not allow_emoji:
        assert not any(0x1F000 <= ord(c) <= 0x1FAFF for c in result)


@pytest.mark.parametrize("allow_emoji, expected", [(False, "Dune is ready."),
                                                    (True, "Dune \U0001F3AC is ready.")])
def test_format_reply_for_applies_the_operators_sms_settings(allow_emoji, expected):
    config = SmsConfig(max_reply_chars=20, allow_emoji=allow_emoji)
    text = "**Dune** \U0001F3AC is ready. " + "More words follow here. " * 5
    assert format_reply_for(config, text) == expected


# -- [sms] accents: fold to GSM-7 (160/153 a segment) or keep as UCS-2 (70/67) ---------------

SPANISH = ("¿Quieres que añada también la película? Está en 4K y ocupa más de 20 GB. Mañana a "
           "las 19:30 estará lista en tu biblioteca, así que podrás verla esta noche.")
PORTUGUESE = ("Não encontrei a série. Você quer que eu adicione a versão dublada? Ela ocupa 4,2 "
              "GB e estará pronta amanhã às 19:30, então você poderá assistir à noite.")
FRENCH = ("Ça y est, Dune est prêt à regarder. Il occupe 4,2 Go. Veux-tu que j'ajoute aussi "
          "la suite ? Elle sortira bientôt, je te préviendrai dès qu'elle sera là.")


@pytest.mark.parametrize("text, folded", [
    (SPANISH, "¿Quieres que añada también la pelicula? Esta en 4K y ocupa mas de 20 GB. Mañana "
              "a las 19:30 estara lista en tu biblioteca, asi que podras verla esta noche."),
    (PORTUGUESE, "Nao encontrei a série. Voce quer que eu adicione a versao dublada? Ela ocupa "
                 "4,2 GB e estara pronta amanha às 19:30, entao voce podera assistir à noite."),
    (FRENCH, "Ça y est, Dune est pret à regarder. Il occupe 4,2 Go. Veux-tu que j'ajoute aussi "
             "la suite ? Elle sortira bientot, je te préviendrai dès qu'elle sera là."),
], ids=["es", "pt", "fr"])
def test_folded_accents_fit_one_gsm7_segment_kept_ones_take_three_ucs2(text, folded):
    assert 150 < len(text) <= 160
    assert format_reply(text) == folded and count_segments(folded) == 1
    kept = format_reply(text, keep_accents=True)
    assert kept == text and not is_gsm7(kept)
    assert count_segments(kept) == 3        # 67 + 67 + the rest: UCS-2's parts


def test_kept_accents_count_ucs2_segments_exactly_at_70_and_67():
    one = "Está lista. " * 5 + "Ya está aquí."     # 73 characters
    assert count_segments(format_reply(one[:70], keep_accents=True)) == 1
    assert count_segments(format_reply(one[:71], keep_accents=True)) == 2
    assert count_segments("á" * 134) == 2 and count_segments("á" * 135) == 3
    assert count_segments(format_reply("a" * 159 + "á")) == 1       # folded: GSM-7's 160
    assert count_segments(format_reply("a" * 160 + "á")) == 2       # 153 + 8


def test_letters_already_in_gsm7_stay_when_folded():
    german = "Größe: 4,2 GB. Möchtest du Über uns auch? Schön, dass du fragst: ÄÖÜ äöü ß"
    assert format_reply(german) == german and is_gsm7(german)
    assert format_reply("é ñ ü ä ö ß à è ì ò ù ¿ ¡ É Ñ Ç") == "é ñ ü ä ö ß à è ì ò ù ¿ ¡ É Ñ Ç"


def test_keep_writes_latin_letters_as_themselves_and_still_maps_typography():
    assert format_reply("cœur, Łódź, “ação” — ﬁm", keep_accents=True) == 'cœur, Łódź, "ação" - fim'
    assert format_reply("cafe\u0301 and cafe\u0301", keep_accents=True) == "café and café"
    assert format_reply("cœur, Łódź, ação") == "coeur, Lodz, acao"


@pytest.mark.parametrize("accents, language, user, expected", [
    ("", "en", None, "fold"), ("", "es", None, "fold"), ("", "de", None, "fold"),
    ("", "fr", None, "fold"), ("", "nl", None, "fold"), ("", "pt", None, "keep"),
    ("", "pt-BR", None, "keep"), ("", "es", "pt-PT", "keep"), ("", "pt", "de", "fold"),
    ("fold", "pt", None, "fold"), ("keep", "en", "de", "keep"),
])
def test_accents_default_by_the_recipients_language_unless_chosen(accents, language, user,
                                                                   expected):
    config = SmsConfig(language=language, accents=accents)
    assert accents_for(config, user) == expected
    kept = format_reply_for(config, "Não há", user)
    assert kept == ("Não há" if expected == "keep" else "Nao ha")
