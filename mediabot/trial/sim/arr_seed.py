"""The libraries the fakes start with (see arr_fixtures.py for the resource builders)."""

import datetime as dt
from typing import Any

from mediabot.trial.sim.arr_fixtures import (
    ARRIVAL_TMDB,
    DUNE_1984_TMDB,
    DUNE_TMDB,
    DUNE_TWO_TMDB,
    HAIL_MARY_TMDB,
    OFFICE_TVDB,
    OFFICE_UK_TVDB,
    SEVERANCE_TVDB,
    SLOW_HORSES_TVDB,
    episodes_for,
    movie,
    queue_record,
    series,
)

OFFICE_SEASONS = (6, 22, 25, 19, 28, 26, 26, 24, 25)
_OFFICE_TEXT = ("A mockumentary crew follows the staff of a mid-sized paper supply company in "
                "Scranton, Pennsylvania, where a tactless regional manager believes he is "
                "everyone's best friend and funniest colleague, and the salespeople, "
                "accountants and receptionist cope with his schemes, pranks and meetings.")


def sonarr_seed(now: dt.datetime) -> dict:
    """Library series (with ids), lookup-only series, episodes and the download queue."""
    office = series(OFFICE_TVDB, "The Office", 2005,
                    [(n, count, count, count, True) for n, count in enumerate(OFFICE_SEASONS, 1)],
                    overview=_OFFICE_TEXT, network="NBC", genres=("Comedy",), status="ended",
                    alternates=("The Office (US)", "The Office: An American Workplace"),
                    runtime=22, library_id=1, episode_size=308_000_000, now=now, votes=41000)
    severance = series(SEVERANCE_TVDB, "Severance", 2022,
                       [(1, 9, 9, 9, True), (2, 10, 10, 4, True)],
                       overview="Mark leads a team of office workers whose memories have been "
                                "surgically divided between their work and personal lives, "
                                "until a mysterious colleague appears outside of work.",
                       network="Apple TV+", genres=("Drama", "Mystery", "Science Fiction",
                                                    "Thriller"),
                       library_id=2, episode_size=2_100_000_000, now=now, votes=9000)
    slow_horses = series(SLOW_HORSES_TVDB, "Slow Horses", 2022,
                         [(n, 6, 6, 6, True) for n in range(1, 5)] + [(5, 6, 3, 3, True)],
                         overview="A dysfunctional team of British intelligence agents who "
                                  "have been exiled to Slough House for their career-ending "
                                  "mistakes stumbles into cases the real spies would rather "
                                  "keep quiet.",
                         network="Apple TV+", genres=("Drama", "Thriller"), library_id=3,
                         episode_size=1_400_000_000, now=now)
    airs = now + dt.timedelta(days=2)
    slow_horses["nextAiring"] = _z(airs)
    episodes = (episodes_for(office, _yearly(dt.datetime(2005, 3, 25, 1, tzinfo=dt.UTC),
                                             9), 1000)
                + episodes_for(severance, {1: now - dt.timedelta(days=900),
                                           2: now - dt.timedelta(days=120)}, 2000)
                + episodes_for(slow_horses, {**_yearly(now - dt.timedelta(days=1500), 4),
                                             5: airs - dt.timedelta(days=21)}, 3000))
    return {"series": [office, severance, slow_horses], "catalog": _sonarr_catalog(now),
            "episodes": episodes, "queue": _sonarr_queue(now)}


def _yearly(first: dt.datetime, seasons: int) -> dict[int, dt.datetime]:
    return {n: first + dt.timedelta(days=365 * (n - 1)) for n in range(1, seasons + 1)}


