"""The /sms webhook (``webhooks/web.py``) and the worker behind it, in process, with the fake
OpenAI and Twilio: signatures (over the URL operators spell, query strings included), duplicates,
STOP and START, a picture with no text, the rate limit, /healthz and a crash's leftovers."""

import pytest

from mediabot.answering.texts_pass import RATE_LIMIT_REPLY
from mediabot.answering.worker import UNKNOWN_SENDER_REPLY
from mediabot.store import db
from tests.support.clock import short_stamped, unstamped
from tests.support.household import ADMIN, MEMBER, URL
from tests.support.texting import params, settle, sign, text


@pytest.fixture
def daemon(daemon_for):
    return daemon_for()


@pytest.fixture
def client(daemon):
    return daemon.app.test_client()


def test_signed_sms_is_acknowledged_with_empty_twiml_and_answered(daemon, client, fake_llm,
                                                                   fake_twilio):
    fake_llm.enqueue_text("Hi Alex!")
    response = text(client, "hello")
    assert response.status_code == 200
    assert response.mimetype == "text/xml"
    assert response.data.decode().endswith("<Response/>")
    settle(daemon)
    assert [(m["to"], m["body"]) for m in fake_twilio.sent] == [(ADMIN, "Hi Alex!")]
    assert db.Inbox.get().status == "done"


@pytest.mark.parametrize("signature", ["", "forged=", None])
def test_bad_signatures_get_403_and_store_nothing(client, fake_llm, signature):
    form = params("hello")
    headers = {} if signature is None else {"X-Twilio-Signature": signature}
    assert client.post("/sms", data=form, headers=headers).status_code == 403
    assert db.Inbox.select().count() == 0


def test_tampered_body_and_wrong_url_get_403(client):
    form = params("hello")
    good = sign(URL, form)
    assert client.post("/sms", data={**form, "Body": "delete everything"},
                       headers={"X-Twilio-Signature": good}).status_code == 403
    stale = sign("http://internal:8080/sms", form)
    assert client.post("/sms", data=form, headers={"X-Twilio-Signature": stale}).status_code == 403
    assert db.Inbox.select().count() == 0


def test_malformed_requests_get_400(client):
    for form in ({"From": ADMIN, "Body": "x"}, {"MessageSid": "SM1", "Body": "x"},
                 {"MessageSid": "SM2", "From": "not a number", "Body": "x"}):
        response = client.post("/sms", data=form, headers={"X-Twilio-Signature": sign(URL, form)})
        assert response.status_code == 400, form
    assert db.Inbox.select().count() == 0


def test_same_message_sid_three_times_gets_one_reply(daemon, client, fake_llm, fake_twilio):
    fake_llm.set_responder(lambda body: "One answer.")
    for _ in range(3):
        assert text(client, "hello", sid="SM" + "7" * 32).status_code == 200
    settle(daemon)
    assert fake_twilio.bodies() == ["One answer."]
    assert len(fake_llm.requests) == 1


def test_unknown_number_is_ignored_without_a_model_call(daemon, client, fake_llm, fake_twilio):
    assert text(client, "hi", sender="+15559998888").status_code == 200
    settle(daemon)
    row = db.Inbox.get()
    assert (row.status, row.user_id) == ("ignored", None)
    assert fake_llm.requests == [] and fake_twilio.sent == []


def test_unknown_number_gets_one_fixed_reply_when_configured(daemon_for, fake_llm, fake_twilio):
    daemon = daemon_for(sms={"unknown_senders": "reply"})
    client = daemon.app.test_client()
    text(client, "hi", sender="+15559998888")
    text(client, "hello??", sender="+15559998888")
    settle(daemon)
    daemon.worker._pool.shutdown(wait=True)
    assert fake_twilio.bodies() == [UNKNOWN_SENDER_REPLY]
    assert fake_llm.requests == []


def test_stop_then_start(daemon, client, fake_llm, fake_twilio):
    text(client, "STOP")
    settle(daemon)
    assert db.User.get(phone=ADMIN).opted_out
    text(client, "what's downloading?")
    settle(daemon)
    assert fake_twilio.sent == [] and fake_llm.requests == []
    text(client, "START")
    settle(daemon)
    assert not db.User.get(phone=ADMIN).opted_out
    assert fake_twilio.sent == [], "Twilio answers START itself"
    fake_llm.enqueue_text("Back again!")
    text(client, "hello")
    settle(daemon)
    assert fake_twilio.bodies() == ["Back again!"]


