"""The household's language through the daemon: an admin is asked about a member's add in
the admin's own language, naming that language's answer words; the member hears the outcome
in theirs; Sonarr/Radarr's "ready" texts reach each requester in theirs; and the model is told
the language once, in the fixed part of its prompt. The texts answering and the mailbox write
by themselves (the rate-limit notice, the apologies, the reply to an unknown number) are in
the household's language too, and ``[sms] accents`` applies to what the model writes. Texts
are asserted as sent: SMS with [sms] accents = "fold", so "pidió" goes out as "pidio" (ñ, é,
ö and ß are GSM-7)."""

import datetime as dt
import time

import pytest

from mediabot.answering.faults import RetryPolicy
from mediabot.store import db
from mediabot.text.sms import count_segments
from mediabot.trial.sim.loopback import wait_for
from tests.fakes import arr_webhooks as arr
from tests.support.arr_hooks import send_hook
from tests.support.asking import ask_for, requested
from tests.support.household import ADMIN, ADMIN2, MEMBER, THREE
from tests.support.prompts import person_part
from tests.support.sent import sent_to
from tests.support.texting import settle, text
from tests.support.worker import received, turns_cannot_write

YEAR = dt.date.today().year + 1
DUNE_THREE = f"Dune: Part Three ({YEAR})"
FOLD = {"accents": "fold"}
# The word an admin approves with, in the admin's language (English APPROVE is understood in
# every language: the Spanish test's second admin answers with it).
APPROVE = {"es": "APROBAR", "de": "GENEHMIGEN"}


def speaks(phone: str, tag: str) -> None:
    """Give one person their own language, as ``[[users]] language`` would."""
    db.User.update(language=tag).where(db.User.phone == phone).execute()


def test_a_spanish_household_is_asked_and_told_in_spanish(house, stack, fake_llm,
                                                          fake_twilio):
    daemon = house(approval="members", sms={"language": "es", **FOLD})
    ask_for(daemon, fake_llm, "add_movie", {"tmdb_id": THREE})
    question = f"Sam pidio {DUNE_THREE}. Responde APROBAR 1 o RECHAZAR 1"
    assert sent_to(fake_twilio, ADMIN) == [question] and count_segments(question) == 1
    assert sent_to(fake_twilio, ADMIN2) == [question]

    text(daemon.app.test_client(), f"{APPROVE['es']} 1", sender=ADMIN)
    settle(daemon)
    assert stack.has("movie", THREE)
    told = f"Alex aprobo {DUNE_THREE}: ya se añadio y te escribo cuando esté listo."
    assert sent_to(fake_twilio, MEMBER)[-1] == told and count_segments(told) == 1
    assert sent_to(fake_twilio, ADMIN)[-1] == (f"Solicitud 1 aprobada: se añadio {DUNE_THREE}. "
                                               "Ya se lo dije a Sam.")
    text(daemon.app.test_client(), "APPROVE 1", sender=ADMIN2)
    settle(daemon)
    assert sent_to(fake_twilio, ADMIN2)[-1] == (f"La solicitud 1 ({DUNE_THREE}) ya la aprobo "
                                                "Alex.")


def test_a_german_household_is_asked_and_told_in_german(house, stack, fake_llm, fake_twilio):
    daemon = house(approval="members", sms={"language": "de", **FOLD})
    ask_for(daemon, fake_llm, "add_movie", {"tmdb_id": THREE})
    question = f"Sam möchte {DUNE_THREE}. Antworte GENEHMIGEN 1 oder ABLEHNEN 1"
    assert sent_to(fake_twilio, ADMIN) == [question] and count_segments(question) == 1

    text(daemon.app.test_client(), f"{APPROVE['de']} 1", sender=ADMIN)
    settle(daemon)
    assert stack.has("movie", THREE)
    told = (f"Alex hat {DUNE_THREE} genehmigt: Es ist hinzugefügt, und ich schreibe dir, "
            "wenn es bereit ist.")
    assert sent_to(fake_twilio, MEMBER)[-1] == told and count_segments(told) == 1
    assert sent_to(fake_twilio, ADMIN)[-1] == (f"Anfrage 1 genehmigt: {DUNE_THREE} ist "
                                               "hinzugefügt. Sam weiß Bescheid.")


