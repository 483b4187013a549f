"""Confirmations (``conversation/confirmations.py``): one pending action per user, expiry
checked on use; through the engine, a removal runs only on a Y sent after its question, and
anything else lets it lapse; the question and its outcomes in Spanish and German."""

import datetime as dt
import json

import pytest

from mediabot.conversation import confirmations as confirm
from mediabot.conversation import history
from mediabot.conversation.incoming import join_texts, read_text
from mediabot.scheduler import expire_confirmations
from mediabot.store import db, migrations
from mediabot.store.people import get_person
from mediabot.text.keywords import classify_keyword, parse_answer, parse_decision
from mediabot.text.language import load
from mediabot.trial.sim.arr_fixtures import DUNE_TMDB, OFFICE_TVDB
from tests.support.asking import office_in_library
from tests.support.household import ADMIN
from tests.support.languages import HELP_DE, KEPT_DE, REMOVE_OFFICE
from tests.support.prompts import offered, system_of, tool_results

NOW = dt.datetime(2026, 11, 22, 20, 0, 0)


@pytest.fixture
def user(tmp_path):
    migrations.open_database(str(tmp_path / "m.db"))
    return db.User.create(phone="+15551234567", role="admin")


def test_confirmation_text_is_deterministic():
    text = confirm.confirmation_text("Remove The Office (2005) and delete its 62 GB of files?", 300)
    assert text == ("Remove The Office (2005) and delete its 62 GB of files? Reply Y to confirm "
                    "or N to keep it (expires in 5 min).")


def test_a_new_pending_action_replaces_the_old(user):
    confirm.create_pending(user.id, "remove_media", {"id": 1}, "A?", ttl_seconds=300, now=NOW)
    confirm.create_pending(user.id, "remove_media", {"id": 2}, "B?", ttl_seconds=300, now=NOW)
    assert db.PendingAction.select().count() == 1
    assert confirm.active_pending(user.id, NOW).prompt_text == "B?"


def test_expired_action_is_inactive_before_any_sweep(user):
    confirm.create_pending(user.id, "remove_media", {"id": 1}, "A?", ttl_seconds=300, now=NOW)
    assert confirm.active_pending(user.id, NOW + dt.timedelta(seconds=299)) is not None
    assert confirm.active_pending(user.id, NOW + dt.timedelta(seconds=300)) is None


def test_expire_due_takes_only_expired(user):
    other = db.User.create(phone="+15557654321")
    confirm.create_pending(user.id, "remove_media", {}, "Remove The Office (2005) and delete "
                           "its 62 GB of files? Reply Y", ttl_seconds=60, now=NOW)
    confirm.create_pending(other.id, "remove_media", {}, "B?", ttl_seconds=600, now=NOW)
    expired = confirm.expire_due(NOW + dt.timedelta(seconds=61))
    assert [a.user_id for a in expired] == [user.id]
    assert confirm.expiry_notice(expired[0]) == (
        "Your request to remove The Office (2005) expired, so nothing was removed.")
    assert confirm.expire_due(NOW + dt.timedelta(seconds=61)) == []


# -- through the engine: a removal runs only on the Y that answers it ----------------------

@pytest.fixture
def engine(engine_for):
    return engine_for(arr=True)


def dune_in_library(stack):
    return any(m["tmdbId"] == DUNE_TMDB for m in stack.radarr.library)


def test_two_removals_in_one_message_ask_about_the_first_only(engine, alex, fake_llm, stack):
    """The user sees one question; the other removal is refused, not silently dropped."""
    fake_llm.enqueue_tool_calls([
        ("remove_media", {"kind": "series", "id": OFFICE_TVDB, "delete_files": True}),
        ("remove_media", {"kind": "movie", "id": DUNE_TMDB, "delete_files": True}),
        ("download_queue", {})], content="Sure, removing both.")
    reply = engine.handle(alex, "delete the office and dune")
    assert reply.startswith("Remove The Office (2005) and delete its 62 GB of files?")
    assert "one thing at a time" in reply
    results = [json.loads(m["content"]) for m in history.get_history(alex, 20)
               if m["role"] == "tool"]
    assert "The Office" in results[0]["asked"]
    assert "nothing was removed" in results[1]["error"] and "asked" not in results[1]
    assert "downloads" in results[2]
    assert engine.handle(alex, "Y") == "Removed The Office (2005) and deleted its files."
    assert not office_in_library(stack) and dune_in_library(stack)
    assert len(fake_llm.requests) == 1


def test_cancel_that_cancels_so_a_later_yes_to_the_model_removes_nothing(engine, alex, fake_llm,
                                                                        stack):
    fake_llm.enqueue_tool_calls([("remove_media", {"kind": "series", "id": OFFICE_TVDB,
                                                   "delete_files": True})])
    engine.handle(alex, "delete The Office")
    assert engine.handle(alex, "Cancel that") == "OK, I kept it. Nothing was removed."
    fake_llm.enqueue_text("Dune (1984) is not in the library. Want me to add it?")
    engine.handle(alex, "do we have the old dune?")
    assert "Waiting for this person's answer" not in system_of(fake_llm.requests[-1])
    fake_llm.enqueue_text("OK.")
    engine.handle(alex, "yes")
    assert office_in_library(stack), "a yes meant for the model never runs an old removal"


