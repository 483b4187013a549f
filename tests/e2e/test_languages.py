"""The words a person answers with, in their language (issue 23): sí/no, ja/nein, oui/non,
sim/não, ja/nee beside Y/N; HELP, RESET, APPROVE and DENY in each language; and the removal
flow's own texts in Spanish and German, in the engine and through the real daemon."""

import datetime as dt

import pytest

from mediabot.conversation import confirmations as confirm
from mediabot.scheduler import expire_confirmations
from mediabot.store import db
from mediabot.text.keywords import NO, YES, classify_keyword, parse_answer, parse_decision
from mediabot.text.language import LANGUAGES, load
from mediabot.trial.sim.arr_fixtures import OFFICE_TVDB
from mediabot.trial.sim.loopback import wait_for
from tests.support import ADMIN, office_in_library

REMOVE_OFFICE = [("remove_media", {"kind": "series", "id": OFFICE_TVDB, "delete_files": True})]
HELP_ES = (
    "mediabot: escríbeme como a una persona. Prueba \"consigue la nueva Dune\", \"¿qué se está "
    "descargando?\", \"¿algo nuevo esta semana?\" o \"¿tenemos Severance?\". Responde SÍ o NO "
    "cuando te pida confirmar. REINICIAR borra nuestro chat. STOP te da de baja, START te da "
    "de alta.")
HELP_DE = (
    "mediabot: schreib mir wie einem Menschen. Probier \"hol den neuen Dune\", \"was lädt "
    "gerade?\", \"was gibt's Neues diese Woche?\" oder \"haben wir Severance?\". Antworte JA "
    "oder NEIN, wenn ich um Bestätigung bitte. NEUSTART löscht unseren Chat. STOP meldet dich "
    "ab, START wieder an.")
KEPT_ES = "Vale, lo conservo. No se ha eliminado nada."
KEPT_DE = "OK, ich behalte es. Es wurde nichts entfernt."


# -- the words, table by table ------------------------------------------------------------

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


@pytest.mark.parametrize("code, yes, no, help_reset", [
    ("es", "SÍ", "NO", ("REINICIAR",)), ("de", "JA", "NEIN", ("NEUSTART",))])
def test_the_texts_name_words_that_work(code, yes, no, help_reset):
    """The question and HELP name the words they accept, and those words are read so."""
    lang = load(code)
    question = confirm.confirmation_text("Remove X?", 300, lang)
    assert f" {yes} " in question and f" {no} " in question
    assert (parse_answer(yes, code), parse_answer(no, code)) == ("yes", "no")
    from mediabot.text.keywords import help_text

    text = help_text(lang, admin=True)
    for word in help_reset:
        assert word in text and classify_keyword(word, code) == "reset"
    approve, deny = {"es": ("APROBAR", "RECHAZAR"), "de": ("GENEHMIGEN", "ABLEHNEN")}[code]
    assert f"{approve} 12" in text and f"{deny} 12" in text
    assert parse_decision(f"{approve} 12", code) == ("approve", 12)


def test_the_removal_question_in_spanish_and_german():
    question = "Remove The Office (2005)?"
    assert confirm.confirmation_text(question, 300, load("es")) == (
        "Remove The Office (2005)? Responde SÍ para confirmar o NO para conservarlo "
        "(caduca en 5 min).")
    assert confirm.confirmation_text(question, 300, load("de")) == (
        "Remove The Office (2005)? Antworte JA zum Bestätigen oder NEIN zum Behalten "
        "(läuft in 5 Min. ab).")


# -- the engine: a Spanish and a German household -------------------------------------------

@pytest.fixture
def spanish(engine_for):
    return engine_for(arr=True, sms={"language": "es"})


@pytest.fixture
def german(engine_for):
    return engine_for(arr=True, sms={"language": "de"})


def ask_removal(engine, fake_llm):
    fake_llm.enqueue_tool_calls(REMOVE_OFFICE)
    admin = db.User.get(phone=ADMIN).id
    engine.handle(admin, "borra The Office")
    return admin


