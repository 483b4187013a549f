"""Hand-written Sonarr/Radarr libraries for the fakes, shaped like the v3 API resources.

Payloads are as big as the real ones (images, ratings, genres, alternate titles, media
info...), because the tool results are judged by how much smaller they are. Dates are
relative to ``now`` so "airs in two days" stays true; every timestamp ends in ``Z``.

Sonarr: The Office (downloaded, 62 GB), Severance (season 2 downloading), Slow Horses
(an episode airs in two days). Radarr: Dune (downloaded), Dune: Part Two (downloading),
Project Hail Mary (digital release in three days), Arrival (out for years, monitored, but
no release found: no file and nothing queued). Plus lookup-only titles.
"""

import datetime as dt

GB = 1_000_000_000
OFFICE_TVDB, OFFICE_UK_TVDB, SEVERANCE_TVDB, SLOW_HORSES_TVDB = 73244, 78107, 371980, 392256
DUNE_TMDB, DUNE_TWO_TMDB, HAIL_MARY_TMDB, DUNE_1984_TMDB = 438631, 693134, 687163, 841
ARRIVAL_TMDB = 329865


def z(moment: dt.datetime) -> str:
    """Sonarr/Radarr's timestamp form; arrapi's parser needs the trailing Z."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _images(kind: str, slug: str,
            covers: tuple[str, ...] = ("banner", "poster", "fanart", "clearlogo")) -> list:
    host = "artworks.thetvdb.com/banners/v4" if kind == "series" else "image.tmdb.org/t/p/original"
    return [{"coverType": cover, "url": f"/MediaCover/{slug}/{cover}.jpg?lastWrite=63859",
             "remoteUrl": f"https://{host}/{kind}/{slug}/{cover}s/65f2a8c1d4e6b.jpg"}
            for cover in covers]


def _alternate_titles(title: str, extra: tuple[str, ...]) -> list:
    return [{"title": alt, "sceneSeasonNumber": -1, "seasonNumber": -1,
             "comment": "", "sceneOrigin": "tvdb"} for alt in (title.upper(), *extra)]


def series(tvdb_id: int, title: str, year: int, seasons: list[tuple[int, int, int, int, bool]],
           *, overview: str, network: str, genres: tuple[str, ...], status: str = "continuing",
           alternates: tuple[str, ...] = (), first_aired: str | None = None, runtime: int = 45,
           library_id: int | None = None, episode_size: int = 0,
           now: dt.datetime | None = None, votes: int = 900) -> dict:
    """A SeriesResource; ``seasons`` is [(number, total, aired, with_file, monitored)]."""
    slug = title.lower().replace(" ", "-").replace("(", "").replace(")", "")
    resource = {
        "title": title, "alternateTitles": _alternate_titles(title, alternates),
        "sortTitle": title.lower().removeprefix("the "), "status": status,
        "ended": status == "ended", "overview": overview, "network": network,
        "airTime": "21:00", "images": _images("series", slug),
        "originalLanguage": {"id": 1, "name": "English"},
        "remotePoster": f"https://artworks.thetvdb.com/banners/posters/{tvdb_id}-1.jpg",
        "seasons": [_season(*spec, episode_size) for spec in seasons],
        "year": year, "qualityProfileId": 0, "seasonFolder": False, "monitored": False,
        "monitorNewItems": "all", "useSceneNumbering": False, "runtime": runtime,
        "tvdbId": tvdb_id, "tvRageId": tvdb_id // 3, "tvMazeId": tvdb_id // 7,
        "tmdbId": tvdb_id // 2, "firstAired": first_aired or f"{year}-03-24T00:00:00Z",
        "seriesType": "standard", "cleanTitle": slug.replace("-", ""),
        "imdbId": f"tt{tvdb_id:07d}", "titleSlug": slug, "folder": title,
        "certification": "TV-14", "genres": list(genres), "tags": [],
        "added": "0001-01-01T00:00:00Z",
        "ratings": {"votes": votes, "value": 8.4},
        "statistics": {"seasonCount": len(seasons), "episodeFileCount": 0, "episodeCount": 0,
                       "totalEpisodeCount": 0, "sizeOnDisk": 0, "releaseGroups": [],
                       "percentOfEpisodes": 0.0},
        "languageProfileId": 1,
    }
    if library_id is not None:
        assert now is not None, "a library series needs now"
        _make_library_item(resource, library_id, "/tv", now)
        resource["seasonFolder"] = True
        _sum_statistics(resource)
    return resource


def _season(number: int, total: int, aired: int, files: int, monitored: bool,
            episode_size: int) -> dict:
    return {"seasonNumber": number, "monitored": monitored, "images": [],
            "statistics": {"episodeFileCount": files, "episodeCount": aired if monitored else files,
                           "totalEpisodeCount": total, "sizeOnDisk": files * episode_size,
                           "releaseGroups": ["NTb", "FLUX"] if files else [],
                           "percentOfEpisodes": 100.0 * files / total if total else 0.0}}


def _make_library_item(resource: dict, library_id: int, root: str, now: dt.datetime) -> None:
    resource.update(id=library_id, monitored=True, qualityProfileId=4, rootFolderPath=root,
                    path=f"{root}/{resource['title']}", added=z(now - dt.timedelta(days=400)))


def _sum_statistics(resource: dict) -> None:
    totals = resource["statistics"]
    for season in resource["seasons"]:
        for key in ("episodeFileCount", "episodeCount", "totalEpisodeCount", "sizeOnDisk"):
            totals[key] += season["statistics"][key]
    if totals["episodeCount"]:
        totals["percentOfEpisodes"] = 100.0 * totals["episodeFileCount"] / totals["episodeCount"]
    totals["releaseGroups"] = ["NTb", "FLUX"]


def episodes_for(resource: dict, season_starts: dict[int, dt.datetime], first_id: int) -> list:
    """Weekly EpisodeResources from each season's first air time; the first ones have files."""
    result: list[dict] = []
    for season in resource["seasons"]:
        air = season_starts[season["seasonNumber"]]
        for number in range(1, season["statistics"]["totalEpisodeCount"] + 1):
            result.append(_episode(resource, season, number, air, first_id + len(result)))
            air += dt.timedelta(days=7)
    return result