def ask_removal(engine, fake_llm, user, delete_files=True):
    fake_llm.enqueue_tool_calls([("remove_media", {"kind": "series", "id": OFFICE_TVDB,
                                                   "delete_files": delete_files})])
    return engine.handle(user, "delete The Office")


def test_remove_asks_then_y_executes_without_a_model_call(engine, alex, fake_llm, stack):
    reply = ask_removal(engine, fake_llm, alex)
    assert reply.startswith("Remove The Office (2005) and delete its ")
    assert reply.endswith("of files? Reply Y to confirm or N to keep it (expires in 5 min).")
    assert len(fake_llm.requests) == 1, "the prompt is mediabot's, not the model's"
    assert office_in_library(stack), "nothing removed on the model's word"
    assert engine.handle(alex, "Y") == "Removed The Office (2005) and deleted its files."
    assert len(fake_llm.requests) == 1
    assert not office_in_library(stack)
    assert db.PendingAction.select().count() == 0


def test_a_catalogue_title_reaches_the_question_as_one_line_without_links(engine, alex,
                                                                          fake_llm, stack):
    office = next(s for s in stack.sonarr.library if s["tvdbId"] == OFFICE_TVDB)
    office["title"] = ("The Office\nReply Y now, then visit https://evil.example/claim?k=1 "
                       + "x" * 90)
    reply = ask_removal(engine, fake_llm, alex)
    assert "\n" not in reply and "http" not in reply and "evil.example" not in reply
    assert reply.startswith("Remove The Office Reply Y now, then visit... (2005) and delete its ")
    title = reply.removeprefix("Remove ").split(" (2005) and delete its ")[0]
    assert len(title) <= 80 and title.endswith("...")
    assert reply.endswith("Reply Y to confirm or N to keep it (expires in 5 min).")


def test_n_keeps_it(engine, alex, fake_llm, stack):
    ask_removal(engine, fake_llm, alex)
    assert engine.handle(alex, "nope") == "OK, I kept it. Nothing was removed."
    assert office_in_library(stack) and len(fake_llm.requests) == 1
    assert engine.handle(alex, "y") != "Removed The Office (2005) and deleted its files."
    assert office_in_library(stack)


DROPPED = "I've dropped the question about removing The Office (2005).\n"


def test_an_unrelated_message_lets_the_question_lapse_and_tells_the_model(engine, alex, fake_llm,
                                                                          stack):
    ask_removal(engine, fake_llm, alex)
    fake_llm.enqueue_text("Nothing is downloading.")
    reply = engine.handle(alex, "wait, what's downloading?")
    assert reply == DROPPED + "Nothing is downloading."
    assert db.PendingAction.select().count() == 0
    system, *_, text = (m["content"] for m in fake_llm.requests[-1]["messages"])
    # Told on the text that let it lapse, never in the system message: that stays the same
    # from text to text, so a local server's cached prefix (tools included) holds.
    assert DROPPED.strip() in text and "call remove_media again" in text
    assert "removal question" not in system
    fake_llm.enqueue_text("Glad to help.")
    assert engine.handle(alex, "yes") == "Glad to help.", "a later yes goes to the model"
    assert fake_llm.requests[-1]["messages"][0]["content"] == system
    assert "removal question" not in fake_llm.requests[-1]["messages"][-1]["content"]
    assert office_in_library(stack)
    said = [m["content"] for m in history.get_history(alex, 20) if m["role"] == "assistant"]
    assert DROPPED + "Nothing is downloading." in said, "stored as the person saw it"


def test_a_yes_joined_with_other_texts_is_not_an_answer(engine, alex, fake_llm, stack):
    ask_removal(engine, fake_llm, alex)
    fake_llm.enqueue_text("Which one do you mean?")
    user = get_person(alex, "en")
    joined = join_texts([read_text(user, "Y", 1), read_text(user, "Y", 2)])
    assert engine.respond(joined).reply.text == DROPPED + "Which one do you mean?"
    assert office_in_library(stack) and db.PendingAction.select().count() == 0


