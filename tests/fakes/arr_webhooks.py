"""Sonarr's and Radarr's webhook calls, shaped and sent as the real applications do.

Every builder follows the C# payload class it names (src/NzbDrone.Core/Notifications/
Webhook/ in Sonarr/Sonarr and Radarr/Radarr; Sonarr v3 from its `v3` branch), serialised
the way their ``ToJson()`` does (NzbDrone.Common/Serializer/Newtonsoft.Json/Json.cs):
camelCase property names, enums as camelCase strings except ``eventType`` (WebhookEventType
keeps its PascalCase names: "Download", "SeriesDelete"), null properties left out, ints
that are 0 kept, indented. Sonarr v4's "On Import Complete" is sent with eventType
"Download" too; it differs from the per-file "On Import" by ``episodeFiles``/``fileCount``
in place of ``episodeFile`` and by having no ``isUpgrade``.

``deliver`` sends like WebhookProxy.SendWebhook: POST or PUT (WebhookMethod), JSON body in
UTF-8, ``Accept: application/json``, and Basic auth built by ManagedHttpDispatcher from
"user:password" encoded as ISO-8859-1.
"""

import base64
import json

import requests

SEVERANCE_TVDB = 371980
DUNE_TWO_TMDB = 693134
ENGLISH = {"id": 1, "name": "English"}  # NzbDrone.Core.Languages.Language


# -- Sonarr v4 (develop) ------------------------------------------------------------------

def v4_series(tvdb_id=SEVERANCE_TVDB, title="Severance"):
    """WebhookSeries.cs (v4)."""
    return {
        "id": 3, "title": title, "titleSlug": title.lower().replace(" ", "-"),
        "path": f"/tv/{title}", "tvdbId": tvdb_id, "tvMazeId": 44933, "tmdbId": 95396,
        "imdbId": "tt11280740", "malIds": [], "aniListIds": [], "type": "standard",
        "year": 2022, "genres": ["Drama", "Mystery", "Science Fiction", "Thriller"],
        "images": [
            {"coverType": "banner", "url": "/MediaCover/3/banner.jpg?lastWrite=638712",
             "remoteUrl": "https://artworks.thetvdb.com/banners/graphical/371980-g.jpg"},
            {"coverType": "poster", "url": "/MediaCover/3/poster.jpg?lastWrite=638712",
             "remoteUrl": "https://artworks.thetvdb.com/banners/posters/371980-1.jpg"},
        ],
        "tags": ["household"], "originalLanguage": ENGLISH, "originalCountry": "us",
    }


def v4_episode(season, number, series_id=3):
    """WebhookEpisode.cs (v4); finaleType is null (so absent) except on finales."""
    return {
        "id": 1000 + season * 100 + number, "episodeNumber": number, "seasonNumber": season,
        "title": f"Episode {number}",
        "overview": "Mark and his team at Lumon face the consequences of their actions, "
                    "while secrets about the severance procedure come to light. Helly "
                    "struggles with her outie's choices; Irving follows a lead about the "
                    "testing floor, and Milchick is asked to account for the outage.",
        "airDate": "2025-01-17", "airDateUtc": "2025-01-17T02:00:00Z",
        "seriesId": series_id, "tvdbId": 10_000_000 + season * 1000 + number,
    }


def v4_episode_file(season, number, quality="WEBDL-1080p", *, file_id=None, source=True):
    """WebhookEpisodeFile.cs (v4) with WebhookEpisodeFileMediaInfo.cs; ``sourcePath`` is
    set on the per-file Download payload only."""
    name = f"Severance - S{season:02d}E{number:02d} - Episode {number} [{quality}]"
    height = 2160 if "2160" in quality else 1080
    episode_file = {
        "id": file_id or 5000 + season * 100 + number,
        "relativePath": f"Season {season:02d}/{name}.mkv",
        "path": f"/tv/Severance/Season {season:02d}/{name}.mkv",
        "quality": quality, "qualityVersion": 1, "releaseGroup": "FLUX",
        "sceneName": f"Severance.S{season:02d}E{number:02d}.{height}p.ATVP.WEB-DL.DDP5.1."
                     "Atmos.H.264-FLUX",
        "size": 2_147_000_000 if height == 1080 else 7_400_000_000,
        "dateAdded": "2025-01-17T08:12:44Z", "languages": [ENGLISH],
        "mediaInfo": {"audioChannels": 5.1, "audioCodec": "EAC3 Atmos",
                      "audioLanguages": ["eng"], "height": height,
                      "width": 3840 if height == 2160 else 1920, "subtitles": ["eng", "spa"],
                      "videoCodec": "h264", "videoDynamicRange": "",
                      "videoDynamicRangeType": ""},
    }
    if source:
        episode_file["sourcePath"] = f"/downloads/complete/{episode_file['sceneName']}.mkv"
    return episode_file


