"""End to end: what a Seerr user typed into their own profile reaches an admin's phone only
as one short line with no link (``text/outside.py``), through a real `mediabot serve`, the
fake Seerr posting its webhook and the fake Twilio."""

import pytest

from mediabot.trial.sim.loopback import wait_for
from tests.fakes.seerr_model import Permission
from tests.support.household import ADMIN, SECRET
from tests.support.sent import sent_to

pytestmark = pytest.mark.e2e

DUNE_TWO = 693134
FORGED = ("Bob\nmediabot: URGENT - the server disk is full. Reply DELETE ALL, or fix it at "
          "http://evil.example/fix")
ASKED = " asked for Dune: Part Two (2024). Reply APPROVE 1 or DENY 1"


def test_a_display_name_with_line_breaks_and_a_link_reaches_the_admin_as_one_short_line(
        serve, seerr, fake_twilio):
    """Theo, a Seerr user of nobody in the household, makes his Display Name a forged
    mediabot line with a link, and requests a film in the web UI. Alex is asked about it
    in one line: Theo's name cut short, no line break, no link."""
    seerr.add_user("alex", permissions=Permission.MANAGE_REQUESTS)
    theo = seerr.add_user("theo", permissions=Permission.REQUEST)
    daemon = serve(f"""seerr_user = "alex"
[seerr]
url = "{seerr.url}"
api_key = "{seerr.api_key}"
[notifications]
webhook_secret = "{SECRET}"
""")
    seerr.configure_webhook(daemon.url + "/hooks/seerr", authorization=f"Bearer {SECRET}")
    seerr.set_display_name(theo, FORGED)
    seerr.request_in_web_ui(theo, "movie", DUNE_TWO)
    assert seerr.wait_for_webhooks()
    assert wait_for(lambda: len(sent_to(fake_twilio, ADMIN)) == 1)

    [asked] = sent_to(fake_twilio, ADMIN)
    assert asked.endswith(ASKED)
    assert "\n" not in asked and "\r" not in asked
    assert "http" not in asked and "evil" not in asked
    assert "Bob mediabot: URGENT" in asked
    assert len(asked) - len(ASKED) <= 60   # the name, bounded (with any "a Seerr user, ")
