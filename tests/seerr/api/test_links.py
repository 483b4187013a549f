"""resolve_seerr_user: a member's seerr_user (id, email, username) to their Seerr user."""

import pytest

from mediabot.seerr.api import SeerrClient, SeerrError, resolve_seerr_user
from tests.fakes.seerr import FakeSeerr
from tests.fakes.seerr_model import Permission


@pytest.fixture(scope="module")
def seerr():
    fake = FakeSeerr().start()
    fake.add_user("sam", email="sam@example.com", permissions=Permission.REQUEST)
    fake.add_user("jo", email="jo@example.com", plex_username="JoPlex")
    fake.add_user("jo2", email="jo2@example.com", plex_username="jo")
    yield fake
    fake.stop()
    fake.assert_clean()


@pytest.fixture
def client(seerr):
    return SeerrClient(seerr.url, seerr.api_key, timeout=3, retries=0)


@pytest.mark.parametrize("link,expected", [("2", 2), ("SAM@example.com", 2), ("sam", 2),
                                           (" joplex ", 3)])
def test_a_link_names_one_user(client, link, expected):
    assert resolve_seerr_user(client, link).id == expected


@pytest.mark.parametrize("link,kind", [(None, "unlinked"), ("  ", "unlinked"),
                                       ("99", "not_found"), ("kim@example.com", "not_found"),
                                       ("kim", "not_found")])
def test_no_link_or_nobody_is_an_error_not_the_owner(client, link, kind):
    with pytest.raises(SeerrError) as raised:
        resolve_seerr_user(client, link)
    assert raised.value.kind == kind
