"""The outbox (``mailbox/outbox.py``): what a row keeps until it is sent, across a restart."""

from mediabot.mailbox.delivery import Backoff, Sender
from mediabot.store import db, migrations
from mediabot.store.people import stranger
from tests.support.carriers import twilio_carriers
from tests.support.config_files import make_config
from tests.support.household import MEMBER
from tests.support.posters import CHOOSE, DUNE_1984, DUNE_2021
from tests.support.sent import only_message_to_sam


def test_an_mms_waiting_in_the_outbox_keeps_its_posters_after_a_restart(
        fake_llm, fake_twilio, tmp_path, clock):
    config = make_config(llm_url=fake_llm.url, twilio_url=fake_twilio.url,
                         db_path=str(tmp_path / "m.db"))
    migrations.open_database(config.database.path)
    fake_twilio.fail_next(503, times=2)
    first = Sender(twilio_carriers(config.twilio), config.twilio, clock=clock,
                   backoff=Backoff(attempts=2, base_seconds=0))
    row = first.send(stranger(MEMBER, "en"), CHOOSE, media_urls=[DUNE_1984, DUNE_2021])
    assert row.status == "pending" and fake_twilio.sent == []
    db.database.close()

    migrations.open_database(config.database.path)     # a new process finds the row pending
    clock.advance(minutes=5)
    second = Sender(twilio_carriers(config.twilio), config.twilio, clock=clock)
    assert second.deliver_due() == 1
    message = only_message_to_sam(fake_twilio)
    assert (message["body"], message["media_urls"]) == (CHOOSE, [DUNE_1984, DUNE_2021])
    db.database.close()