def _v4_release(kind="singleEpisode"):
    """WebhookGrabbedRelease.cs (v4): releaseType is a ReleaseType enum, camelCase."""
    return {"releaseTitle": "Severance.S02.1080p.ATVP.WEB-DL.DDP5.1.Atmos.H.264-FLUX",
            "indexer": "NZBgeek (Prowlarr)", "size": 2_147_000_000, "indexerFlags": [],
            "releaseType": kind}


def _base(event_type, instance="Sonarr"):
    """WebhookPayload.cs: eventType, instanceName, applicationUrl ("" when unset)."""
    return {"eventType": event_type, "instanceName": instance, "applicationUrl": ""}


def sonarr_download(season, number, *, upgrade=False, download_id="SABnzbd_nzo_p86tgx",
                    quality="WEBDL-1080p", series=None):
    """One file imported ("On Import"): WebhookImportPayload.cs, built by
    WebhookBase.BuildOnDownloadPayload. isUpgrade is ``message.OldFiles.Any()``; an upgrade
    also lists the replaced files in deletedFiles."""
    payload = {
        **_base("Download"), "series": series or v4_series(),
        "episodes": [v4_episode(season, number)],
        "episodeFile": v4_episode_file(season, number, quality),
        "release": _v4_release(), "isUpgrade": upgrade,
        "downloadClient": "SABnzbd", "downloadClientType": "SABnzbd",
        "customFormatInfo": {"customFormats": [{"id": 4, "name": "ATVP"}],
                             "customFormatScore": 60},
    }
    if download_id is not None:  # a manual import has none, so the property is left out
        payload["downloadId"] = download_id
    if upgrade:
        old = v4_episode_file(season, number, "WEBDL-1080p", file_id=4000 + number,
                              source=False)
        old["recycleBinPath"] = f"/recycle/Severance/{old['relativePath']}"
        payload["deletedFiles"] = [old]
    return payload


def sonarr_import_complete(episodes, *, download_id="SABnzbd_nzo_p86tgx",
                           quality="WEBDL-1080p", series=None):
    """The whole download imported ("On Import Complete", Sonarr v4 only):
    WebhookImportCompletePayload.cs, built by BuildOnImportCompletePayload. Sent with
    eventType "Download" and no isUpgrade; ``fileCount`` is EpisodeFiles.Count."""
    files = [v4_episode_file(s, n, quality, source=False) for s, n in episodes]
    kind = "seasonPack" if len(episodes) > 3 else (
        "singleEpisode" if len(episodes) == 1 else "multiEpisode")
    return {
        **_base("Download"), "series": series or v4_series(),
        "episodes": [v4_episode(s, n) for s, n in episodes], "episodeFiles": files,
        "downloadClient": "SABnzbd", "downloadClientType": "SABnzbd",
        "downloadId": download_id, "release": _v4_release(kind), "fileCount": len(files),
        "sourcePath": "/downloads/complete/Severance.S02.1080p.ATVP.WEB-DL-FLUX",
        "destinationPath": "/tv/Severance/Season 02",
    }


def season_pack(season=2, count=60):
    """A pack's On Import Complete, e.g. 60 episodes of one season (about 90 KB)."""
    return sonarr_import_complete([(season, n) for n in range(1, count + 1)],
                                  download_id="A1B2C3D4E5F60718293A4B5C6D7E8F9012345678")