def test_each_person_reads_their_own_language(house, stack, fake_llm, fake_twilio):
    """An English household with a German admin and a Spanish member: each admin's question
    names the words of their language, and the denial reaches the member in Spanish."""
    daemon = house(approval="members")
    speaks(ADMIN2, "de")
    speaks(MEMBER, "es")
    ask_for(daemon, fake_llm, "add_movie", {"tmdb_id": THREE})
    assert sent_to(fake_twilio, ADMIN) == [f"Sam asked for {DUNE_THREE}. Reply APPROVE 1 or "
                                           "DENY 1"]
    assert sent_to(fake_twilio, ADMIN2) == [f"Sam möchte {DUNE_THREE}. Antworte GENEHMIGEN 1 "
                                            "oder ABLEHNEN 1"]
    text(daemon.app.test_client(), "ABLEHNEN 1", sender=ADMIN2)
    settle(daemon)
    assert not stack.has("movie", THREE)
    assert sent_to(fake_twilio, MEMBER)[-1] == f"Jo no aprobo {DUNE_THREE}, asi que no se añadio."
    assert sent_to(fake_twilio, ADMIN2)[-1] == (f"Anfrage 1 ({DUNE_THREE}) abgelehnt; Sam weiß "
                                                "Bescheid.")


def test_an_expired_request_is_told_in_the_members_language(house, fake_llm, fake_twilio,
                                                            clock):
    daemon = house(approval="members", approval_ttl_hours=24, sms={"language": "de", **FOLD})
    ask_for(daemon, fake_llm, "add_movie", {"tmdb_id": THREE})
    clock.advance(hours=25)
    daemon.scheduler.get_job("expire-approvals").func()
    assert sent_to(fake_twilio, MEMBER)[-1] == (
        f"Kein Admin hat rechtzeitig zu {DUNE_THREE} geantwortet, daher wurde es nicht "
        "hinzugefügt. Frag einfach noch mal, wenn du es noch willst.")


# -- "ready to watch", from Sonarr's and Radarr's webhooks -----------------------------------

def test_ready_texts_in_spanish_and_german(loopback_daemon, fake_twilio, clock):
    """A Spanish household; its admin reads German. Each requester is told in theirs."""
    daemon = loopback_daemon(sms={"language": "es", **FOLD})
    speaks(ADMIN, "de")
    for phone in (ADMIN, MEMBER):
        requested(phone, "radarr", arr.DUNE_TWO_TMDB, "Dune: Part Two", clock)
        requested(phone, "sonarr", arr.SEVERANCE_TVDB, "Severance", clock)
    assert send_hook(daemon, "radarr", arr.radarr_download()).status_code == 200
    complete = arr.sonarr_import_complete([(2, 5), (2, 6), (2, 7)])
    assert send_hook(daemon, "sonarr", complete).status_code == 200
    send_hook(daemon, "sonarr", arr.sonarr_import_complete([(2, 8)], download_id="later"))
    assert sent_to(fake_twilio, MEMBER) == ["Dune: Part Two ya esta listo para ver.",
                                            "Severance: S02E05-E07 ya estan listos.",
                                            "Severance: S02E08 ya esta listo."]
    assert sent_to(fake_twilio, ADMIN) == ["Dune: Part Two ist bereit zum Anschauen.",
                                           "Severance: S02E05-E07 sind bereit.",
                                           "Severance: S02E08 ist bereit."]
    assert {count_segments(body) for body in fake_twilio.bodies()} == {1}


# -- what the model is told ----------------------------------------------------------------

SPANISH_RULE = ("Write your replies in Spanish (es), unless the person writes to you in "
                "another language: then answer in theirs.")


def test_the_model_is_told_the_language_in_a_prompt_that_never_moves(house, fake_llm):
    daemon = house(sms={"language": "es"})
    for words in ("hola", "¿qué hay de nuevo esta semana?"):
        fake_llm.enqueue_text("Hola Sam.")
        text(daemon.app.test_client(), words, sender=MEMBER)
        settle(daemon)
    first, second = (request["messages"][0]["content"] for request in fake_llm.requests[-2:])
    assert first == second, "the system prompt is the cached prefix: the same on every text"
    assert SPANISH_RULE not in first, "the system prompt is the same for the whole household"
    mine, again = (person_part(request) for request in fake_llm.requests[-2:])
    assert mine == again and SPANISH_RULE in mine, "the person's part follows it, as still"

    fake_llm.enqueue_text("Hi Alex.")
    speaks(ADMIN, "en")
    text(daemon.app.test_client(), "hi", sender=ADMIN)
    settle(daemon)
    assert "Write your replies in" not in fake_llm.requests[-1]["messages"][0]["content"]
    assert "Write your replies in" not in person_part(fake_llm.requests[-1])


# -- what answering and the mailbox write by themselves ------------------------------------

RATE_LIMIT = {
    "es": "Has enviado muchos mensajes en esta hora, asi que hago una pausa. Vuelve a "
          "intentarlo dentro de un rato.",
    "de": "Du hast in dieser Stunde viele Nachrichten geschickt, deshalb mache ich eine kurze "
          "Pause. Versuch es später noch mal.",
}


UNKNOWN = {
    "es": "Lo siento, este numero solo responde a los miembros de su casa. Pide a quien lo "
          "gestiona que te añada.",
    "de": "Entschuldige, diese Nummer antwortet nur Mitgliedern ihres Haushalts. Bitte die "
          "Person, die sie betreut, dich hinzuzufügen.",
}


