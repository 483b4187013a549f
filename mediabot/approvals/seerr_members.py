"""Who a Seerr user is to the household: a member by their link, or someone from outside.

A member's link (``[[users]] seerr_user``) is resolved to a Seerr user id once, by the rule
of ``seerr.api.links`` (an id, an email, a Plex or Jellyfin username; never a Display Name),
and the id is kept on the user (``users.keep_seerr_id``), so a name changed later in Seerr
moves nobody. A Seerr user no link resolves to is nobody here: no member is texted about
their requests, and a text that must name them says "a Seerr user, <Seerr's name>".
"""

from mediabot.approvals.house_rules import name_of
from mediabot.seerr.api import SeerrClient, SeerrError, SeerrUser, resolve_seerr_user
from mediabot.store import db, users
from mediabot.store.people import Person
from mediabot.text.language import Language

LINK_PROBLEMS = frozenset({"unlinked", "not_found", "ambiguous"})


def seerr_id_of(client: SeerrClient, member: db.User | Person) -> int:
    """The Seerr user id ``member`` acts as: kept, or resolved from their link now and kept
    (on a row read here too). Raises ``SeerrError`` as ``resolve_seerr_user`` does."""
    if member.seerr_id is not None:
        return int(member.seerr_id)
    found = resolve_seerr_user(client, member.seerr_user).id
    users.keep_seerr_id(member.id, found)
    if isinstance(member, db.User):
        member.seerr_id = found
    return found


def member_for(client: SeerrClient, seerr_user: SeerrUser) -> db.User | None:
    """The household member whose link resolves to this Seerr user, or None. Links not
    resolved yet are resolved (and kept) only when they could name this user, so a lookup
    costs no call once every link is kept."""
    found = users.seerr_member(seerr_user.id)
    if found is not None:
        return found
    for member in users.seerr_linked():
        if member.seerr_id is not None or not seerr_user.named_by(member.seerr_user or ""):
            continue
        try:
            if seerr_id_of(client, member) == seerr_user.id:
                return member
        except SeerrError as exc:
            if exc.kind not in LINK_PROBLEMS:
                raise
    return None


def seerr_label(seerr_user: SeerrUser) -> str:
    """Seerr's own name for a user (their Display Name, which they chose), as it may stand
    in a text: the rule for titles from outside."""
    return seerr_user.shown_name


def outsider_name(lang: Language, seerr_user: SeerrUser) -> str:
    """A Seerr user of no household member, as a text names them: "a Seerr user, theo"."""
    return lang.gettext("a Seerr user, {name}", name=seerr_label(seerr_user))


def seerr_name(client: SeerrClient, lang: Language, seerr_user: SeerrUser) -> str:
    """A member's own name, or the outsider's ("a Seerr user, theo")."""
    member = member_for(client, seerr_user)
    return name_of(member) if member is not None else outsider_name(lang, seerr_user)
