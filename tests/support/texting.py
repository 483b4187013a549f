"""Texting the /sms webhook in process as Twilio does, on SMS and WhatsApp, signed; WhatsApp's
24-hour window passing; Twilio's delivery reports."""

import time

from tests.support.household import ADMIN, ADMIN2, MEMBER, URL


def sign(url: str, params: dict, token: str = "secret-token") -> str:
    """X-Twilio-Signature exactly as Twilio computes it."""
    from twilio.request_validator import RequestValidator

    return RequestValidator(token).compute_signature(url, params)


_sids = iter(range(10**6))


def params(body, sender=ADMIN, sid=None):
    return {"MessageSid": sid or f"SM{next(_sids):032d}", "AccountSid": "AC" + "0" * 32,
            "From": sender, "To": "+15550001111", "Body": body, "NumMedia": "0"}


def text(client, body, sender=ADMIN, sid=None, signature=None):
    form = params(body, sender, sid)
    headers = {"X-Twilio-Signature": signature if signature is not None else sign(URL, form)}
    return client.post("/sms", data=form, headers=headers)


def settle(daemon):
    assert daemon.worker.wait_idle(10)


def wait_until(predicate, timeout=3.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


def by_whatsapp(daemon, fake_twilio, body, sender=MEMBER):
    """The person writes on WhatsApp: Twilio opens its 24-hour window, then posts the webhook."""
    fake_twilio.open_window(sender)
    response = text(daemon.app.test_client(), body, sender="whatsapp:" + sender)
    assert response.status_code == 200, response.get_data(as_text=True)
    settle(daemon)


def by_sms(daemon, fake_twilio, body, sender=MEMBER):
    """The person texts by SMS: Twilio reads its own opt-out words (STOP, START) first, then
    posts the webhook."""
    fake_twilio.received_sms(sender, body)
    response = text(daemon.app.test_client(), body, sender=sender)
    assert response.status_code == 200, response.get_data(as_text=True)
    settle(daemon)


def days_pass(fake_twilio, clock, days: int, phone: str = MEMBER) -> None:
    """``days`` pass without a word from them: WhatsApp's window is closed, ours and Twilio's."""
    clock.advance(days=days)
    fake_twilio.open_window(phone, at=time.time() - days * 86400)


def window_closes(fake_twilio, clock, phone=MEMBER):
    """A day and an hour pass without a word from them."""
    clock.advance(hours=25)
    fake_twilio.open_window(phone, at=time.time() - 25 * 3600)


STATUS_URL = "https://sms.example.com/sms/status"


def report(client, sid, state, error_code=None, url=STATUS_URL, signature=None, to=None):
    """Post Twilio's signed delivery report for message ``sid`` to /sms/status."""
    to = to or ADMIN2
    form = {"MessageSid": sid, "SmsSid": sid, "MessageStatus": state, "SmsStatus": state,
            "AccountSid": "AC" + "0" * 32, "From": "+15550001111", "To": to,
            "ApiVersion": "2010-04-01"}
    if error_code is not None:
        form["ErrorCode"] = str(error_code)
    headers = {"X-Twilio-Signature": sign(url, form) if signature is None else signature}
    return client.post("/sms/status", data=form, headers=headers)