FAILED = {
    "es": "Perdona, algo ha fallado por mi parte. Vuelve a intentarlo.",
    "de": "Entschuldige, bei mir ist etwas schiefgegangen. Versuch es bitte noch mal.",
}


STORAGE = {
    "es": "Perdona, no pude guardar tu mensaje, asi que no pude responderlo. Vuelve a "
          "intentarlo en unos minutos.",
    "de": "Entschuldige, ich konnte deine Nachricht nicht speichern und deshalb nicht "
          "beantworten. Versuch es in ein paar Minuten noch mal.",
}


@pytest.mark.parametrize("language", ["es", "de"])
def test_the_rate_limit_notice_is_in_the_households_language(daemon_for, fake_llm, fake_twilio,
                                                            language):
    daemon = daemon_for(sms={"rate_limit_per_hour": 1, "language": language})
    client = daemon.app.test_client()
    fake_llm.set_responder(lambda body: "ok")
    for i in range(3):
        text(client, f"mensaje {i}")
        settle(daemon)
    assert len(fake_llm.requests) == 1
    assert fake_twilio.bodies() == ["ok", RATE_LIMIT[language]]
    assert count_segments(RATE_LIMIT[language]) == 1


@pytest.mark.parametrize("language", ["es", "de"])
def test_an_unknown_number_is_answered_in_the_households_language(daemon_for, fake_llm,
                                                                 fake_twilio, language):
    daemon = daemon_for(sms={"unknown_senders": "reply", "language": language})
    text(daemon.app.test_client(), "hola", sender="+34612345678")
    settle(daemon)
    daemon.worker._pool.shutdown(wait=True)
    assert fake_twilio.bodies() == [UNKNOWN[language]] and fake_llm.requests == []


@pytest.mark.parametrize("language", ["es", "de"])
def test_a_turn_that_breaks_is_apologised_for_in_the_households_language(
        daemon_for, fake_llm, fake_twilio, language):
    daemon = daemon_for(sms={"language": language})

    def broken(incoming):
        raise RuntimeError("a bug in the turn")

    daemon.worker.answering.engine.respond = broken
    text(daemon.app.test_client(), "¿qué hay de nuevo?")
    settle(daemon)
    assert fake_twilio.bodies() == [FAILED[language]]
    assert db.Inbox.get().status == "failed"


@pytest.mark.parametrize("language", ["es", "de"])
def test_after_the_last_storage_retry_the_apology_is_in_the_households_language(
        daemon_for, fake_llm, fake_twilio, language):
    daemon = daemon_for(sms={"language": language},
                        retry=RetryPolicy(attempts=3, base_seconds=0.05, max_seconds=0.1))
    with turns_cannot_write():
        received(daemon, "¿estás ahí?")
        time.sleep(0.6)
    assert wait_for(lambda: fake_twilio.sent, timeout=10)
    assert daemon.worker.wait_idle(10)
    assert fake_twilio.bodies() == [STORAGE[language]]
    assert count_segments(STORAGE[language]) == 1


ASKED = "¿Quieres que añada también la película? Está en 4K."
FOLDED = "¿Quieres que añada también la pelicula? Esta en 4K."    # é, ñ, ¿ are GSM-7


@pytest.mark.parametrize("sms, sent", [
    ({"language": "es"}, FOLDED), ({"language": "es", "accents": "keep"}, ASKED),
    ({"language": "pt"}, ASKED), ({"language": "pt", "accents": "fold"}, FOLDED),
], ids=["es-default-folds", "es-keep", "pt-default-keeps", "pt-fold"])
def test_the_models_accents_are_folded_or_kept_as_the_household_chose(
        daemon_for, fake_llm, fake_twilio, sms, sent):
    daemon = daemon_for(sms=sms)
    fake_llm.enqueue_text(ASKED)
    text(daemon.app.test_client(), "busca Dune")
    settle(daemon)
    assert fake_twilio.bodies() == [sent]
    assert db.Outbox.get().segments == 1


TIMEOUT = {
    "es": "Perdona, ahora mismo respondo muy despacio. Vuelve a intentarlo en un minuto.",
    "de": "Entschuldige, ich antworte gerade zu langsam. Versuch es in einer Minute noch mal.",
}


@pytest.mark.parametrize("language", ["es", "de"])
def test_a_model_that_times_out_is_apologised_for_in_the_households_language(
        daemon_for, fake_llm, fake_twilio, language):
    """The model server answers too late: the person reads the apology in their language
    (accents folded on SMS), in one segment."""
    daemon = daemon_for(sms={"language": language}, llm={"timeout_seconds": 0.5})
    fake_llm.enqueue_delay(2)
    fake_llm.enqueue_text("too late")
    text(daemon.app.test_client(), "hola")
    settle(daemon)
    sent = fake_twilio.bodies()
    assert sent == [TIMEOUT[language]] and count_segments(sent[0]) == 1