def sonarr_grab(episodes):
    """WebhookGrabPayload.cs with WebhookRelease.cs (BuildOnGrabPayload)."""
    return {
        **_base("Grab"), "series": v4_series(),
        "episodes": [v4_episode(s, n) for s, n in episodes],
        "release": {"quality": "WEBDL-1080p", "qualityVersion": 1, "releaseGroup": "FLUX",
                    "releaseTitle": "Severance.S02E05.1080p.ATVP.WEB-DL-FLUX",
                    "indexer": "NZBgeek (Prowlarr)", "size": 2_147_000_000,
                    "customFormatScore": 60, "customFormats": ["ATVP"],
                    "languages": [ENGLISH], "indexerFlags": []},
        "downloadClient": "SABnzbd", "downloadClientType": "SABnzbd",
        "downloadId": "SABnzbd_nzo_p86tgx",
        "customFormatInfo": {"customFormats": [{"id": 4, "name": "ATVP"}],
                             "customFormatScore": 60},
    }


def sonarr_test():
    """The Test button: WebhookBase.BuildTestPayload (a WebhookGrabPayload)."""
    return {
        **_base("Test"),
        "series": {"id": 1, "title": "Test Title", "path": "C:\\testpath", "tvdbId": 1234,
                   "tvMazeId": 0, "tmdbId": 0, "type": "standard", "year": 0,
                   "tags": ["test-tag"]},
        "episodes": [{"id": 123, "episodeNumber": 1, "seasonNumber": 1,
                      "title": "Test title", "seriesId": 0, "tvdbId": 0}],
    }


def sonarr_series_delete(tvdb_id=SEVERANCE_TVDB, deleted_files=True):
    """WebhookSeriesDeletePayload.cs."""
    return {**_base("SeriesDelete"), "series": v4_series(tvdb_id), "deletedFiles": deleted_files}


def sonarr_episode_file_delete(season, number, reason="manual"):
    """WebhookEpisodeDeletePayload.cs; deleteReason is DeleteMediaFileReason, camelCase
    ("missingFromDisk", "manual", "upgrade", "manualOverride")."""
    return {**_base("EpisodeFileDelete"), "series": v4_series(),
            "episodes": [v4_episode(season, number)],
            "episodeFile": v4_episode_file(season, number, source=False),
            "deleteReason": reason}


def health(instance="Sonarr"):
    """WebhookHealthPayload.cs: level is HealthCheckResult, camelCase. Sonarr's
    BuildHealthPayload sets no applicationUrl."""
    return {"eventType": "Health", "instanceName": instance, "level": "warning",
            "message": "Indexers unavailable due to failures for more than 6 hours: "
                       "NZBgeek (Prowlarr)",
            "type": "IndexerLongTermStatusCheck",
            "wikiUrl": "https://wiki.servarr.com/sonarr/system#indexers-are-unavailable"}


def application_update(instance="Sonarr"):
    """WebhookApplicationUpdatePayload.cs."""
    return {"eventType": "ApplicationUpdate", "instanceName": instance,
            "message": "Sonarr updated from 4.0.9.2244 to 4.0.9.2342",
            "previousVersion": "4.0.9.2244", "newVersion": "4.0.9.2342"}


# -- Sonarr v3 (branch v3) ----------------------------------------------------------------