def test_yes_opts_in_and_is_still_handled(daemon, client, fake_llm, fake_twilio):
    db.User.update(opted_out=True).where(db.User.phone == ADMIN).execute()
    fake_llm.enqueue_text("Great, what would you like?")
    text(client, "Yes")
    settle(daemon)
    assert not db.User.get(phone=ADMIN).opted_out
    assert fake_twilio.bodies() == ["Great, what would you like?"]


def test_messages_during_a_turn_are_joined_into_the_next(daemon, client, fake_llm, fake_twilio):
    fake_llm.enqueue_delay(0.5)
    fake_llm.set_responder(lambda body: "ok")
    text(client, "get Dune")
    import time
    time.sleep(0.1)
    text(client, "the 2021 one")
    text(client, "in 4K")
    settle(daemon)
    assert len(fake_llm.requests) == 2
    last_user = [m for m in fake_llm.requests[1]["messages"] if m["role"] == "user"][-1]
    assert last_user["content"] == short_stamped("the 2021 one\nin 4K")
    assert len(fake_twilio.sent) == 2


def test_rate_limit_sends_one_polite_sms_and_calls_no_model(daemon_for, fake_llm, fake_twilio):
    daemon = daemon_for(sms={"rate_limit_per_hour": 2})
    client = daemon.app.test_client()
    fake_llm.set_responder(lambda body: "ok")
    for i in range(5):
        text(client, f"message {i}")
        settle(daemon)
    assert len(fake_llm.requests) == 2
    assert fake_twilio.bodies() == ["ok", "ok", RATE_LIMIT_REPLY]


def test_member_and_admin_are_processed_in_parallel_without_mixing(daemon, client, fake_llm,
                                                                   fake_twilio):
    fake_llm.set_responder(lambda body: "for " + unstamped(body["messages"][-1]["content"]))
    text(client, "alex here")
    text(client, "sam here", sender=MEMBER)
    settle(daemon)
    assert sorted((m["to"], m["body"]) for m in fake_twilio.sent) == [
        (ADMIN, "for alex here"), (MEMBER, "for sam here")]


def test_long_markdown_reply_with_emoji_is_gsm7_and_short(daemon, client, fake_llm, fake_twilio):
    from mediabot.text.sms import is_gsm7
    fake_llm.enqueue_text("**Great news!** 🎉 Here’s what’s new — " + "*Dune* is ready… " * 60)
    text(client, "what's new?")
    settle(daemon)
    body = fake_twilio.bodies()[0]
    assert is_gsm7(body) and len(body) <= 480
    assert "**" not in body and "🎉" not in body


def test_healthz(daemon, client):
    response = client.get("/healthz")
    assert response.status_code == 503 and response.json["scheduler"] == "stopped"
    daemon.scheduler.start()
    try:
        response = client.get("/healthz")
        assert response.status_code == 200
        assert response.json == {"status": "ok", "database": "ok", "scheduler": "running"}
    finally:
        daemon.scheduler.shutdown(wait=False)


def test_crash_leftovers_are_answered_once_at_start(daemon, fake_llm, fake_twilio):
    alex = db.User.get(phone=ADMIN)
    db.Inbox.create(message_sid="SM-left", user=alex, from_number=ADMIN, body="still there?",
                    status="processing")
    fake_llm.enqueue_text("Yes, sorry for the wait.")
    daemon.worker.recover()
    settle(daemon)
    daemon.worker.recover()
    settle(daemon)
    assert fake_twilio.bodies() == ["Yes, sorry for the wait."]


def test_signature_checking_off_is_logged_loudly_and_accepts_unsigned(daemon_for, caplog,
                                                                      fake_llm, fake_twilio):
    import logging

    caplog.set_level(logging.WARNING, logger="mediabot")
    daemon = daemon_for(twilio={"validate_signature": False})
    assert any("SIGNATURE CHECKING IS OFF" in r.getMessage() and r.levelno == logging.WARNING
               for r in caplog.records)
    fake_llm.enqueue_text("Local trial works.")
    response = daemon.app.test_client().post("/sms", data=params("hello"))
    assert response.status_code == 200
    settle(daemon)
    assert fake_twilio.bodies() == ["Local trial works."]


