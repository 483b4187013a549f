"""A household member's link to their Seerr user (``[[users]] seerr_user``), resolved.

The link is what the operator wrote, and it names a Seerr user one way only:

- a Seerr user id ("7") names that id;
- an email ("sam@example.com") names the one user with that email (Seerr keeps emails
  unique);
- anything else names the user whose Plex or Jellyfin username it is, as Seerr reports it.

A Display Name never names anyone: Seerr stores it as the user's ``username`` and lets each
user set their own, so "12" or a member's email typed there is only a name. Everything done
for a member in Seerr is done as the user the link names (``X-API-User``), never as the
main key's owner, so a link that names nobody is an error, not a fallback.
"""

from mediabot.seerr.api.api_errors import SeerrError
from mediabot.seerr.api.client import SeerrClient
from mediabot.seerr.api.models import SeerrUser


def resolve_seerr_user(client: SeerrClient, link: str | None) -> SeerrUser:
    """The Seerr user ``link`` names.

    Raises ``SeerrError``: ``unlinked`` when there is no link, ``not_found`` when it names
    nobody, ``ambiguous`` when it names several, or whatever the call itself met
    (``unreachable``, ``unauthorized``...).
    """
    wanted = (link or "").strip()
    if not wanted:
        raise SeerrError("unlinked", "this member has no Seerr user (seerr_user)")
    user = client.find_user(wanted)
    if user is None:
        raise SeerrError("not_found", f"seerr_user {wanted!r} matches no Seerr user")
    return user
