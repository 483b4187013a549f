"""What the fake Seerr's TMDB knows: a few films and series, with the same TMDB and TVDB ids
as the simulated Radarr and Sonarr (``mediabot/trial/sim/arr_seed.py``), so that a title
requested through Seerr is the one the arr hooks later report."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Title:
    media_type: str                 # "movie" or "tv"
    tmdb_id: int
    title: str
    date: str                       # releaseDate / firstAirDate, YYYY-MM-DD
    overview: str
    poster_path: str
    tvdb_id: int | None = None
    imdb_id: str | None = None
    seasons: tuple[tuple[int, int], ...] = ()   # (season number, episode count), 0 = specials

    @property
    def year(self) -> str:
        return self.date[:4]


DUNE_TMDB, DUNE_TWO_TMDB, HAIL_MARY_TMDB, ARRIVAL_TMDB, DUNE_1984_TMDB = (
    438631, 693134, 687163, 329865, 841)
OFFICE_TMDB, SEVERANCE_TMDB, SLOW_HORSES_TMDB = 2316, 95396, 95480
OFFICE_TVDB, SEVERANCE_TVDB, SLOW_HORSES_TVDB = 73244, 371980, 392256

_DUNE_TWO_TEXT = ("Follow the mythic journey of Paul Atreides as he unites with Chani and the "
                  "Fremen while on a path of revenge against the conspirators who destroyed "
                  "his family. Facing a choice between the love of his life and the fate of the "
                  "known universe, Paul endeavors to prevent a terrible future only he can "
                  "foresee.")
_OFFICE_TEXT = ("The everyday lives of office employees in the Scranton, Pennsylvania branch "
                "of the fictional Dunder Mifflin Paper Company. " * 8).strip()

CATALOG: tuple[Title, ...] = (
    Title("movie", DUNE_TMDB, "Dune", "2021-09-15",
          "Paul Atreides, a brilliant and gifted young man born into a great destiny beyond "
          "his understanding, must travel to the most dangerous planet in the universe.",
          "/d5NXSklXo0qyIYkgV94XAgMIckC.jpg", imdb_id="tt1160419"),
    Title("movie", DUNE_TWO_TMDB, "Dune: Part Two", "2024-02-27", _DUNE_TWO_TEXT,
          "/1pdfLvkbY9ohJlCjQH2CZjjYVvJ.jpg", imdb_id="tt15239678"),
    Title("movie", HAIL_MARY_TMDB, "Project Hail Mary", "2026-03-18",
          "Science teacher Ryland Grace wakes up on a spaceship light years from home with no "
          "recollection of who he is or how he got there.",
          "/yihdXomYb5kTeSivtFndMy5iDmf.jpg", imdb_id="tt12042730"),
    Title("movie", ARRIVAL_TMDB, "Arrival", "2016-11-10",
          "Taking place after alien crafts land around the world, an expert linguist is "
          "recruited by the military to determine whether they come in peace or are a threat.",
          "/x2FJsf1ElAgr63Y3PNPtJrcmpoe.jpg", imdb_id="tt2543164"),
    Title("movie", DUNE_1984_TMDB, "Dune", "1984-12-14",
          "In the year 10,191, the most precious substance in the universe is the spice "
          "Melange.", "/gsw0D84gAZd3EUE2i5sjDqFOCwv.jpg", imdb_id="tt0087182"),
    Title("tv", OFFICE_TMDB, "The Office", "2005-03-24", _OFFICE_TEXT,
          "/7DJKHzAi83BmQrWLrYYOqcoKfhR.jpg", tvdb_id=OFFICE_TVDB, imdb_id="tt0386676",
          seasons=((0, 35), (1, 6), (2, 22), (3, 25), (4, 19), (5, 28), (6, 26), (7, 26),
                   (8, 24), (9, 25))),
    Title("tv", SEVERANCE_TMDB, "Severance", "2022-02-17",
          "Mark leads a team of office workers whose memories have been surgically divided "
          "between their work and personal lives.", "/pPHpeI2X1qEd1CS1SeyrdhZ4qnT.jpg",
          tvdb_id=SEVERANCE_TVDB, imdb_id="tt11280740", seasons=((1, 9), (2, 10))),
    Title("tv", SLOW_HORSES_TMDB, "Slow Horses", "2022-04-01",
          "Follow a dysfunctional team of MI5 agents, and their obnoxious boss, the notorious "
          "Jackson Lamb.", "/dnpatlJrEPiDSn5fzgzvxtiSnMo.jpg", tvdb_id=SLOW_HORSES_TVDB,
          imdb_id="tt5875444", seasons=((0, 2), (1, 6), (2, 6), (3, 6), (4, 6), (5, 6))),
)
