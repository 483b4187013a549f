"""The checks of ``mediabot check`` that ask Seerr, when ``[seerr]`` is set: reachable and
its version, the key accepted, each household member's link to a Seerr user (members with
no link, links that match nobody or several, what each user may do there), and the
``[requests]`` rules that no longer apply because Seerr decides.

Nothing here when ``[seerr]`` is not set: a household without Seerr sees no new line.
Each call is bounded by ``[seerr] timeout_seconds`` and made once.
"""

from mediabot.config import Config
from mediabot.seerr.api import Permission, SeerrClient, SeerrError, SeerrUser
from mediabot.store.db import Role
from mediabot.store.users import seerr_links_in
from mediabot.text.check_report import FAIL, OK, WARN, Line

Member = tuple[str, str | None, str, str | None]   # phone, name, role, seerr_user


def check_seerr(config: Config) -> list[Line]:
    """Seerr's lines; none without ``[seerr]``."""
    seerr = config.seerr
    if seerr is None:
        return []
    client = SeerrClient(seerr.url, seerr.api_key, timeout=seerr.timeout_seconds, retries=0)
    try:
        version = client.status().version
        owner = client.me()
    except SeerrError as exc:
        return [Line(FAIL, "seerr", _failure(exc, client.base))]
    lines = [Line(OK, "seerr", f"Seerr {version} at {client.base}, key accepted (it acts as "
                               f"{owner.shown_name}; requests are filed as each member)")]
    lines += _link_lines(client, _members(config))
    return lines + _rules_line(config)


def _failure(exc: SeerrError, base: str) -> str:
    if exc.kind == "unauthorized":
        return ("Seerr rejected [seerr] api_key — copy the API Key from Seerr's Settings > "
                "General into it (or MEDIABOT_SEERR_API_KEY)")
    if exc.kind == "unreachable":
        return f"cannot reach Seerr at {base} ({exc.message}) — check [seerr] url and the network"
    return f"Seerr at {base} answered unexpectedly: {exc.message} — is [seerr] url Seerr's address?"


def _members(config: Config) -> list[Member]:
    """The household as the daemon will know it: [[users]] entries, then users added by
    command (stored in the database) that the file does not list."""
    members: list[Member] = [(u.phone, u.name or None, u.role, u.seerr_user or None)
                             for u in config.users]
    listed = {u.phone for u in config.users}
    return members + [row for row in seerr_links_in(config.database.path)
                      if row[0] not in listed]


def _link_lines(client: SeerrClient, members: list[Member]) -> list[Line]:
    linked, lines = [], []
    shared: dict[int, list[str]] = {}
    for phone, name, role, link in members:
        who = f"{name} ({phone})" if name else phone
        if not link:
            lines.append(Line(WARN, "seerr", f"{who} has no Seerr link, so their requests "
                                             "cannot be filed — set seerr_user in their "
                                             "[[users]] entry (a Seerr user id, email or "
                                             "username)"))
            continue
        try:
            user = client.find_user(link)
        except SeerrError as exc:
            lines.append(Line(FAIL, "seerr", f"{who}: seerr_user = {link!r}: {exc.message}"))
            continue
        if user is None:
            lines.append(Line(FAIL, "seerr", f"{who}: seerr_user = {link!r} matches no Seerr "
                                             "user — use their Seerr id, email or username "
                                             "(Seerr's Users page lists them)"))
            continue
        linked.append(f"{name or phone} = {_known_as(user)} (id {user.id})")
        shared.setdefault(user.id, []).append(who)
        lines += _permission_lines(who, role, user)
    lines += [_shared_line(people, user_id) for user_id, people in shared.items()
              if len(people) > 1]
    if linked:
        lines.insert(0, Line(OK, "seerr", "linked: " + ", ".join(linked)))
    return lines


def _known_as(user: SeerrUser) -> str:
    """A Seerr user by a name its owner cannot set (Plex, Jellyfin, email), else Seerr's."""
    return user.plex_username or user.jellyfin_username or user.email or user.shown_name


def _shared_line(people: list[str], user_id: int) -> Line:
    """Two members on one Seerr user: Seerr files, approves and tells them as one person."""
    return Line(WARN, "seerr", f"{' and '.join(people)} resolve to the same Seerr user "
                               f"(id {user_id}), so Seerr takes their requests as one person's "
                               "(the first one's notices, approvals and quota) — give each "
                               "their own Seerr user: seerr_user = that user's id, email or "
                               "Plex/Jellyfin username")


def _permission_lines(who: str, role: str, user: SeerrUser) -> list[Line]:
    lines = []
    if not (user.has(Permission.REQUEST) or user.has(Permission.REQUEST_MOVIE)
            or user.has(Permission.REQUEST_TV)):
        lines.append(Line(WARN, "seerr", f"{who}: Seerr user {user.shown_name} may not "
                                         "request anything — give them Request in Seerr's "
                                         "Users > Edit > Permissions"))
    if role == Role.MEMBER and user.permissions & Permission.ADMIN:
        lines.append(Line(WARN, "seerr", f"{who} is a member here, but Seerr user "
                                         f"{user.shown_name} is a Seerr admin, so Seerr "
                                         "approves every request they text and they may "
                                         "decide anyone's in Seerr — link them to their own "
                                         "non-admin Seerr user, or make them role = "
                                         "\"admin\" here"))
    if role == Role.ADMIN and not user.has(Permission.MANAGE_REQUESTS):
        lines.append(Line(WARN, "seerr", f"{who} is an admin here, but Seerr user "
                                         f"{user.shown_name} lacks Manage Requests, so "
                                         "they cannot approve requests by text — give it "
                                         "in Seerr"))
    return lines


def _rules_line(config: Config) -> list[Line]:
    """[requests] approval and quotas are mediabot's own; Seerr's decide instead."""
    rules = config.requests
    set_ = [name for name, on in (("approval = \"members\"", rules.approval == "members"),
                                  (f"movies_per_week = {rules.movies_per_week}",
                                   rules.movies_per_week > 0),
                                  (f"seasons_per_week = {rules.seasons_per_week}",
                                   rules.seasons_per_week > 0)) if on]
    if not set_:
        return []
    return [Line(WARN, "requests", f"[requests] {', '.join(set_)} does not apply to requests "
                                   "filed in Seerr: Seerr's own approvals and quotas decide — "
                                   "set them per user in Seerr, and remove them here")]
