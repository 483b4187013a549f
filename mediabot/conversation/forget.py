"""Forgetting one person's conversation: what RESET (and ``mediabot history clear``) does.

It spans the stores that make up a conversation — the messages, the pending confirmation and
the rolling summary — so it lives above both the history core and the confirmations, and
neither of those imports the other.
"""

from mediabot.conversation import confirmations as confirm
from mediabot.conversation import history
from mediabot.store import db, users


def forget_conversation(user_id: int) -> int:
    """Delete the messages, the pending confirmation and the rolling summary together, in
    one transaction; return how many messages were deleted."""
    with db.database.atomic():
        removed = history.clear_history(user_id)
        confirm.clear_pending(user_id)
        users.set_summary(user_id, None, None)
    return removed
