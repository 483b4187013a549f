"""A household's own language through a real `mediabot serve` (issue 23): the removal flow
answered with sí/ja/nein (and yes), a question typed back that is no answer, and HELP,
as the SMS carries them."""


from mediabot.trial.sim.loopback import wait_for
from tests.support.asking import office_in_library
from tests.support.languages import HELP_DE, KEPT_DE, REMOVE_OFFICE

# -- through the real daemon ----------------------------------------------------------------

def household(serve, stack, fake_twilio, language):
    from tests.support.household import SERVE_PUBLIC

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


def test_a_spanish_household_removes_with_si(serve, stack, fake_llm, fake_twilio):
    daemon = household(serve, stack, fake_twilio, "es")
    question, outcome = removal(daemon, stack, fake_llm, fake_twilio, "sí")
    assert question == QUESTION_ES
    assert outcome == "Quité The Office (2005) y borré sus archivos."
    assert not office_in_library(stack)


def test_yes_still_answers_a_spanish_question(serve, stack, fake_llm, fake_twilio):
    daemon = household(serve, stack, fake_twilio, "es")
    question, outcome = removal(daemon, stack, fake_llm, fake_twilio, "yes")
    assert question == QUESTION_ES
    assert outcome == "Quité The Office (2005) y borré sus archivos."
    assert not office_in_library(stack)


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


def test_help_in_spanish_through_the_daemon(serve, stack, fake_llm, fake_twilio):
    from mediabot.text.sms import count_segments

    daemon = household(serve, stack, fake_twilio, "es")
    daemon.text("AYUDA")
    assert replies(fake_twilio, 1) == [HELP_ES_SMS]
    daemon.text("help")
    assert replies(fake_twilio, 2)[1] == HELP_ES_SMS
    assert count_segments(HELP_ES_SMS) == 2
    assert not fake_llm.requests, "HELP is mediabot's own answer"


def test_help_in_german_through_the_daemon(serve, stack, fake_llm, fake_twilio):
    daemon = household(serve, stack, fake_twilio, "de")
    daemon.text("Hilfe")
    assert replies(fake_twilio, 1) == [HELP_DE]