def test_a_spanish_household_s_help_reset_and_no(spanish, fake_llm, stack):
    admin = db.User.get(phone=ADMIN).id
    assert spanish.handle(admin, "AYUDA") == HELP_ES
    assert spanish.handle(admin, "HELP") == HELP_ES
    assert spanish.handle(admin, "REINICIAR") == ("Hecho: he olvidado nuestra conversación. "
                                                  "¿Qué puedo hacer por ti?")
    ask_removal(spanish, fake_llm)
    assert spanish.handle(admin, "no, consérvala") == KEPT_ES
    assert office_in_library(stack)


def test_a_german_household_s_help_and_nein(german, fake_llm, stack):
    admin = db.User.get(phone=ADMIN).id
    assert german.handle(admin, "HILFE") == HELP_DE
    ask_removal(german, fake_llm)
    assert german.handle(admin, "Nein, behalten") == KEPT_DE
    assert office_in_library(stack)


def test_a_spanish_text_that_is_not_an_answer_drops_the_question_in_spanish(spanish, fake_llm,
                                                                            stack):
    admin = ask_removal(spanish, fake_llm)
    fake_llm.enqueue_text("Nada se está descargando.")
    reply = spanish.handle(admin, "¿qué se descarga?")
    assert reply == ("He descartado la pregunta sobre eliminar The Office (2005).\n"
                     "Nada se está descargando.")
    assert office_in_library(stack)


def test_a_spanish_answer_to_an_expired_question_says_so_in_spanish(spanish, fake_llm, stack,
                                                                    clock):
    admin = ask_removal(spanish, fake_llm)
    clock.advance(minutes=6)
    assert spanish.handle(admin, "sí") == (
        "Tu solicitud para eliminar The Office (2005) ha caducado, así que no se ha eliminado "
        "nada. Vuelve a pedirlo si aún lo quieres.")
    assert office_in_library(stack)


def test_the_sweep_tells_a_german_household_in_german(german, fake_llm, stack, clock):
    ask_removal(german, fake_llm)
    told = []
    expire_confirmations(clock() + dt.timedelta(minutes=6), lambda user, text: told.append(text),
                         "de")
    assert told == ["Deine Anfrage, The Office (2005) zu entfernen, ist abgelaufen, also wurde "
                    "nichts entfernt."]


# -- through the real daemon ----------------------------------------------------------------

def household(serve, stack, fake_twilio, language):
    from tests.support import SERVE_PUBLIC

    started = serve(f'\n[sms]\nlanguage = "{language}"\n' + stack.toml())
    fake_twilio.route_callbacks(SERVE_PUBLIC, started.url)
    return started


def replies(fake_twilio, count):
    assert wait_for(lambda: len(fake_twilio.sent) >= count), fake_twilio.bodies()
    return fake_twilio.bodies()


def removal(daemon, stack, fake_llm, fake_twilio, answer, sent_before=0, model_says=None):
    """Ask to remove The Office and answer ``answer``: the question and the outcome.
    ``model_says``: the model's reply to ``answer``, when it is not an answer."""
    fake_llm.enqueue_tool_calls(REMOVE_OFFICE)
    daemon.text("borra The Office")
    question = replies(fake_twilio, sent_before + 1)[-1]
    # Answered once the daemon has stored Twilio's acceptance: only then is it asked.
    assert wait_for(daemon.settled)
    if model_says is not None:
        fake_llm.enqueue_text(model_says)
    daemon.text(answer)
    return question, replies(fake_twilio, sent_before + 2)[-1]


QUESTION_ES = ("¿Quito The Office (2005) y borro sus 62 GB de archivos? Responde SI para "
               "confirmar o NO para conservarlo (caduca en 5 min).")
QUESTION_DE = ("The Office (2005) entfernen und die 62 GB an Dateien löschen? Antworte JA zum "
               "Bestätigen oder NEIN zum Behalten (läuft in 5 Min. ab).")


