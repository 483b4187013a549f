"""Forgetting a conversation (RESET, ``mediabot history clear``): the messages, the pending
action and the summary, and only that person's."""

from mediabot.conversation import confirmations as confirm
from mediabot.conversation.forget import forget_conversation
from mediabot.conversation.history import get_history, save_message
from mediabot.store import db


def test_forgetting_takes_messages_pending_action_and_summary_and_only_that_users(database):
    alex = db.User.create(phone="+15551234567", summary="likes Dune", summary_through=2).id
    sam = db.User.create(phone="+15557654321", summary="likes Alien").id
    for who in (alex, alex, sam):
        save_message(who, {"role": "user", "content": "hi"})
    for who in (alex, sam):
        confirm.create_pending(who, "remove_media", {"kind": "movie", "id": 1}, "Remove Dune?",
                               ttl_seconds=300, now=db.utcnow())
    assert forget_conversation(alex) == 2
    assert get_history(alex, 10) == [] and len(get_history(sam, 10)) == 1
    assert confirm.active_pending(alex, db.utcnow()) is None
    assert confirm.active_pending(sam, db.utcnow()) is not None
    assert (db.User.get_by_id(alex).summary, db.User.get_by_id(alex).summary_through) == (
        None, None)
    assert db.User.get_by_id(sam).summary == "likes Alien"
