"""Sonarr's and Radarr's webhooks: their payloads as the arrs send them, Basic auth, and posting
them to the daemon."""

import base64

from mediabot.trial.sim.arr_fixtures import DUNE_TWO_TMDB
from tests.fakes import arr_webhooks as arr
from tests.support.household import SECRET, SEVERANCE


def radarr_says(daemon, payload) -> None:
    """Radarr posts ``payload`` to the daemon's webhook (the `household` fixture's secret)."""
    response = daemon.app.test_client().post("/hooks/radarr", json=payload,
                                             headers=basic(SECRET, user="radarr"))
    assert response.status_code == 200, response.get_data(as_text=True)


def basic(password, user="sonarr"):
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def sonarr_download(episodes, upgrade=False, download_id="D4E5F6"):
    """Shaped like Sonarr's WebhookImportPayload."""
    return {
        "eventType": "Download", "instanceName": "Sonarr", "applicationUrl": "",
        "series": {"id": 3, "title": "Severance", "titleSlug": "severance",
                   "path": "/tv/Severance", "tvdbId": SEVERANCE, "tvMazeId": 44933,
                   "imdbId": "tt11280740", "type": "standard", "year": 2022},
        "episodes": [{"id": 100 + n, "episodeNumber": n, "seasonNumber": s,
                      "title": f"Episode {n}", "airDate": "2025-01-17",
                      "airDateUtc": "2025-01-17T02:00:00Z", "seriesId": 3}
                     for s, n in episodes],
        "episodeFile": {"id": 77, "relativePath": "Season 02/Severance - S02E01.mkv",
                        "quality": "WEBDL-1080p", "qualityVersion": 1, "size": 2_000_000_000},
        "isUpgrade": upgrade, "downloadClient": "qBittorrent", "downloadId": download_id,
    }


NON_ASCII_SECRET = "Café-Lumon-Straße-ñ"


def radarr_download(tmdb_id=DUNE_TWO_TMDB, title="Dune: Part Two", upgrade=False):
    """Shaped like Radarr's WebhookImportPayload."""
    return {
        "eventType": "Download", "instanceName": "Radarr", "applicationUrl": "",
        "movie": {"id": 12, "title": title, "year": 2024, "releaseDate": "2024-05-14",
                  "folderPath": f"/movies/{title} (2024)", "tmdbId": tmdb_id,
                  "imdbId": "tt15239678", "overview": "Paul Atreides unites with Chani."},
        "remoteMovie": {"tmdbId": tmdb_id, "imdbId": "tt15239678", "title": title,
                        "year": 2024},
        "movieFile": {"id": 40, "relativePath": f"{title} (2024).mkv",
                      "path": f"/movies/{title} (2024)/{title} (2024).mkv",
                      "quality": "Bluray-1080p", "qualityVersion": 1, "size": 21_000_000_000},
        "isUpgrade": upgrade, "downloadClient": "qBittorrent", "downloadClientType": "qBittorrent",
        "downloadId": "A1B2C3",
    }


def post_hook(client, service, payload, password=SECRET):
    return client.post(f"/hooks/{service}", json=payload, headers=basic(password))


def send_hook(daemon, service, payload, **options):
    return arr.deliver(f"{daemon.url}/hooks/{service}", payload,
                       password=options.pop("password", SECRET), **options)
