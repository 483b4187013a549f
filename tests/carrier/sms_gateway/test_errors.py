"""Each failure read once into worth-another-try or refused, with a reason and no secret."""

import pytest
import requests

from mediabot.carrier.sms_gateway.errors import (
    GatewayError,
    from_exception,
    from_response,
    not_json,
)


def answer(status: int, body: bytes, content_type: str = "application/json") -> requests.Response:
    response = requests.Response()
    response.status_code, response._content = status, body
    response.headers["Content-Type"] = content_type
    response.reason = "Reason"
    return response


@pytest.mark.parametrize("exc, words", [
    (requests.ConnectTimeout("http://sms:pw@phone"), "did not answer in time"),
    (requests.ReadTimeout(), "did not answer in time"),
    (requests.ConnectionError("http://sms:pw@phone refused"), "could not be reached"),
    (requests.TooManyRedirects(), "TooManyRedirects"),
])
def test_no_answer_is_worth_another_try_and_names_no_url(exc, words):
    error = from_exception(exc)
    assert error.retry and error.status == 0 and words in error.reason
    assert "pw" not in str(error)


def test_the_app_s_message_is_the_reason_of_a_refusal():
    error = from_response(answer(400, b'{"message": "Invalid  phone\\nnumber"}'))
    assert (error.retry, error.status, error.reason) == (False, 400, "Invalid phone number")
    assert str(error) == "SMS gateway refused (HTTP 400): Invalid phone number"


@pytest.mark.parametrize("status, retry", [(500, True), (502, True), (503, True), (504, True),
                                           (408, True), (429, True), (501, False),
                                           (401, False), (403, False), (404, False)])
def test_statuses_are_classified(status, retry):
    assert from_response(answer(status, b"<html>")).retry is retry


def test_a_409_says_the_send_was_already_accepted():
    assert from_response(answer(409, b'{"message": "exists"}')).already_accepted
    assert not GatewayError("x", retry=True, status=503).already_accepted


def test_a_page_that_is_not_json_is_worth_another_try():
    error = not_json(answer(200, b"<html>", "text/html; charset=utf-8"))
    assert error.retry and "text/html" in error.reason
