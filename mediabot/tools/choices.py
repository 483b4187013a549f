"""Root folder and quality/language profile choices, and the operator's ``check`` lines.

The add tools and ``mediabot check`` resolve the same settings the same way: the configured
name if it exists (else a ToolError listing what does), otherwise the server's first one.
These functions take an arrapi API object, so they run inside ``ArrClient.run``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mediabot.tools.base import ToolError
from mediabot.tools.format import human_size

if TYPE_CHECKING:
    from mediabot.tools.arr import ArrClient


def pick_root_folder(api, name: str, configured: str) -> str:
    """The configured root folder's path, else the first; ToolError when there is none."""
    folders = [folder._data for folder in api.root_folder()]
    if not folders:
        raise ToolError(f"{name} has no root folders; add one in {name} under "
                        "Settings > Media Management")
    if not configured:
        return folders[0]["path"]
    for folder in folders:
        if folder["path"].rstrip("/") == configured.rstrip("/"):
            return folder["path"]
    have = ", ".join(folder["path"] for folder in folders)
    raise ToolError(f"{name} has no root folder '{configured}'; it has: {have} "
                    f"(fix [{name.lower()}] root_folder)")


def pick_quality_profile(api, name: str, asked: str | None, configured: str) -> int:
    """The id of the asked profile, else the configured one, else the first.

    Names match case-insensitively; an unknown name is a ToolError listing the real ones.
    """
    profiles = [(profile.id, profile.name) for profile in api.quality_profile()]
    if not profiles:
        raise ToolError(f"{name} has no quality profiles; create one in {name}")
    wanted = asked or configured
    if not wanted:
        return profiles[0][0]
    for profile_id, profile_name in profiles:
        if profile_name.casefold() == wanted.casefold():
            return profile_id
    have = ", ".join(profile_name for _, profile_name in profiles)
    raise ToolError(f"{name} has no quality profile '{wanted}'; it has: {have}")


def pick_language_profile(api) -> int | None:
    """Sonarr v3 needs a language profile on add (the first); v4 has none."""
    if api._raw.v4:
        return None
    profiles = api.language_profile()
    if not profiles:
        raise ToolError("Sonarr has no language profiles; create one in Sonarr")
    return profiles[0].id


def check_client(client: "ArrClient") -> list[tuple[bool, str]]:
    """Reachable and version, key accepted, root folder, quality profile: one line each."""
    from mediabot.tools.arr import KeyRejected
    name, key = client.name, client.kind
    try:
        version = client.run(lambda api: api.system_status().version)
    except KeyRejected as exc:
        return [(True, f"{name} answers at {client.shown_url}"), (False, str(exc))]
    except ToolError as exc:
        return [(False, f"{exc} — is it running? Check [{key}] url")]
    lines = [(True, f"{name} {version} answers at {client.shown_url}"),
             (True, f"{name} accepted the API key")]
    lines.append(_check_line(client.run, _root_folder_line, name, client.config.root_folder))
    lines.append(_check_line(client.run, _profile_line, name, client.config.quality_profile))
    return lines


def _check_line(run, fn, name: str, configured: str) -> tuple[bool, str]:
    try:
        return True, run(fn, name, configured)
    except ToolError as exc:
        return False, str(exc)


def _root_folder_line(api, name: str, configured: str) -> str:
    path = pick_root_folder(api, name, configured)
    folder = next(f._data for f in api.root_folder() if f._data["path"] == path)
    if folder.get("accessible") is False:
        raise ToolError(f"{name} root folder {path} is not accessible (is the disk mounted?)")
    free = human_size(folder.get("freeSpace") or 0)
    how = "configured" if configured else "none configured, using the first"
    return f"{name} root folder {path} ({how}; {free} free)"


def _profile_line(api, name: str, configured: str) -> str:
    profile_id = pick_quality_profile(api, name, None, configured)
    profile = next(p.name for p in api.quality_profile() if p.id == profile_id)
    how = "configured" if configured else "none configured, using the first"
    return f"{name} quality profile {profile} ({how})"
