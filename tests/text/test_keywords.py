"""The words mediabot reads itself (``text/keywords.py``): keywords, Y/N answers and
APPROVE/DENY, in English and in each language's own words (issue 23)."""

import pytest

from mediabot.text.keywords import (
    HELP_TEXT,
    NO,
    YES,
    classify_keyword,
    parse_answer,
    parse_decision,
)
from mediabot.text.language import LANGUAGES
from mediabot.text.sms import format_reply, is_gsm7


@pytest.mark.parametrize("body, keyword", [
    ("HELP", "help"), ("help", "help"), (" Help ", "help"), ("INFO", "help"),
    ("RESET", "reset"), ("reset!", "reset"), ("Forget", "reset"),
    ("STOP", "opt_out"), ("stop", "opt_out"), ("  Stop.  ", "opt_out"), ("STOPALL", "opt_out"),
    ("UNSUBSCRIBE", "opt_out"), ("cancel", "opt_out"), ("CANCEL", "opt_out"),
    ("END", "opt_out"), ("quit", "opt_out"), ("REVOKE", "opt_out"), ("OptOut", "opt_out"),
    ("\u201cSTOP\u201d", "opt_out"),
    ("START", "opt_in"), ("unstop", "opt_in"), ("Start\n", "opt_in"),
    ("YES", "yes_opt_in"), ("yes", "yes_opt_in"), ("Yes!", "yes_opt_in"),
    ("Y", None), ("no", None), ("N", None), ("cancel that", None), ("stop it", None),
    ("please help", None), ("", None), ("   ", None), ("get Dune", None), ("helpful", None),
])
def test_keywords(body, keyword):
    assert classify_keyword(body) == keyword


@pytest.mark.parametrize("word", ["CANCEL", "cancel", "STOP", "Stop", "stop!", "END", "QUIT"])
def test_opt_out_words_are_never_anything_else(word):
    assert classify_keyword(word) == "opt_out"


def test_help_text_is_gsm7_short_and_useful():
    assert is_gsm7(HELP_TEXT)
    assert len(HELP_TEXT) < 320
    for word in ("RESET", "STOP", "Y", "N"):
        assert word in HELP_TEXT
    assert format_reply(HELP_TEXT) == HELP_TEXT


@pytest.mark.parametrize("text", ["y", "Y", "yes", "YES!", "yep", "Confirm", "do it", "Do it.",
                                  "ok", "yes please", "go ahead"])
def test_yes_like(text):
    assert parse_answer(text) == "yes"


@pytest.mark.parametrize("text", ["n", "N", "no", "Nope", "keep it", "no thanks", "don't",
                                  "never mind"])
def test_no_like(text):
    assert parse_answer(text) == "no"


@pytest.mark.parametrize("text, answer", [
    ("yes, do it", "yes"), ("Yes - delete it!", "yes"), ("ok go ahead", "yes"), ("Y\nY", "yes"),
    ("no, keep it", "no"), ("No don't", "no"), ("cancel that", "no"), ("forget it", "no"),
    ("yes no", None), ("no, do it", None), ("yes but keep the files", None),
    ("yes " * 9, None)])
def test_answers_made_only_of_yes_or_no_phrases(text, answer):
    assert parse_answer(text) == answer


@pytest.mark.parametrize("text", ["STOP", "cancel", "Cancel", "END", "quit", "unsubscribe",
                                  "stopall", "revoke", "optout"])
def test_opt_out_words_are_never_no(text):
    """Twilio unsubscribes the sender on these; they must not double as 'no'."""
    assert parse_answer(text) is None


@pytest.mark.parametrize("text", ["what's downloading?", "yes but also add Dune", "",
                                  "no idea, what is queued?"])
def test_anything_else_is_not_an_answer(text):
    assert parse_answer(text) is None


