"""The words mediabot reads itself: keywords, and Y/N answers (mediabot.text.keywords)."""

import pytest

from mediabot.text.keywords import HELP_TEXT, classify_keyword, parse_answer, parse_decision
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
