"""The household's language through the daemon: an admin is asked about a member's add in
the admin's own language, naming that language's answer words; the member hears the outcome
in theirs; Sonarr/Radarr's "ready" texts reach each requester in theirs; and the model is told
the language once, in the fixed part of its prompt. Texts are asserted as sent: SMS with
[sms] accents = "fold", so "pidió" goes out as "pidio" (ñ, é, ö and ß are GSM-7)."""

import datetime as dt

from mediabot.store import db
from mediabot.text.sms import count_segments
from tests.conftest import ADMIN, MEMBER
from tests.fakes import arr_webhooks as arr
from tests.support import ADMIN2, THREE, ask_for, person_part, sent_to, settle, text
from tests.test_arr_webhooks import ask, send, serve  # noqa: F401 (serve: a fixture)

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

def test_ready_texts_in_spanish_and_german(serve, fake_twilio, clock):
    """A Spanish household; its admin reads German. Each requester is told in theirs."""
    daemon = serve(sms={"language": "es", **FOLD})
    speaks(ADMIN, "de")
    for phone in (ADMIN, MEMBER):
        ask(phone, "radarr", arr.DUNE_TWO_TMDB, "Dune: Part Two", clock)
        ask(phone, "sonarr", arr.SEVERANCE_TVDB, "Severance", clock)
    assert send(daemon, "radarr", arr.radarr_download()).status_code == 200
    complete = arr.sonarr_import_complete([(2, 5), (2, 6), (2, 7)])
    assert send(daemon, "sonarr", complete).status_code == 200
    send(daemon, "sonarr", arr.sonarr_import_complete([(2, 8)], download_id="later"))
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