def test_a_turn_that_crashed_after_storing_its_reply_is_not_run_again(daemon, fake_llm,
                                                                      fake_twilio):
    """The engine stored 'Added ...' but the process died before the outbox: the restart
    sends that reply instead of adding the film a second time."""
    from mediabot.conversation import history

    alex = db.User.get(phone=ADMIN)
    db.Inbox.create(message_sid="SM-crashed", user=alex, from_number=ADMIN,
                    body="add Dune 1984", status="processing")
    history.save_message(alex.id, {"role": "user", "content": "add Dune 1984"})
    history.save_message(alex.id, {"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "add_movie", "arguments": '{"tmdb_id": 841}'}}], "content": None})
    history.save_message(alex.id, {"role": "tool", "tool_call_id": "c1", "content": "{}"})
    history.save_message(alex.id, {"role": "assistant", "content": "Added Dune (1984)."})
    daemon.worker.recover()
    settle(daemon)
    assert fake_twilio.bodies() == ["Added Dune (1984)."]
    assert fake_llm.requests == []
    assert db.Inbox.get().status == "done"


def test_an_older_reply_is_not_mistaken_for_the_crashed_turns(daemon, fake_llm, fake_twilio):
    from mediabot.conversation import history

    alex = db.User.get(phone=ADMIN)
    history.save_message(alex.id, {"role": "user", "content": "what's new?"})
    history.save_message(alex.id, {"role": "assistant", "content": "Yesterday's answer."})
    db.Inbox.create(message_sid="SM-again", user=alex, from_number=ADMIN, body="what's new?",
                    status="processing")
    fake_llm.enqueue_text("Today's answer.")
    daemon.worker.recover()
    settle(daemon)
    assert fake_twilio.bodies() == ["Today's answer."]


def test_a_query_string_that_is_not_utf8_is_refused_not_a_500(daemon_for):
    client = daemon_for().app.test_client()
    form = params("hello")
    response = client.post("/sms", data=form, headers={"X-Twilio-Signature": sign(URL, form)},
                           environ_overrides={"QUERY_STRING": "x=\xff"})
    assert response.status_code == 403
    assert db.Inbox.select().count() == 0


def test_a_signed_query_string_is_accepted(daemon_for):
    client = daemon_for().app.test_client()
    form = params("hello")
    signature = sign(URL + "?src=twilio&x=%C3%A9", form)
    response = client.post("/sms?src=twilio&x=%C3%A9", data=form,
                           headers={"X-Twilio-Signature": signature})
    assert response.status_code == 200


def test_a_picture_with_no_text_gets_a_fixed_reply_without_a_model_call(daemon_for, fake_llm,
                                                                        fake_twilio):
    from mediabot.conversation.engine import NO_TEXT_REPLY

    daemon = daemon_for()
    form = {**params(""), "NumMedia": "1", "MediaUrl0": "https://api.twilio.com/m/ME1.jpg",
            "MediaContentType0": "image/jpeg"}
    response = daemon.app.test_client().post("/sms", data=form,
                                             headers={"X-Twilio-Signature": sign(URL, form)})
    assert response.status_code == 200
    assert daemon.worker.wait_idle(10)
    assert fake_llm.requests == [], "the model is never asked about an empty message"
    assert fake_twilio.bodies() == [NO_TEXT_REPLY]


@pytest.mark.parametrize("public_url,twilio_calls", [
    ("https://sms.example.com/", "https://sms.example.com/sms"),
    ("https://example.com:8443/mediabot", "https://example.com:8443/mediabot/sms"),
    ("https://sms.example.com/sms", "https://sms.example.com/sms"),  # the webhook URL itself
])
def test_public_url_spellings_operators_use_validate(daemon_for, public_url, twilio_calls):
    client = daemon_for(server={"public_url": public_url}).app.test_client()
    form = params("hello")
    response = client.post("/sms", data=form,
                           headers={"X-Twilio-Signature": sign(twilio_calls, form)})
    assert response.status_code == 200