def v3_download(season, number, *, upgrade=False, download_id="SABnzbd_nzo_v3x1"):
    """Sonarr v3's WebhookImportPayload.cs: WebhookPayload has only eventType; the series,
    episode and file classes are the smaller v3 ones."""
    payload = {
        "eventType": "Download",
        "series": {"id": 3, "title": "Severance", "path": "/tv/Severance",
                   "tvdbId": SEVERANCE_TVDB, "tvMazeId": 44933, "imdbId": "tt11280740",
                   "type": "standard"},
        "episodes": [{"id": 1000 + number, "episodeNumber": number, "seasonNumber": season,
                      "title": f"Episode {number}", "airDate": "2025-01-17",
                      "airDateUtc": "2025-01-17T02:00:00Z"}],
        "episodeFile": {"id": 5000 + number,
                        "relativePath": f"Season {season:02d}/Severance - "
                                        f"S{season:02d}E{number:02d}.mkv",
                        "path": f"/tv/Severance/Season {season:02d}/Severance - "
                                f"S{season:02d}E{number:02d}.mkv",
                        "quality": "WEBDL-1080p", "qualityVersion": 1, "releaseGroup": "FLUX",
                        "sceneName": f"Severance.S{season:02d}E{number:02d}.1080p-FLUX",
                        "size": 2_147_000_000},
        "isUpgrade": upgrade, "downloadClient": "SABnzbd", "downloadClientType": "SABnzbd",
        "downloadId": download_id,
    }
    if upgrade:
        payload["deletedFiles"] = [dict(payload["episodeFile"], id=4000 + number)]
    return payload


def v3_test():
    """Sonarr v3's Webhook.SendWebhookTest payload."""
    return {"eventType": "Test",
            "series": {"id": 1, "title": "Test Title", "path": "C:\\testpath", "tvdbId": 1234,
                       "tvMazeId": 0, "type": "standard"},
            "episodes": [{"id": 123, "episodeNumber": 1, "seasonNumber": 1,
                          "title": "Test title"}]}


# -- Radarr (develop) ---------------------------------------------------------------------

def radarr_movie(tmdb_id=DUNE_TWO_TMDB, title="Dune: Part Two"):
    """WebhookMovie.cs: filePath is only set by the (movie, movieFile) constructor, which
    the Download payload does not use, so it is absent."""
    return {
        "id": 12, "title": title, "year": 2024, "releaseDate": "2024-05-14",
        "folderPath": f"/movies/{title} (2024)", "tmdbId": tmdb_id, "imdbId": "tt15239678",
        "overview": "Follow the mythic journey of Paul Atreides as he unites with Chani "
                    "and the Fremen while on a path of revenge.",
        "genres": ["Science Fiction", "Adventure"],
        "images": [{"coverType": "poster", "url": "/MediaCover/12/poster.jpg",
                    "remoteUrl": "https://image.tmdb.org/t/p/original/poster.jpg"}],
        "tags": [], "originalLanguage": ENGLISH,
    }


def radarr_movie_file(quality="Bluray-1080p", *, file_id=40, source=True):
    """WebhookMovieFile.cs: indexerFlags is IndexerFlags.ToString(), a string."""
    height = 2160 if "2160" in quality else 1080
    movie_file = {
        "id": file_id, "relativePath": f"Dune Part Two (2024) {quality}.mkv",
        "path": f"/movies/Dune Part Two (2024)/Dune Part Two (2024) {quality}.mkv",
        "quality": quality, "qualityVersion": 1, "releaseGroup": "FraMeSToR",
        "sceneName": f"Dune.Part.Two.2024.{height}p.BluRay.REMUX-FraMeSToR",
        "indexerFlags": "0", "size": 21_000_000_000 if height == 1080 else 62_000_000_000,
        "dateAdded": "2024-05-20T18:02:11Z", "languages": [ENGLISH],
        "mediaInfo": {"audioChannels": 7.1, "audioCodec": "TrueHD Atmos",
                      "audioLanguages": ["eng"], "height": height,
                      "width": 3840 if height == 2160 else 1920, "subtitles": ["eng"],
                      "videoCodec": "AVC", "videoDynamicRange": "",
                      "videoDynamicRangeType": ""},
    }
    if source:
        movie_file["sourcePath"] = f"/downloads/{movie_file['sceneName']}.mkv"
    return movie_file


