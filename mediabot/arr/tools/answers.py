"""A tool's result as the person's answer, when it is the whole answer: the rule of each
tool that has one (``Tool.direct``), and its wording.

The model is asked again after a tool only to put its result into words. Where the result
already is the answer (what is downloading, what is coming, the status of the one library
title the person named, with nothing missing), the person gets the tool's own wording in
their language and the model is not asked: on a home server's CPU that second request, its
writing most of all, is what the person waits for. Each function here takes the result's
data, the checked arguments, the person's language and the characters the text may take,
and returns the text, or None when the result needs the model's words: an error or a
warning (one server did not answer), several matches, a title not in the library, one with
something missing (the person may want to know why, and the model may search again).

A status is the answer only to a text that asks for it ("do we have slow horses?", "is it
all downloaded?"): ``status_answer`` is given the person's text, and every word of it but the
title's must be a word of such a question (``STATUS_WORDS``, in English and the person's
language); "is slow horses any good?" goes to the model.

Pure: data in, text out. The wording is gettext's (``mediabot/locales``); what the servers
wrote (titles, a download client's warning) is kept as the tool gave it.
"""

import re
from collections.abc import Callable

from mediabot.arr.tools.format import label
from mediabot.arr.tools.title_ids import kind_of
from mediabot.text.language import Language

SEPARATOR = "; "
# The words of a question about a title's status, besides the title: a text with any other
# word asks something its status does not answer. English is always read, as for Y/N.
STATUS_WORDS = {
    "en": "do does did we you i have has got is are was it its s the a an in on of our my "
          "library downloaded download complete completed all there yet ready still status "
          "any how what about and finished done whole every episode episodes season seasons "
          "movie film show series tv available to watch already fully entire".split(),
    "es": "tenemos tienes hay está esta es el la los las en de del biblioteca descargado "
          "descargada completo completa todo todos toda ya listo lista serie película "
          "pelicula temporada temporadas episodios capítulos y qué que tal sobre nuestra "
          "disponible".split(),
    "de": "haben habt hast wir ist sind es der die das den in im bibliothek heruntergeladen "
          "komplett vollständig alle alles schon da fertig bereit serie film staffel "
          "staffeln folgen und was mit noch".split(),
    "fr": "on a as avons est le la les l dans bibliothèque téléchargé téléchargée complet "
          "complète tout tous toute déjà prêt prête série film saison saisons épisodes et "
          "quoi de du il elle y".split(),
    "pt": "temos tem tens está esta é e o a os as na no biblioteca baixado baixada completo "
          "completa tudo todos toda já pronto pronta série filme temporada temporadas "
          "episódios de do da".split(),
    "nl": "hebben heb we wij is het de een in bibliotheek gedownload compleet volledig alle "
          "alles al klaar er serie film seizoen seizoenen afleveringen en van staat".split(),
}


def queue_answer(data: dict, args: dict, lang: Language, budget: int,
                 asked: str = "") -> str | None:
    """What is downloading, each with its progress and time left (``download_queue``)."""
    if _failed(data):
        return None
    total = data.get("total") or 0
    if not total:
        return lang.gettext("Nothing is downloading right now.")
    items = [_download(item, lang) for item in data.get("downloads") or []]
    return _listed(items, total, budget, lang, lambda shown: lang.ngettext(
        "{count} download: {items}.", "{count} downloads: {items}.", total, items=shown))


def upcoming_answer(data: dict, args: dict, lang: Language, budget: int,
                    asked: str = "") -> str | None:
    """The episodes and releases of the next days, soonest first within each (``upcoming``)."""
    if _failed(data):
        return None
    days = data.get("days") or args.get("days") or 7
    episodes = [f"{e.get('series')} {e.get('episode')}, {e.get('airs')}"
                for e in data.get("episodes") or []]
    movies = [_release(movie, lang) for movie in data.get("movies") or []]
    total = (data.get("episodes_total") or len(episodes)) + (data.get("movies_total")
                                                              or len(movies))
    if not total:
        return lang.ngettext("Nothing new in the next {count} day.",
                             "Nothing new in the next {count} days.", days)
    return _listed(episodes + movies, total, budget, lang, lambda shown: lang.ngettext(
        "Coming in the next {count} day: {items}.", "Coming in the next {count} days: {items}.",
        days, items=shown))


