"""Posters by MMS (``[sms] posters``): which of the turn's posters go with the reply.

Sonarr/Radarr's lookups carry each title's poster (``images``, coverType "poster", its
``remoteUrl``); the tools collect them beside their results, never in them (the model does
not need URLs). A reply gets posters in two cases: it asks the person to choose between the
titles a search found (several hits, and the reply is a question), or it confirms an add.
The text always stands on its own; posters only help. At most three, and only public
https URLs (``public_url``): a poster on the house's own server or with a password in it
is dropped, and the text goes without it. A ``Reply`` (``reply``) carries the text and its posters
together, to whoever sends it.
"""

import re
from typing import NamedTuple

from mediabot.arr.tools.format import label
from mediabot.text.public_url import web_urls


class Offered(NamedTuple):
    """A search hit the model was shown: its title, year and poster (None without one)."""

    title: str
    year: int | None
    poster: str | None


def choose_posters(offered: list[Offered], added: list[str], reply: str) -> list[str]:
    """Posters for this reply: the added titles' (an add was confirmed), else, when the
    reply asks a question about several hits, the posters of the titles it names in the
    order it names them (all hits' in search order when it names none)."""
    if added:
        return web_urls(added)
    if len(offered) < 2 or "?" not in reply:
        return []
    text = reply.casefold()
    named = sorted((at, n, hit.poster) for n, hit in enumerate(offered)
                   if (at := _position(text, hit)) is not None)
    return web_urls([poster for _, _, poster in named] or [hit.poster for hit in offered])


def _position(text: str, hit: Offered) -> int | None:
    """Where the reply names the title: with its year ("The Office (UK, 2001)", "Dune
    (1984)"), else bare where it is not part of a longer title ("Dune" in "Dune: Part Two")
    or another year's ("Dune (1984)")."""
    if not hit.title:
        return None
    for needle in (label(hit.title, hit.year), f"{hit.title} ({hit.year})"):
        at = text.find(needle.casefold())
        if at >= 0:
            return at
    bare = re.search(rf"(?<!\w){re.escape(hit.title.casefold())}(?![\w:]|\s*\(\d)", text)
    return bare.start() if bare else None