def _z(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _sonarr_catalog(now: dt.datetime) -> list[dict]:
    def lookup_only(tvdb_id: int, title: str, year: int, seasons: int, text: str, network: str,
                    status: str = "ended") -> dict:
        return series(tvdb_id, title, year, [(n, 8, 8, 0, False) for n in range(1, seasons + 1)],
                      overview=text, network=network, genres=("Comedy",), status=status)
    remakes = [lookup_only(tvdb_id, f"The Office ({country})", year, seasons,
                           f"The {country} remake of the workplace mockumentary: a camera crew "
                           f"follows a {boss} who is sure the team loves him, while the "
                           "staff try to get through another day of meetings and pranks.",
                           network)
               for tvdb_id, country, year, seasons, boss, network in (
                   (374281, "IN", 2019, 2, "branch manager of a Faridabad paper company",
                    "Hotstar"),
                   (401762, "PL", 2021, 3, "manager of a paper wholesaler in Siedlce",
                    "CANAL+"),
                   (353447, "SA", 2022, 1, "Riyadh office manager", "Shahid"),
                   (78890, "DE", 2004, 5, "insurance office head in Capitol Versicherung",
                    "ProSieben"))]
    return remakes + [
        lookup_only(OFFICE_UK_TVDB, "The Office (UK)", 2001, 2,
                    "The day-to-day lives of office employees at the Slough branch of the "
                    "Wernham Hogg paper company, filmed as a fly-on-the-wall documentary "
                    "and led by a manager who thinks he is a friend first and a boss second.",
                    "BBC Two"),
        lookup_only(438781, "The Office (AU)", 2024, 1,
                    "When a Sydney packaging company is told its branch will close, its "
                    "ambitious manager promises to save everyone's jobs while a camera crew "
                    "records how it goes.", "Prime Video", "continuing"),
        lookup_only(262980, "Office Girls", 2011, 1,
                    "A rich heir goes undercover as an entry-level worker in his father's "
                    "department store and falls for a hard-working colleague.", "TTV"),
        lookup_only(80348, "The Office Quest", 2009, 1,
                    "Short comedy sketches about surviving corporate life one memo at a time.",
                    "Web"),
        lookup_only(387003, "Office Bound", 2020, 2,
                    "Friends who lost their jobs start a tiny company in a shared office.",
                    "CBC"),
        lookup_only(397360, "Dune: Prophecy", 2024, 1,
                    "Ten thousand years before Paul Atreides, two Harkonnen sisters fight "
                    "forces that threaten humankind and found the Bene Gesserit.", "HBO",
                    "continuing"),
    ]


def _sonarr_queue(now: dt.datetime) -> list[dict]:
    base: dict[str, Any] = {"now": now, "seriesId": 2, "seasonNumber": 2}
    return [
        queue_record(101, "Severance.S02E05.Trojans.Horse.1080p.ATVP.WEB-DL.DDP5.1.H.264-NTb",
                     2_300_000_000, 850_000_000, download_id="A1B2C3", minutes_left=12,
                     episodeId=2013, **base),
        queue_record(102, "Severance.S02E06.Attila.1080p.ATVP.WEB-DL.DDP5.1.H.264-NTb",
                     2_200_000_000, 2_200_000_000, download_id="D4E5F6", minutes_left=95,
                     status="warning", tracked="warning", state="downloading",
                     message="The download is stalled with no connections", episodeId=2014,
                     **base),
        *[queue_record(103 + i, "Severance.S02.1080p.ATVP.WEB-DL.DDP5.1.H.264-FLUX",
                       21_000_000_000, 4_000_000_000, download_id="SEASONPACK",
                       minutes_left=48, episodeId=2015 + i, **base) for i in range(4)],
    ]


def radarr_seed(now: dt.datetime) -> dict:
    """Library movies (with ids), lookup-only movies and the download queue."""
    day = dt.timedelta(days=1)
    dune = movie(DUNE_TMDB, "Dune", 2021, overview=_DUNE_TEXT, studio="Legendary Pictures",
                 genres=("Science Fiction", "Adventure"), in_cinemas=now - 1500 * day,
                 digital=now - 1450 * day, physical=now - 1400 * day,
                 alternates=("Dune: Part One", "Dune 2021", "Duna"), library_id=1,
                 file_size=21_400_000_000, now=now, popularity=310.0)
    dune_two = movie(DUNE_TWO_TMDB, "Dune: Part Two", 2024, overview=_DUNE_TWO_TEXT,
                     studio="Legendary Pictures", genres=("Science Fiction", "Adventure"),
                     in_cinemas=now - 600 * day, digital=now - 560 * day,
                     physical=now - 520 * day, alternates=("Dune 2", "Dune: Teil Zwei"),
                     library_id=2, now=now, popularity=290.0)
    hail_mary = movie(HAIL_MARY_TMDB, "Project Hail Mary", 2026,
                      overview="A science teacher wakes up alone on a spaceship light-years "
                               "from home with no memory of how he got there, and slowly "
                               "realises he is humanity's last chance.",
                      studio="Amazon MGM Studios", genres=("Science Fiction", "Drama"),
                      in_cinemas=now - 40 * day, digital=now + 3 * day,
                      physical=now + 45 * day, library_id=3, now=now)
    arrival = movie(ARRIVAL_TMDB, "Arrival", 2016,
                    overview="A linguist is recruited by the military to talk with the "
                             "visitors of twelve spacecraft that touched down around the world.",
                    studio="Paramount Pictures", genres=("Science Fiction", "Drama"),
                    in_cinemas=now - 3650 * day, digital=now - 3560 * day,
                    physical=now - 3540 * day, library_id=4, now=now)
    for item in (dune_two, hail_mary, arrival):   # arrival: released, no file, not queued
        item["monitored"] = True
    return {"movies": [dune, dune_two, hail_mary, arrival], "catalog": _radarr_catalog(now),
            "queue": [queue_record(201, "Dune.Part.Two.2024.2160p.UHD.BluRay.x265-SPHD",
                                   61_000_000_000, 22_600_000_000, download_id="DUNE2",
                                   now=now, minutes_left=135, movieId=2)]}


_DUNE_TEXT = ("Paul Atreides, a brilliant and gifted young man born into a great destiny "
              "beyond his understanding, must travel to the most dangerous planet in the "
              "universe to ensure the future of his family and his people, as malevolent "
              "forces explode into conflict over the planet's exclusive supply of spice.")
_DUNE_TWO_TEXT = ("Paul Atreides unites with Chani and the Fremen while on a path of revenge "
                  "against the conspirators who destroyed his family, facing a choice between "
                  "the love of his life and the fate of the known universe.")


def _radarr_catalog(now: dt.datetime) -> list[dict]:
    year = dt.timedelta(days=365)

    def lookup_only(tmdb_id: int, title: str, released_year: int, text: str,
                    studio: str) -> dict:
        released = dt.datetime(released_year, 6, 1, tzinfo=dt.UTC)
        if released_year > now.year:
            released = now + year
        return movie(tmdb_id, title, released_year, overview=text, studio=studio,
                     genres=("Science Fiction",), in_cinemas=released, now=now,
                     alternates=(f"{title} ({released_year})",))
    return [
        lookup_only(DUNE_1984_TMDB, "Dune", 1984,
                    "In the year 10,191 the spice melange is the most valuable substance in "
                    "the universe, and a noble family's move to the desert planet Arrakis "
                    "sets off a war over it.", "Dino De Laurentiis Company"),
        lookup_only(209403, "Jodorowsky's Dune", 2013,
                    "A documentary about the cult director's ambitious, never-made adaptation "
                    "of the science-fiction novel.", "Snowfort Pictures"),
        lookup_only(1170608, "Dune: Part Three", now.year + 1,
                    "The third film in the saga follows Paul Atreides as emperor.",
                    "Legendary Pictures"),
        lookup_only(653664, "Dune Drifter", 2020,
                    "A pilot stranded on a hostile planet after a space battle must survive "
                    "until rescue comes.", "Indie Films"),
        lookup_only(879538, "Dune World", 2021,
                    "Survivors of a crash fight to stay alive on a desert world.", "Indie"),
    ]
