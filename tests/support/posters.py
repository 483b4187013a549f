"""Posters: public artwork URLs, the choice text that carries them, and URLs that must never leave
the house."""

TMDB = "https://image.tmdb.org/t/p/original/movie/{}/posters/65f2a8c1d4e6b.jpg"
TVDB = "https://artworks.thetvdb.com/banners/v4/series/{}/posters/65f2a8c1d4e6b.jpg"
DUNE_1984, DUNE_2021, DUNE_TWO = (TMDB.format(slug) for slug in
                                  ("dune-841", "dune-438631", "dune-part-two-693134"))
CHOOSE = "Which one: Dune (1984), Dune (2021) or Dune: Part Two?"
PRIVATE_POSTERS = [
    "http://admin:hunter2@192.168.1.20:7878/MediaCover/2/poster.jpg",
    "http://127.0.0.1:8989/api/v3/MediaCover/2/poster.jpg?lastWrite=63859",
    "https://admin:hunter2@image.tmdb.org/t/p/original/poster.jpg",
    "http://image.tmdb.org/t/p/original/poster.jpg",
    "https://127.0.0.1/MediaCover/2/poster.jpg", "https://[::1]/p.jpg",
    "https://[::ffff:10.0.0.5]/p.jpg", "https://10.1.2.3/p.jpg", "https://172.16.0.9/p.jpg",
    "https://169.254.10.1/p.jpg", "https://100.64.0.7/p.jpg", "https://240.0.0.1/p.jpg",
    "https://[fe80::1]/p.jpg", "https://[fd00::5]/p.jpg", "https://nas/p.jpg",
    "https://localhost/p.jpg", "https://radarr.local/p.jpg", "https://qbit.lan/p.jpg",
    "https://nas.home.arpa/p.jpg", "https://radarr.internal/p.jpg", "https://2130706433/p.jpg",
    "https://0x7f.1/p.jpg", "https://image.tmdb.org:port/p.jpg", "/MediaCover/2/poster.jpg",
    "https://image.tmdb.org/p 1.jpg", None, 7,
]