def radarr_download(tmdb_id=DUNE_TWO_TMDB, title="Dune: Part Two", *, upgrade=False,
                    quality="Bluray-1080p"):
    """Radarr's WebhookImportPayload.cs (BuildOnDownloadPayload); Radarr has no
    On Import Complete."""
    payload = {
        **_base("Download", "Radarr"), "movie": radarr_movie(tmdb_id, title),
        "remoteMovie": {"tmdbId": tmdb_id, "imdbId": "tt15239678", "title": title,
                        "year": 2024},
        "movieFile": radarr_movie_file(quality),
        "release": {"releaseTitle": "Dune.Part.Two.2024.1080p.BluRay-FraMeSToR",
                    "indexer": "BeyondHD (Prowlarr)", "size": 21_000_000_000,
                    "indexerFlags": []},
        "isUpgrade": upgrade, "downloadClient": "qBittorrent",
        "downloadClientType": "qBittorrent",
        "downloadId": "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4",
        "customFormatInfo": {"customFormats": [], "customFormatScore": 0},
    }
    if upgrade:
        old = radarr_movie_file("Bluray-1080p", file_id=39, source=False)
        old["recycleBinPath"] = "/recycle/Dune Part Two (2024).mkv"
        payload["deletedFiles"] = [old]
    return payload


def radarr_test():
    """Radarr's BuildTestPayload: the movie's tmdbId is 0 (unset); remoteMovie has 1234."""
    return {
        **_base("Test", "Radarr"),
        "movie": {"id": 1, "title": "Test Title", "year": 1970,
                  "releaseDate": "1970-01-01", "folderPath": "C:\\testpath", "tmdbId": 0,
                  "tags": ["test-tag"]},
        "remoteMovie": {"tmdbId": 1234, "imdbId": "5678", "title": "Test title",
                        "year": 1970},
        "release": {"quality": "Test Quality", "qualityVersion": 1,
                    "releaseGroup": "Test Group", "releaseTitle": "Test Title",
                    "indexer": "Test Indexer", "size": 9999999, "customFormatScore": 0},
    }


def radarr_grab(tmdb_id=DUNE_TWO_TMDB):
    """Radarr's WebhookGrabPayload.cs."""
    return {**_base("Grab", "Radarr"), "movie": radarr_movie(tmdb_id),
            "remoteMovie": {"tmdbId": tmdb_id, "imdbId": "tt15239678",
                            "title": "Dune: Part Two", "year": 2024},
            "release": {"quality": "Bluray-1080p", "qualityVersion": 1,
                        "releaseGroup": "FraMeSToR",
                        "releaseTitle": "Dune.Part.Two.2024.1080p.BluRay-FraMeSToR",
                        "indexer": "BeyondHD (Prowlarr)", "size": 21_000_000_000,
                        "customFormatScore": 0, "customFormats": [], "languages": [ENGLISH],
                        "indexerFlags": []},
            "downloadClient": "qBittorrent", "downloadClientType": "qBittorrent",
            "downloadId": "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4"}


def radarr_movie_delete(tmdb_id=DUNE_TWO_TMDB):
    """WebhookMovieDeletePayload.cs."""
    return {**_base("MovieDelete", "Radarr"), "movie": radarr_movie(tmdb_id),
            "deletedFiles": True, "movieFolderSize": 21_000_000_000}


# -- sending --------------------------------------------------------------------------------

def to_json(payload) -> bytes:
    """Json.ToJson: indented, non-ASCII written as is; SetContent sends it as UTF-8."""
    return json.dumps(payload, indent=2, ensure_ascii=False).encode("utf-8")


def basic_auth(username: str, password: str, encoding: str = "iso-8859-1") -> str:
    """ManagedHttpDispatcher: Base64 of ISO-8859-1 "user:password" (``encoding`` lets a
    test send what a UTF-8 client such as curl sends instead)."""
    return "Basic " + base64.b64encode(f"{username}:{password}".encode(encoding)).decode()


def deliver(url: str, payload, *, password: str, username: str = "sonarr",
            method: str = "POST", encoding: str = "iso-8859-1", body: bytes | None = None,
            timeout: float = 10) -> requests.Response:
    """One webhook call as WebhookProxy.SendWebhook makes it; ``body`` overrides the
    serialised payload (for bodies Sonarr would never send)."""
    headers = {"Accept": "application/json", "Content-Type": "application/json"}
    if username or password:
        headers["Authorization"] = basic_auth(username, password, encoding)
    return requests.request(method, url, data=to_json(payload) if body is None else body,
                            headers=headers, timeout=timeout)