def status_answer(data: dict, args: dict, lang: Language, budget: int,
                  asked: str = "") -> str | None:
    """The one library title the search named, when nothing of it is missing and ``asked``
    (the person's text) asks for its status (``search_media``): a film downloaded, a series
    with every aired episode."""
    hits = data.get("results") or []
    if _failed(data) or data.get("more") or len(hits) != 1:
        return None
    hit = hits[0]
    if not _asks_status(asked, lang, hit.get("title"), hit.get("year"), args.get("query")):
        return None
    named = _words(args.get("query"))
    if not hit.get("in_library") or named not in (_words(hit.get("title")),
                                                  _words(label(hit.get("title") or "",
                                                               hit.get("year")))):
        return None
    title = label(hit.get("title") or "", hit.get("year"))
    if kind_of(hit) == "movie":
        return _movie_status(hit, title, lang)
    return _series_status(hit, title, lang)


def _movie_status(hit: dict, title: str, lang: Language) -> str | None:
    if not hit.get("downloaded"):
        return None
    if hit.get("size"):
        return lang.gettext("{title} is in the library and ready to watch ({size}).",
                            title=title, size=hit["size"])
    return lang.gettext("{title} is in the library and ready to watch.", title=title)


def _series_status(hit: dict, title: str, lang: Language) -> str | None:
    have, _, total = str(hit.get("episodes_on_disk") or "").partition("/")
    if hit.get("missing") != "nothing" or not (have.isdigit() and total.isdigit()):
        return None
    text = lang.gettext("{title} is in the library with every aired episode ({have} of "
                        "{total} episodes, {size}).", title=title, have=have, total=total,
                        size=hit.get("size") or "0 B")
    if hit.get("next_episode_airs"):
        text += " " + lang.gettext("The next episode airs {when}.",
                                   when=hit["next_episode_airs"])
    return text


def _download(item: dict, lang: Language) -> str:
    title = " ".join(filter(None, (item.get("title"), item.get("episodes"))))
    progress = item.get("progress")
    if item.get("warning"):
        if progress:
            return lang.gettext("{title} stuck at {progress}: {warning}", title=title,
                                progress=progress, warning=item["warning"])
        return lang.gettext("{title} stuck: {warning}", title=title, warning=item["warning"])
    if item.get("status") != "downloading":
        return f"{title}: {_state(item.get('status'), lang)}"
    if progress and item.get("time_left"):
        return lang.gettext("{title} {progress}, {time_left} left", title=title,
                            progress=progress, time_left=item["time_left"])
    return " ".join(filter(None, (title, progress)))


def _state(status: object, lang: Language) -> str:
    """A queue status in the person's language; one the servers added since, as they wrote
    it."""
    states = {"queued": lang.gettext("queued"), "paused": lang.gettext("paused"),
              "completed": lang.gettext("completed"), "importing": lang.gettext("importing"),
              "waiting to import": lang.gettext("waiting to import"),
              "import blocked": lang.gettext("import blocked"),
              "failed": lang.gettext("failed")}
    return states.get(str(status), str(status))


def _release(movie: dict, lang: Language) -> str:
    title, date = movie.get("title"), movie.get("date")
    if movie.get("release") == "cinema":
        return lang.gettext("{title} in cinemas {date}", title=title, date=date)
    if movie.get("release") == "physical":
        return lang.gettext("{title} on disc {date}", title=title, date=date)
    return lang.gettext("{title} digital release {date}", title=title, date=date)


def _listed(items: list[str], total: int, budget: int, lang: Language,
            sentence: Callable[[str], str]) -> str:
    """``sentence`` around as many of ``items`` as fit in ``budget`` characters, the rest
    counted ("and 3 more"); at least the first, which the text's own cut then shortens."""
    for shown in range(len(items), 0, -1):
        kept = items[:shown]
        if shown < total:
            kept = [*kept, lang.gettext("and {count} more", count=total - shown)]
        text = sentence(SEPARATOR.join(kept))
        if len(text) <= budget or shown == 1:
            return text
    return sentence(lang.gettext("and {count} more", count=total))


def _failed(data: dict) -> bool:
    """An error, or a warning that one of the servers did not answer: the model explains."""
    return bool(data.get("error") or data.get("warnings"))


def _asks_status(asked: str, lang: Language, *titles: object) -> bool:
    """Every word of the person's text is the title's (as found or as searched) or a status
    question's (``STATUS_WORDS``, English and the person's language): a word of neither
    kind asks something the status does not answer."""
    known = set(STATUS_WORDS["en"]) | set(STATUS_WORDS.get(lang.code.split("-")[0], ()))
    known |= {word for title in titles for word in _words(title).split()}
    words = _words(asked).split()
    return bool(words) and all(word in known for word in words)


def _words(text: object) -> str:
    """A title as words to compare: "Dune: Part Two" and "dune part two" are one."""
    words = re.sub(r"[^\w]+", " ", str(text or "").casefold()).split()
    return " ".join(words[1:] if words[:1] == ["the"] else words)