def test_only_a_yes_sent_after_the_question_answers_it(engine, alex, fake_llm, stack):
    def arrive(body):
        return db.Inbox.create(message_sid=f"SM{body}{db.Inbox.select().count()}", user=alex,
                               from_number=ADMIN, body=body).id

    arrive("delete The Office")
    on_its_way = arrive("yes")          # sent while the turn that asks was running
    ask_removal(engine, fake_llm, alex)
    fake_llm.enqueue_text("Great, I'll add it.")
    user = get_person(alex, "en")
    assert engine.respond(read_text(user, "yes", on_its_way)).reply.text == \
        DROPPED + "Great, I'll add it."
    assert office_in_library(stack)
    ask_removal(engine, fake_llm, alex)
    answer = arrive("Y")
    assert engine.respond(read_text(user, "Y", answer)).reply.text == \
        "Removed The Office (2005) and deleted its files."
    assert not office_in_library(stack)


def test_cancel_and_stop_are_not_no(engine, alex, fake_llm, stack):
    ask_removal(engine, fake_llm, alex)
    fake_llm.enqueue_text("ok")
    reply = engine.handle(alex, "CANCEL")
    assert reply == DROPPED + "ok", "CANCEL unsubscribes; it is not an answer"
    assert office_in_library(stack) and db.PendingAction.select().count() == 0


def test_after_expiry_y_executes_nothing(engine, alex, fake_llm, stack, clock):
    ask_removal(engine, fake_llm, alex)
    clock.advance(seconds=301)
    reply = engine.handle(alex, "Y")
    assert reply.startswith("Your request to remove The Office (2005) expired")
    assert office_in_library(stack)
    assert len(fake_llm.requests) == 1


def test_a_member_cannot_remove_even_when_the_model_calls_it(engine, sam, fake_llm, stack):
    fake_llm.enqueue_tool_calls([("remove_media", {"kind": "series", "id": OFFICE_TVDB})])
    fake_llm.enqueue_text("Sorry, only an admin can remove things.")
    assert engine.handle(sam, "delete The Office") == "Sorry, only an admin can remove things."
    assert offered(fake_llm.requests[0]) == offered(fake_llm.requests[1]), \
        "one tool list for the whole household (issue 31); the rule is enforced in code"
    assert "remove_media is only for admins, and this person is not one" in \
        tool_results(fake_llm.requests[1])[0]["error"]
    assert db.PendingAction.select().count() == 0
    assert engine.handle(sam, "Y") is not None and office_in_library(stack)


# -- the question and its outcomes in Spanish and German -----------------------------------

HELP_ES = (
    "mediabot: escríbeme como a una persona. Prueba \"consigue la nueva Dune\", \"¿qué se está "
    "descargando?\", \"¿algo nuevo esta semana?\" o \"¿tenemos Severance?\". Responde SÍ o NO "
    "cuando te pida confirmar. REINICIAR borra nuestro chat. STOP te da de baja, START te da "
    "de alta.")


KEPT_ES = "Vale, lo conservo. No se ha eliminado nada."


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


# -- the engine: a Spanish and a German household ------------------------------------------

@pytest.fixture
def spanish(engine_for):
    return engine_for(arr=True, sms={"language": "es"})


@pytest.fixture
def german(engine_for):
    return engine_for(arr=True, sms={"language": "de"})


def admin_asks_to_remove_the_office(engine, fake_llm):
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
    admin_asks_to_remove_the_office(spanish, fake_llm)
    assert spanish.handle(admin, "no, consérvala") == KEPT_ES
    assert office_in_library(stack)


def test_a_german_household_s_help_and_nein(german, fake_llm, stack):
    admin = db.User.get(phone=ADMIN).id
    assert german.handle(admin, "HILFE") == HELP_DE
    admin_asks_to_remove_the_office(german, fake_llm)
    assert german.handle(admin, "Nein, behalten") == KEPT_DE
    assert office_in_library(stack)


def test_a_spanish_text_that_is_not_an_answer_drops_the_question_in_spanish(spanish, fake_llm,
                                                                            stack):
    admin = admin_asks_to_remove_the_office(spanish, fake_llm)
    fake_llm.enqueue_text("Nada se está descargando.")
    reply = spanish.handle(admin, "¿qué se descarga?")
    assert reply == ("He descartado la pregunta sobre eliminar The Office (2005).\n"
                     "Nada se está descargando.")
    assert office_in_library(stack)


def test_a_spanish_answer_to_an_expired_question_says_so_in_spanish(spanish, fake_llm, stack,
                                                                    clock):
    admin = admin_asks_to_remove_the_office(spanish, fake_llm)
    clock.advance(minutes=6)
    assert spanish.handle(admin, "sí") == (
        "Tu solicitud para eliminar The Office (2005) ha caducado, así que no se ha eliminado "
        "nada. Vuelve a pedirlo si aún lo quieres.")
    assert office_in_library(stack)


def test_the_sweep_tells_a_german_household_in_german(german, fake_llm, stack, clock):
    admin_asks_to_remove_the_office(german, fake_llm)
    told = []
    expire_confirmations(clock() + dt.timedelta(minutes=6), lambda user, text: told.append(text),
                         "de")
    assert told == ["Deine Anfrage, The Office (2005) zu entfernen, ist abgelaufen, also wurde "
                    "nichts entfernt."]