def _episode(resource: dict, season: dict, number: int, air: dt.datetime,
             episode_id: int) -> dict:
    has_file = number <= season["statistics"]["episodeFileCount"]
    return {
        "id": episode_id, "seriesId": resource.get("id", 0), "tvdbId": episode_id * 11,
        "episodeFileId": episode_id if has_file else 0, "seasonNumber": season["seasonNumber"],
        "episodeNumber": number, "title": f"Chapter {number}", "airDate": f"{air:%Y-%m-%d}",
        "airDateUtc": z(air), "runtime": resource["runtime"], "overview": (
            f"Episode {number} of season {season['seasonNumber']}: alliances shift as an "
            "old secret comes back to haunt the team."),
        "hasFile": has_file, "monitored": season["monitored"],
        "unverifiedSceneNumbering": False, "finaleType": None,
    }


def movie(tmdb_id: int, title: str, year: int, *, overview: str, studio: str,
          genres: tuple[str, ...], in_cinemas: dt.datetime, digital: dt.datetime | None = None,
          physical: dt.datetime | None = None, alternates: tuple[str, ...] = (),
          runtime: int = 150, library_id: int | None = None, file_size: int = 0,
          now: dt.datetime, popularity: float = 20.0) -> dict:
    """A MovieResource (Radarr v5/v6 shape); ``file_size`` > 0 gives it a movie file."""
    slug = f"{title.lower().replace(' ', '-').replace(':', '')}-{tmdb_id}"
    released = max(d for d in (in_cinemas, digital, physical) if d)
    resource = {
        "title": title, "originalTitle": title, "originalLanguage": {"id": 1, "name": "English"},
        "alternateTitles": [{"sourceType": "tmdb", "movieMetadataId": tmdb_id, "title": alt,
                             "id": tmdb_id * 10 + i} for i, alt in enumerate(alternates)],
        "secondaryYearSourceId": 0, "sortTitle": title.lower(), "sizeOnDisk": 0,
        "status": "released" if released <= now else "inCinemas", "overview": overview,
        "inCinemas": z(in_cinemas), "releaseDate": z(digital or physical or in_cinemas),
        "images": _images("movie", slug, ("poster", "fanart", "clearlogo")),
        "website": f"https://www.example-studio.com/{slug}", "year": year,
        "remotePoster": f"https://image.tmdb.org/t/p/original/{slug}.jpg",
        "youTubeTrailerId": f"yt{tmdb_id}", "studio": studio, "qualityProfileId": 0,
        "hasFile": False, "movieFileId": 0, "monitored": False, "minimumAvailability": "released",
        "isAvailable": released <= now, "folderName": f"/movies/{title} ({year})",
        "runtime": runtime, "cleanTitle": slug.replace("-", ""), "imdbId": f"tt{tmdb_id:07d}",
        "tmdbId": tmdb_id, "titleSlug": slug, "folder": f"{title} ({year})",
        "certification": "PG-13", "genres": list(genres),
        "keywords": ["based on novel or book", "desert", "space opera", "prophecy"],
        "tags": [], "added": "0001-01-01T00:00:00Z", "ratings": _movie_ratings(tmdb_id),
        "collection": {"title": f"{title.split(':')[0]} Collection", "tmdbId": tmdb_id + 7},
        "popularity": popularity, "statistics": {"movieFileCount": 0,
                                                          "sizeOnDisk": 0, "releaseGroups": []},
    }
    for key, when in (("digitalRelease", digital), ("physicalRelease", physical)):
        if when:
            resource[key] = z(when)
    if library_id is not None:
        _make_library_item(resource, library_id, "/movies", now)
        resource["path"] = f"/movies/{title} ({year})"
    if file_size:
        _give_movie_file(resource, file_size, now)
    return resource


