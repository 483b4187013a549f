"""The phone's webhook signature: the reference vector, and forged, stale and replayed posts."""

import pytest

from mediabot.carrier.sms_gateway.signing import Verdict, sign, verify

KEY = "Ab3dE6gH"
STAMP = "1772377200"
BODY = (b'{"deviceId":"dev1","event":"sms:received","id":"evt1","payload":{"messageId":'
        b'"1a2b3c4d","message":"hi","phoneNumber":"+15551234567","receivedAt":'
        b'"2026-03-01T10:00:00.000-05:00","sender":"+15551234567","simNumber":1},'
        b'"webhookId":"wh1"}')
VECTOR = "cebfec0a75d833fd59710e3caf20c981ad2bad864e7e2463a0b2dbadc1a81d11"
NOW = float(STAMP) + 3


def test_the_signature_is_hmac_sha256_over_the_body_then_the_timestamp():
    assert sign(KEY, BODY, STAMP) == VECTOR


def test_a_post_the_phone_signed_just_now_is_accepted():
    assert verify(KEY, BODY, VECTOR, STAMP, now=NOW) is Verdict.OK
    assert verify(KEY, BODY, VECTOR.upper(), STAMP, now=NOW) is Verdict.OK


@pytest.mark.parametrize("body, signature, stamp, key, verdict", [
    (BODY.replace(b'"hi"', b'"STOP"'), VECTOR, STAMP, KEY, Verdict.FORGED),   # altered text
    (BODY, VECTOR, STAMP, "another-key", Verdict.FORGED),                      # wrong key
    (BODY, sign(KEY, BODY, str(int(STAMP) + 1)), STAMP, KEY, Verdict.FORGED),  # stamp swapped
    (BODY, "é" * 64, STAMP, KEY, Verdict.FORGED),                              # not hex at all
    (BODY, None, STAMP, KEY, Verdict.UNSIGNED),
    (BODY, VECTOR, None, KEY, Verdict.UNSIGNED),
    (BODY, VECTOR, STAMP, "", Verdict.UNSIGNED),                               # no key set
    (BODY, VECTOR, "1772377200.5", KEY, Verdict.BAD_TIMESTAMP),
    (BODY, VECTOR, "-1", KEY, Verdict.BAD_TIMESTAMP),
])
def test_anything_but_the_phone_s_own_signature_is_refused(body, signature, stamp, key, verdict):
    assert verify(key, body, signature, stamp, now=NOW) is verdict


def test_a_replay_after_the_window_is_refused_even_with_the_right_signature():
    assert verify(KEY, BODY, VECTOR, STAMP, now=float(STAMP) + 301) is Verdict.STALE
    assert verify(KEY, BODY, VECTOR, STAMP, now=float(STAMP) - 301) is Verdict.STALE
    assert verify(KEY, BODY, VECTOR, STAMP, now=float(STAMP) + 300) is Verdict.OK


def test_the_window_is_the_caller_s_to_set():
    assert verify(KEY, BODY, VECTOR, STAMP, now=NOW, window=2) is Verdict.STALE