@pytest.mark.e2e
def test_a_spanish_household_removes_with_si(serve, stack, fake_llm, fake_twilio):
    daemon = household(serve, stack, fake_twilio, "es")
    question, outcome = removal(daemon, stack, fake_llm, fake_twilio, "sí")
    assert question == QUESTION_ES
    assert outcome == "Quité The Office (2005) y borré sus archivos."
    assert not office_in_library(stack)


@pytest.mark.e2e
def test_yes_still_answers_a_spanish_question(serve, stack, fake_llm, fake_twilio):
    daemon = household(serve, stack, fake_twilio, "es")
    question, outcome = removal(daemon, stack, fake_llm, fake_twilio, "yes")
    assert question == QUESTION_ES
    assert outcome == "Quité The Office (2005) y borré sus archivos."
    assert not office_in_library(stack)


@pytest.mark.e2e
def test_a_german_household_answers_ja_and_nein(serve, stack, fake_llm, fake_twilio):
    daemon = household(serve, stack, fake_twilio, "de")
    question, outcome = removal(daemon, stack, fake_llm, fake_twilio, "nein")
    assert (question, outcome) == (QUESTION_DE, KEPT_DE)
    assert office_in_library(stack)
    question, outcome = removal(daemon, stack, fake_llm, fake_twilio, "ja", sent_before=2)
    assert question == QUESTION_DE
    assert outcome == "The Office (2005) entfernt und die Dateien gelöscht."
    assert not office_in_library(stack)


DROPPED_DE = "Ich habe die Frage zum Entfernen von The Office (2005) verworfen.\n"
ASKED_BACK_DE = ("Ja: The Office (2005) wäre weg, samt 62 GB an Dateien. Sag Bescheid, wenn du "
                 "es trotzdem willst, dann frage ich noch einmal.")


@pytest.mark.e2e
def test_a_german_question_typed_back_is_no_ja(serve, stack, fake_llm, fake_twilio):
    """Issue 27: "Sicher?" ("are you sure?") and "Löschen?" ask back: each drops the question
    and the model answers, nothing is removed; "Ja." then removes."""
    daemon = household(serve, stack, fake_twilio, "de")
    for sent, asking in enumerate(["Sicher?", "Löschen?", "ja?"]):
        question, outcome = removal(daemon, stack, fake_llm, fake_twilio, asking,
                                    sent_before=2 * sent, model_says=ASKED_BACK_DE)
        assert (question, outcome) == (QUESTION_DE, DROPPED_DE + ASKED_BACK_DE)
        assert office_in_library(stack)
    question, outcome = removal(daemon, stack, fake_llm, fake_twilio, "Ja.", sent_before=6)
    assert outcome == "The Office (2005) entfernt und die Dateien gelöscht."
    assert not office_in_library(stack)


# HELP as an SMS carries it: accents outside GSM-7 folded (Spanish), kept (German); 2 segments.
HELP_ES_SMS = (
    "mediabot: escribeme como a una persona. Prueba \"consigue la nueva Dune\", \"¿qué se esta "
    "descargando?\", \"¿algo nuevo esta semana?\" o \"¿tenemos Severance?\". Responde SI o NO "
    "cuando te pida confirmar. REINICIAR borra nuestro chat. STOP te da de baja, START te da "
    "de alta.")


@pytest.mark.e2e
def test_help_in_spanish_through_the_daemon(serve, stack, fake_llm, fake_twilio):
    from mediabot.text.sms import count_segments

    daemon = household(serve, stack, fake_twilio, "es")
    daemon.text("AYUDA")
    assert replies(fake_twilio, 1) == [HELP_ES_SMS]
    daemon.text("help")
    assert replies(fake_twilio, 2)[1] == HELP_ES_SMS
    assert count_segments(HELP_ES_SMS) == 2
    assert not fake_llm.requests, "HELP is mediabot's own answer"


@pytest.mark.e2e
def test_help_in_german_through_the_daemon(serve, stack, fake_llm, fake_twilio):
    daemon = household(serve, stack, fake_twilio, "de")
    daemon.text("Hilfe")
    assert replies(fake_twilio, 1) == [HELP_DE]
