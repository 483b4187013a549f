"""Each asker's way into the household's Seerr: the ``SeerrLink`` a turn's tools file adds
through (``ToolContext.seerr``), made for the person the turn is for. The daemon hands the
conversation this factory (``app.build_services``), so the conversation never names Seerr.
"""

from mediabot.approvals.house_rules import HouseRules
from mediabot.approvals.seerr_members import seerr_id_of, seerr_name
from mediabot.seerr.add import SeerrLink
from mediabot.seerr.api import SeerrClient
from mediabot.store import users
from mediabot.store.people import Person, person_of


class MemberLinks:
    """``links(person)``: Seerr and that person's link to a Seerr user, and how the admins
    hear of a missing one (``rules.notify``: the texts the household's rules send)."""

    def __init__(self, client: SeerrClient, rules: HouseRules | None) -> None:
        self.client, self.rules = client, rules

    def __call__(self, user: Person) -> SeerrLink:
        client, kept = self.client, list[int]()

        def acting_as() -> int:
            """Their Seerr user id, resolved at most once a turn (and kept on their row)."""
            kept[:] = kept or [seerr_id_of(client, user)]
            return kept[0]
        return SeerrLink(client, user.seerr_user, user.admin,
                         lambda title: self._hint_admins(user, title), acting_as,
                         lambda lang, seerr_user: seerr_name(client, lang, seerr_user))

    def _hint_admins(self, user: Person, title: str) -> None:
        """Once per member and admin (the dedupe key): the admins who can fix the link."""
        rules = self.rules
        if rules is None or rules.notify is None:
            return
        for admin in users.active_admins():
            if admin.id != user.id:
                text = rules.speaks(admin).gettext(
                    "{name} asked for {title}, but their number has no working link to a "
                    "Seerr user, so nothing was requested. Set seerr_user for {phone} in "
                    "[[users]]; mediabot check lists every link.",
                    name=user.shown_name, title=title, phone=user.phone)
                rules.notify(person_of(admin, rules.language), text,
                             key=f"seerr-unlinked:{user.id}:{admin.id}")
