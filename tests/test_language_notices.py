"""The texts the messaging and mailbox layers write by themselves (the rate-limit notice,
the apologies, the reply to an unknown number) in the household's language, and
``[sms] accents`` on what the model writes, through the daemon's webhook and worker on
the fake model and the fake Twilio."""

import time

import pytest

from mediabot.answering.faults import RetryPolicy
from mediabot.store import db
from mediabot.text.sms import count_segments
from mediabot.trial.sim.loopback import wait_for
from tests.support import settle, text
from tests.test_storage_faults import received, turns_cannot_write

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

    daemon.worker.answering.engine.answer = broken
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