# Issue 27: each language's own answer words, accents or not, with a full stop or an
# exclamation mark; and what asks back instead, in that language and in English.
OWN_WORDS = {
    "en": (["Y", "yes", "Yes.", "YES!", "y."], ["N", "no", "No.", "n!"]),
    "es": (["sí", "si", "Sí.", "¡Sí!", "SI!"], ["no", "No.", "¡No!"]),
    "de": (["ja", "Ja.", "JA!", "j"], ["nein", "Nein.", "NEIN!"]),
    "fr": (["oui", "Oui.", "OUI !"], ["non", "Non.", "non !"]),
    "pt": (["sim", "Sim.", "SIM!"], ["não", "nao", "Não.", "NAO!"]),
    "nl": (["ja", "Ja.", "JA!"], ["nee", "Nee.", "NEE!"]),
}
ASKING_BACK = {
    "en": ["delete it?", "sure?", "really?", "yes?", "Y?", "Y ?", "yes??", "y?!", "?",
           "no?", "ok？", "do it?"],
    "es": ["¿sí?", "sí?", "¿seguro?", "¿bórrala?", "¿Sí", "¿de verdad?", "vale?"],
    "de": ["Sicher?", "Löschen?", "ja?", "Ja?!", "wirklich?", "lösch es?", "nein?"],
    "fr": ["oui ?", "Oui?", "vraiment ?", "supprime ?", "d'accord ?"],
    "pt": ["sim?", "Sim ?", "apaga?", "com certeza?", "não?"],
    "nl": ["ja?", "zeker?", "verwijder?", "echt?", "doe maar?"],
}


@pytest.mark.parametrize("code, text, answer", [
    (code, text, answer) for code, (yes, no) in OWN_WORDS.items()
    for words, answer in ((yes, "yes"), (no, "no")) for text in words])
def test_each_language_s_own_words_answer_with_a_full_stop_or_exclamation_mark(code, text,
                                                                            answer):
    assert parse_answer(text, code) == answer


@pytest.mark.parametrize("code, text", [
    (code, text) for code, texts in ASKING_BACK.items()
    for text in [*texts, *(ASKING_BACK["en"] if code != "en" else [])]])
def test_a_text_that_asks_back_is_never_an_answer(code, text):
    """A question mark anywhere asks: "delete it?" is not "delete it", "Sicher?" ("are you
    sure?") not "sicher" ("sure")."""
    assert parse_answer(text, code) is None


@pytest.mark.parametrize("text", ["yes 🤔", "Y :)", "\"yes\"", "yes (I think)",
                                  "ok 👍", "y/n", "yes: do it"])
def test_any_other_mark_makes_it_something_other_than_an_answer(text):
    assert parse_answer(text) is None


@pytest.mark.parametrize("words, parsed", [
    ("APPROVE 1?", None), ("deny 2?", None), ("APPROVE 1 ?", None), ("approve? 1", None),
    ("¿APROBAR 12?", None), ("Approve 3!", ("approve", 3)), ("DENY 4.", ("deny", 4))])
def test_a_decision_that_asks_back_decides_nothing(words, parsed):
    assert parse_decision(words, "es") == parsed


@pytest.mark.parametrize("words, parsed", [
    ("APPROVE 12", ("approve", 12)), ("deny #7", ("deny", 7)), (" Approve 3. ", ("approve", 3)),
    ("approve", None), ("approve 12 and 13", None), ("please approve 12", None)])
def test_decisions_are_parsed_without_the_model(words, parsed):
    assert parse_decision(words) == parsed


@pytest.mark.parametrize("module", ["conversation.engine", "conversation.confirmations",
                                    "text.keywords"])
