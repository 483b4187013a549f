"""The fake Seerr's state as Seerr serialises it: TypeORM entities through ``res.json``.

Nullable columns are sent as null (``username``, ``serverId``...), fields a class leaves
undefined are left out, dates are ``toJSON()`` strings (``2026-11-22T20:00:00.000Z``), and
``User.filter()`` drops ``email`` unless the caller may see it (own profile or
MANAGE_USERS). A request carries its media (without the media's requests) and its users in
full, since ``requestedBy`` and ``modifiedBy`` are eager relations, never filtered.
"""

import datetime as dt
from typing import Any

from tests.fakes.seerr_catalog import Title
from tests.fakes.seerr_model import Media, MediaRequest, MediaStatus, User

PLEX_MACHINE_ID = "f1e2d3c4b5a697887766554433221100fedcba98"


def stamp(moment: dt.datetime | None) -> str | None:
    if moment is None:
        return None
    moment = moment.astimezone(dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def user_json(user: User, *, filtered: bool, request_count: int) -> dict[str, Any]:
    body: dict[str, Any] = {
        "permissions": user.permissions, "warnings": [], "id": user.id, "email": user.email,
        "plexUsername": user.plex_username, "jellyfinUsername": user.jellyfin_username,
        "username": user.username, "recoveryLinkExpirationDate": None,
        "userType": user.user_type, "plexId": 1000 + user.id if user.user_type == 1 else None,
        "jellyfinUserId": None, "avatar": user.avatar, "avatarETag": None,
        "avatarVersion": None, "movieQuotaLimit": user.movie_quota_limit,
        "movieQuotaDays": user.movie_quota_days, "tvQuotaLimit": user.tv_quota_limit,
        "tvQuotaDays": user.tv_quota_days, "createdAt": stamp(user.created_at),
        "updatedAt": stamp(user.created_at), "requestCount": request_count,
        "displayName": user.display_name,
    }
    if filtered:
        for name in ("email", "plexId"):
            del body[name]
    return body


def media_json(media: Media, *, requests: list[dict[str, Any]] | None = None,
               seasons: bool = True) -> dict[str, Any]:
    """A Media row; ``requests`` only where Seerr loads the relation (movie and tv details);
    ``seasons`` only where the eager relation is loaded (not in search results)."""
    body: dict[str, Any] = {
        "downloadStatus": [], "downloadStatus4k": [], "id": media.id,
        "mediaType": media.media_type, "tmdbId": media.title.tmdb_id, "tvdbId": media.tvdb_id,
        "imdbId": None, "status": media.status, "status4k": media.status_4k,
        "createdAt": stamp(media.created_at), "updatedAt": stamp(media.updated_at),
        "lastSeasonChange": stamp(media.created_at), "mediaAddedAt": None,
        "serviceId": None, "serviceId4k": None, "externalServiceId": None,
        "externalServiceId4k": None, "externalServiceSlug": None,
        "externalServiceSlug4k": None, "ratingKey": media.rating_key, "ratingKey4k": None,
        "jellyfinMediaId": None, "jellyfinMediaId4k": None,
    }
    if media.rating_key is not None:
        body["mediaUrl"] = (f"https://app.plex.tv/desktop#!/server/{PLEX_MACHINE_ID}/details"
                            f"?key=%2Flibrary%2Fmetadata%2F{media.rating_key}")
        body["iOSPlexUrl"] = (f"plex://preplay/?metadataKey=%2Flibrary%2Fmetadata%2F"
                              f"{media.rating_key}&server={PLEX_MACHINE_ID}")
    if media.status == MediaStatus.AVAILABLE:
        body["mediaAddedAt"] = stamp(media.updated_at)
    if seasons:
        body["seasons"] = [{"id": s.id, "seasonNumber": s.number, "status": s.status,
                            "status4k": s.status_4k, "createdAt": stamp(media.created_at),
                            "updatedAt": stamp(media.updated_at)} for s in media.seasons]
    if requests is not None:
        body["requests"] = requests
        body["issues"] = []
    return body


def request_json(request: MediaRequest, *, users: dict[str, dict[str, Any] | None],
                 with_media: bool = True) -> dict[str, Any]:
    """``users``: the serialised ``requestedBy`` and (or None) ``modifiedBy``."""
    body: dict[str, Any] = {
        "id": request.id, "status": request.status, "createdAt": stamp(request.created_at),
        "updatedAt": stamp(request.updated_at), "type": request.media.media_type,
        "is4k": request.is_4k, "serverId": None, "profileId": None, "rootFolder": None,
        "languageProfileId": None, "tags": None, "isAutoRequest": False,
        "requestedBy": users["requestedBy"], "modifiedBy": users["modifiedBy"],
        "seasons": [{"id": s.id, "seasonNumber": s.number, "status": s.status,
                     "createdAt": stamp(request.created_at),
                     "updatedAt": stamp(request.updated_at)} for s in request.seasons],
        "seasonCount": len(request.seasons),
    }
    if with_media:
        body["media"] = media_json(request.media)
    return body


def result_json(title: Title, media: Media | None) -> dict[str, Any]:
    """One search result (``mapMovieResult`` / ``mapTvResult``); mediaInfo when Seerr has a
    Media row, loaded without its seasons or requests."""
    body: dict[str, Any] = {
        "id": title.tmdb_id, "mediaType": title.media_type, "popularity": 50.0,
        "posterPath": title.poster_path, "backdropPath": title.poster_path,
        "voteCount": 1000, "voteAverage": 7.5, "genreIds": [878],
        "overview": title.overview, "originalLanguage": "en",
    }
    if title.media_type == "movie":
        body.update(title=title.title, originalTitle=title.title, releaseDate=title.date,
                    adult=False, video=False)
    else:
        body.update(name=title.title, originalName=title.title, originCountry=["US"],
                    firstAirDate=title.date)
    if media is not None:
        body["mediaInfo"] = media_json(media, seasons=False)
    return body


def details_json(title: Title, media_info: dict[str, Any] | None) -> dict[str, Any]:
    """``mapMovieDetails`` / ``mapTvDetails``, with the fields mediabot may read."""
    body: dict[str, Any] = {
        "id": title.tmdb_id, "posterPath": title.poster_path,
        "backdropPath": title.poster_path, "overview": title.overview,
        "originalLanguage": "en", "popularity": 50.0, "voteAverage": 7.5,
        "voteCount": 1000, "genres": [{"id": 878, "name": "Science Fiction"}],
        "externalIds": {"imdbId": title.imdb_id, "tvdbId": title.tvdb_id},
        "status": "Released" if title.media_type == "movie" else "Returning Series",
    }
    if title.media_type == "movie":
        body.update(title=title.title, originalTitle=title.title, releaseDate=title.date,
                    adult=False, video=False, runtime=120)
    else:
        numbered = [(n, count) for n, count in title.seasons]
        body.update(name=title.title, originalName=title.title, firstAirDate=title.date,
                    numberOfSeasons=len([n for n, _ in numbered if n > 0]),
                    numberOfEpisodes=sum(count for n, count in numbered if n > 0),
                    seasons=[{"id": title.tmdb_id * 100 + n, "seasonNumber": n,
                              "episodeCount": count,
                              "name": "Specials" if n == 0 else f"Season {n}",
                              "airDate": None, "overview": "", "posterPath": title.poster_path}
                             for n, count in numbered])
    if media_info is not None:
        body["mediaInfo"] = media_info
    return body


def page_info(total: int, take: int, skip: int) -> dict[str, Any]:
    """``pageInfo`` as the user and request lists compute it."""
    return {"pages": -(-total // take) if take else 0, "pageSize": take, "results": total,
            "page": -(-skip // take) + 1 if take else 1}
