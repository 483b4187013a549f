"""Root folder and quality/language profile choices, and the operator's ``check`` lines.

The add tools and ``mediabot check`` resolve the same settings the same way: the configured
name if it exists (else a ToolError listing what does), otherwise the server's first one.
These functions take an arrapi API object, so they run inside ``ArrClient.run``. The add
tools hand in the client's ``Metadata`` cache (a name missing from a cached list is looked
up once more on a fresh one); ``check`` hands in none, so it always reads the server.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from mediabot.arr.tools.base import ArrApi, KeyRejected, ServiceClient, ToolError
from mediabot.arr.tools.format import human_size
from mediabot.arr.tools.metadata import Metadata

T = TypeVar("T")


def root_folders(api: ArrApi) -> list[dict]:
    return api._raw.get_rootFolder()


def quality_profiles(api: ArrApi) -> list[dict]:
    return [{"id": p["id"], "name": p["name"]} for p in api._raw.get_qualityProfile()]


def language_profiles(api: ArrApi) -> list[dict]:
    return [{"id": p["id"], "name": p.get("name")} for p in api._raw.get_languageProfile()]


def _pick(metadata: Metadata | None, key: str, fetch: Callable[[], list],
          choose: Callable[[list], T | None]) -> tuple[T | None, list]:
    if metadata is None:
        items = fetch()
        return choose(items), items
    return metadata.pick(key, fetch, choose)


def pick_root_folder(api: ArrApi, name: str, configured: str,
                     metadata: Metadata | None = None) -> str:
    """The configured root folder's path, else the first; ToolError when there is none."""
    path, folders = _pick(metadata, "root_folders", lambda: root_folders(api),
                          lambda found: _root_path(found, configured))
    if path is not None:
        return path
    if not folders:
        raise ToolError(f"{name} has no root folders; add one in {name} under "
                        "Settings > Media Management")
    have = ", ".join(folder["path"] for folder in folders)
    raise ToolError(f"{name} has no root folder '{configured}'; it has: {have} "
                    f"(fix [{name.lower()}] root_folder)")


def _root_path(folders: list[dict], configured: str) -> str | None:
    if folders and not configured:
        return folders[0]["path"]
    return next((folder["path"] for folder in folders
                 if folder["path"].rstrip("/") == configured.rstrip("/")), None)


def pick_quality_profile(api: ArrApi, name: str, asked: str | None, configured: str,
                         metadata: Metadata | None = None) -> int:
    """The id of the asked profile, else the configured one, else the first.

    Names match case-insensitively; an unknown name is a ToolError listing the real ones.
    """
    wanted = asked or configured
    profile_id, profiles = _pick(metadata, "quality_profiles", lambda: quality_profiles(api),
                                 lambda found: _profile_id(found, wanted))
    if profile_id is not None:
        return profile_id
    if not profiles:
        raise ToolError(f"{name} has no quality profiles; create one in {name}")
    have = ", ".join(profile["name"] for profile in profiles)
    fix = "" if asked else f" (fix [{name.lower()}] quality_profile)"
    raise ToolError(f"{name} has no quality profile '{wanted}'; it has: {have}{fix}")


def _profile_id(profiles: list[dict], wanted: str | None) -> int | None:
    if not wanted:
        return profiles[0]["id"] if profiles else None
    return next((profile["id"] for profile in profiles
                 if profile["name"].casefold() == wanted.casefold()), None)


def pick_language_profile(api: ArrApi, metadata: Metadata | None = None) -> int | None:
    """Sonarr v3 needs a language profile on add (the first); v4 has none."""
    if api._raw.v4:
        return None
    profile_id, _ = _pick(metadata, "language_profiles", lambda: language_profiles(api),
                          lambda found: found[0]["id"] if found else None)
    if profile_id is None:
        raise ToolError("Sonarr has no language profiles; create one in Sonarr")
    return profile_id


def check_client(client: ServiceClient) -> list[tuple[bool, str]]:
    """Reachable and version, key accepted, root folder, quality profile: one line each."""
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


def _check_line(run: Callable[..., str], fn: Callable[[ArrApi, str, str], str], name: str,
                configured: str) -> tuple[bool, str]:
    try:
        return True, run(fn, name, configured)
    except ToolError as exc:
        return False, str(exc)


def _root_folder_line(api: ArrApi, name: str, configured: str) -> str:
    folders = Metadata()   # one read of the server's list, shared by the pick and the line
    path = pick_root_folder(api, name, configured, folders)
    folder = next(f for f in folders.get("root_folders", lambda: root_folders(api))
                  if f["path"] == path)
    if folder.get("accessible") is False:
        raise ToolError(f"{name} root folder {path} is not accessible (is the disk mounted?)")
    free = human_size(folder.get("freeSpace") or 0)
    how = "configured" if configured else "none configured, using the first"
    return f"{name} root folder {path} ({how}; {free} free)"


def _profile_line(api: ArrApi, name: str, configured: str) -> str:
    profiles = Metadata()
    profile_id = pick_quality_profile(api, name, None, configured, profiles)
    profile = next(p["name"] for p in profiles.get("quality_profiles",
                                                   lambda: quality_profiles(api))
                   if p["id"] == profile_id)
    how = "configured" if configured else "none configured, using the first"
    return f"{name} quality profile {profile} ({how})"