def test_the_engine_side_reads_keywords_without_the_sms_formatter(module):
    """Layering: the vocabulary is shared, so the engine never imports the SMS edge."""
    import ast
    from importlib import import_module
    from pathlib import Path

    source = Path(import_module(f"mediabot.{module}").__file__).read_text()
    imported = {node.module for node in ast.walk(ast.parse(source))
                if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(ast.parse(source))
                 if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
    assert not imported & {"sms", "mediabot.text.sms"}


# -- each language's own words (issue 23) --------------------------------------------------

@pytest.mark.parametrize("code, text, answer", [
    ("es", "sí", "yes"), ("es", "Sí", "yes"), ("es", "si", "yes"), ("es", "SI", "yes"),
    ("es", "¡Sí!", "yes"), ("es", "sí, bórrala", "yes"), ("es", "si borrala", "yes"),
    ("es", "vale", "yes"), ("es", "dale", "yes"), ("es", "claro", "yes"),
    ("es", "no", "no"), ("es", "No, gracias", "no"), ("es", "no, consérvala", "no"),
    ("es", "mejor no", "no"), ("es", "déjalo", "no"), ("es", "dejalo", "no"),
    ("de", "ja", "yes"), ("de", "Ja!", "yes"), ("de", "J", "yes"), ("de", "ja, lösch es", "yes"),
    ("de", "ja losch es", "yes"), ("de", "klar", "yes"), ("de", "nein", "no"),
    ("de", "Nein, behalten", "no"), ("de", "nee", "no"), ("de", "bloß nicht", "no"),
    ("de", "bloss nicht", "no"),
    ("fr", "oui", "yes"), ("fr", "d'accord", "yes"), ("fr", "non", "no"),
    ("fr", "non, garde-la", "no"),
    ("pt", "sim", "yes"), ("pt", "pode apagar", "yes"), ("pt", "não", "no"), ("pt", "nao", "no"),
    ("pt", "NÃO, obrigado", "no"),
    ("nl", "ja", "yes"), ("nl", "doe maar", "yes"), ("nl", "nee", "no"), ("nl", "laat maar", "no"),
])
def test_each_language_answers_with_its_own_words_accents_or_not(code, text, answer):
    assert parse_answer(text, code) == answer


@pytest.mark.parametrize("code", LANGUAGES)
@pytest.mark.parametrize("text, answer", [("Y", "yes"), ("yes", "yes"), ("ok", "yes"),
                                          ("N", "no"), ("no", "no"), ("keep it", "no")])
def test_english_answers_in_every_language(code, text, answer):
    assert parse_answer(text, code) == answer


@pytest.mark.parametrize("code", LANGUAGES)
@pytest.mark.parametrize("text", ["STOP", "stop", "CANCEL", "cancel", "Cancel", "END", "QUIT",
                                  "unsubscribe", "STOPALL"])
def test_opt_out_words_are_never_a_no_in_any_language(code, text):
    assert parse_answer(text, code) is None
    assert classify_keyword(text, code) == "opt_out"


@pytest.mark.parametrize("text, code", [("sí", "en"), ("si", "en"), ("ja", "en"),
                                        ("oui", "es"), ("ja", "es"), ("sim", "de"),
                                        ("nee", "fr"), ("nein", "nl"), ("não", "es")])
def test_another_language_s_words_are_not_answers(text, code):
    """Only English and the person's own language: an English household's "si" (a typo,
    or "if") never confirms a removal, nor a Spanish household's "ja"."""
    assert parse_answer(text, code) is None


@pytest.mark.parametrize("code", LANGUAGES)
def test_no_word_is_both_a_yes_and_a_no(code):
    from mediabot.text.keywords import fold

    yes = {fold(w) for w in YES["en"] | YES[code]}
    no = {fold(w) for w in NO["en"] | NO[code]}
    assert not yes & no


@pytest.mark.parametrize("code, text, keyword", [
    ("es", "AYUDA", "help"), ("es", "ayuda", "help"), ("es", "REINICIAR", "reset"),
    ("de", "HILFE", "help"), ("de", "Neustart", "reset"), ("fr", "AIDE", "help"),
    ("fr", "RÉINITIALISER", "reset"), ("fr", "reinitialiser", "reset"),
    ("pt", "AJUDA", "help"), ("pt", "reiniciar", "reset"), ("nl", "HULP", "help"),
    ("nl", "herstart", "reset"),
    ("es", "HELP", "help"), ("de", "RESET", "reset"), ("es", "START", "opt_in"),
    ("es", "YES", "yes_opt_in"), ("es", "BORRAR", None), ("es", "ayuda por favor", None),
    ("en", "AYUDA", None), ("de", "AYUDA", None), ("es", "sí", None),
])
def test_help_and_reset_in_each_language_and_english(code, text, keyword):
    assert classify_keyword(text, code) == keyword


@pytest.mark.parametrize("code, text, parsed", [
    ("es", "APROBAR 12", ("approve", 12)), ("es", "rechazar #7", ("deny", 7)),
    ("de", "GENEHMIGEN 3", ("approve", 3)), ("de", "ablehnen 3.", ("deny", 3)),
    ("fr", "Approuver 4", ("approve", 4)), ("fr", "REFUSER 4", ("deny", 4)),
    ("pt", "APROVAR 5", ("approve", 5)), ("pt", "recusar 5", ("deny", 5)),
    ("nl", "GOEDKEUREN 6", ("approve", 6)), ("nl", "afwijzen 6", ("deny", 6)),
    ("es", "APPROVE 12", ("approve", 12)), ("de", "deny #2", ("deny", 2)),
    ("en", "APROBAR 12", None), ("es", "GENEHMIGEN 3", None), ("es", "aprobar", None),
    ("es", "por favor aprobar 12", None),
])
def test_approve_and_deny_in_each_language_and_english(code, text, parsed):
    assert parse_decision(text, code) == parsed
