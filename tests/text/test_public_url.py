"""Which URLs Twilio may be asked to fetch (``text/public_url.py``): public https only, no
credentials, at most three, each once."""

import pytest

from mediabot.text.public_url import web_urls
from tests.support.posters import DUNE_1984, PRIVATE_POSTERS, TVDB


def test_the_sender_drops_what_twilio_should_not_fetch():
    assert web_urls(["https://a.example.com/1.jpg", "file:///etc/passwd", "javascript:x",
                     "http://b.example.com/2.jpg", "https://a.example.com/1.jpg",
                     "https://c.example.com/3.jpg", "https://d.example.com/4.jpg",
                     "https://e.example.com/5.jpg"]) == \
        ["https://a.example.com/1.jpg", "https://c.example.com/3.jpg",
         "https://d.example.com/4.jpg"]


@pytest.mark.parametrize("url", PRIVATE_POSTERS)
def test_a_poster_twilio_cannot_fetch_or_that_carries_a_password_is_dropped(url):
    assert web_urls([url]) == []


@pytest.mark.parametrize("url", [DUNE_1984, TVDB.format("severance"), "https://8.8.8.8/p.jpg",
                                 "https://[2606:4700::1111]/p.jpg"])
def test_a_public_https_poster_is_kept(url):
    assert web_urls([url]) == [url]