def _movie_ratings(tmdb_id: int) -> dict:
    return {"imdb": {"votes": 610000 + tmdb_id % 999, "value": 8.0, "type": "user"},
            "tmdb": {"votes": 12800, "value": 7.8, "type": "user"},
            "metacritic": {"votes": 0, "value": 74, "type": "user"},
            "rottenTomatoes": {"votes": 0, "value": 83, "type": "user"},
            "trakt": {"votes": 31000, "value": 8.1, "type": "user"}}


def _give_movie_file(resource: dict, size: int, now: dt.datetime) -> None:
    name = f"{resource['title']} ({resource['year']}) Bluray-2160p.mkv"
    resource.update(hasFile=True, movieFileId=resource["id"], sizeOnDisk=size,
                    statistics={"movieFileCount": 1, "sizeOnDisk": size,
                                "releaseGroups": ["FraMeSToR"]})
    resource["movieFile"] = {
        "id": resource["id"], "movieId": resource["id"], "relativePath": name,
        "path": f"{resource['path']}/{name}", "size": size,
        "dateAdded": z(now - dt.timedelta(days=90)), "sceneName": name[:-4].replace(" ", "."),
        "releaseGroup": "FraMeSToR", "edition": "", "languages": [{"id": 1, "name": "English"}],
        "quality": {"quality": {"id": 19, "name": "Bluray-2160p", "source": "bluray",
                                "resolution": 2160, "modifier": "none"},
                    "revision": {"version": 1, "real": 0, "isRepack": False}},
        "customFormats": [], "customFormatScore": 0, "indexerFlags": 0,
        "mediaInfo": {"audioBitrate": 0, "audioChannels": 7.1, "audioCodec": "TrueHD Atmos",
                      "audioLanguages": "eng/eng", "audioStreamCount": 2, "videoBitDepth": 10,
                      "videoBitrate": 0, "videoCodec": "HEVC", "videoFps": 23.976,
                      "videoDynamicRange": "HDR", "videoDynamicRangeType": "DV HDR10",
                      "resolution": "3840x2160", "runTime": "2:35:31", "scanType": "Progressive",
                      "subtitles": "eng/spa/fre"},
        "qualityCutoffNotMet": False,
    }


def quality_profiles(names: tuple[str, ...] = ("Any", "SD", "HD-720p", "HD-1080p", "Ultra-HD",
                                               "HD - 720p/1080p")) -> list[dict]:
    return [{"id": i, "name": name, "upgradeAllowed": False, "cutoff": 4,
             "items": [{"quality": {"id": 4, "name": "HDTV-720p", "source": "television",
                                    "resolution": 720}, "items": [], "allowed": True}],
             "minFormatScore": 0, "cutoffFormatScore": 0, "minUpgradeFormatScore": 1,
             "formatItems": []} for i, name in enumerate(names, 1)]


def root_folders(path: str, accessible: bool = True) -> list[dict]:
    return [{"id": 1, "path": path, "accessible": accessible, "freeSpace": 1_830_000_000_000,
             "unmappedFolders": []}]


LANGUAGE_PROFILES = [{"id": 1, "name": "English", "upgradeAllowed": False,
                      "cutoff": {"id": 1, "name": "English"},
                      "languages": [{"language": {"id": 1, "name": "English"}, "allowed": True}]}]


def queue_record(record_id: int, title: str, size: int, sizeleft: int, *, download_id: str,
                 now: dt.datetime, minutes_left: int, status: str = "downloading",
                 tracked: str = "ok", state: str = "downloading", message: str | None = None,
                 **ids: int) -> dict:
    """A QueueResource without the embedded series/episode/movie (the fake adds them)."""
    left = dt.timedelta(minutes=minutes_left)
    return {
        "id": record_id, **ids, "languages": [{"id": 1, "name": "English"}],
        "quality": {"quality": {"id": 3, "name": "WEBDL-1080p", "source": "web",
                                "resolution": 1080}, "revision": {"version": 1, "real": 0,
                                                                  "isRepack": False}},
        "customFormats": [], "customFormatScore": 0, "size": float(size),
        "title": title, "estimatedCompletionTime": z(now + left),
        "added": z(now - dt.timedelta(hours=2)), "status": status,
        "trackedDownloadStatus": tracked, "trackedDownloadState": state,
        "statusMessages": ([{"title": title, "messages": [message]}] if message else []),
        "errorMessage": message if tracked == "error" else None,
        "downloadId": download_id, "protocol": "torrent", "downloadClient": "qBittorrent",
        "downloadClientHasPostImportCategory": False, "indexer": "IPTorrents (Prowlarr)",
        "outputPath": f"/downloads/complete/{title}", "sizeleft": float(sizeleft),
        "timeleft": f"{int(left.total_seconds()) // 3600:02d}:"
                    f"{int(left.total_seconds()) // 60 % 60:02d}:00",
    }
