"""The household's language: the catalog mediabot's own texts come from, and its formats.

Everything mediabot writes by itself (the removal question, HELP, approvals, notices,
apologies) is an English message id looked up in a gettext catalog,
``mediabot/locales/<code>/LC_MESSAGES/mediabot.po``, read with Babel and compiled in
memory, so the catalogs in the repository are the only copy and nothing is built at
install. English is the source language and needs no catalog. A language is a BCP 47 tag
(``[sms] language``, or a ``[[users]]`` entry's ``language``): its first part names the
catalog, the whole tag the formats, so "es-MX" reads the Spanish catalog and writes dates
as in Mexico. A tag with no catalog is refused at ``load`` (the config reports it, naming
the languages there are); a message id missing from a catalog reads in English, and
tests/text/test_language.py fails on it. docs/languages.md says how to add or fix a translation.

Message ids use ``str.format`` fields ("Removed {title}."), filled after translation, so a
translation may move them; values are never translated.
"""

import datetime as dt
import functools
import gettext
import io
from dataclasses import dataclass
from importlib import resources

from babel import Locale, UnknownLocaleError
from babel.dates import format_skeleton
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.units import format_unit

from mediabot.text.localtime import as_local

SOURCE = "en"
DOMAIN = "mediabot"
# The catalogs shipped, in the order they are listed to an operator.
LANGUAGES = ("en", "es", "de", "fr", "pt", "nl")
# An ISO date for English, as mediabot always wrote it; the locale's own order elsewhere.
_DATE_SKELETON = "yMMMEd"
_UNITS = ("byte", "kilobyte", "megabyte", "gigabyte", "terabyte")
_ENGLISH_UNITS = dict(zip(_UNITS, ("B", "KB", "MB", "GB", "TB"), strict=True))


@dataclass(frozen=True)
class Language:
    """One language's catalog and locale. Build it with ``load``."""

    tag: str                      # as configured: "es-MX"
    code: str                     # its catalog: "es"
    locale: Locale
    catalog: gettext.NullTranslations

    def gettext(self, message: str, /, **values: object) -> str:
        """``message`` in this language, its ``{fields}`` filled from ``values``."""
        text = self.catalog.gettext(message)
        return text.format(**values) if values else text

    def ngettext(self, singular: str, plural: str, count: int, /, **values: object) -> str:
        """The form for ``count`` (``{count}`` is filled too)."""
        return self.catalog.ngettext(singular, plural, count).format(count=count, **values)

    @property
    def english_name(self) -> str:
        """"Spanish (Mexico)": how the model is told which language to write."""
        return self.locale.english_name or self.tag

    def when(self, moment: dt.datetime, zone: dt.tzinfo) -> str:
        """An instant for people and the model: "Fri 2026-11-27 21:00 EST" in English,
        "vie, 27 nov 2026 21:00 CET" in Spanish (the zone's own abbreviation in each)."""
        local = as_local(moment, zone)
        return f"{self.weekday_date(local.date())} {local:%H:%M %Z}"

    def weekday_date(self, day: dt.date) -> str:
        """A day with its weekday: "Fri 2026-11-27" in English, "vie, 27 nov 2026" in
        Spanish."""
        if self.code == SOURCE:
            return day.strftime("%a %Y-%m-%d")
        return format_skeleton(_DATE_SKELETON, day, locale=self.locale)

    def day(self, moment: dt.date) -> str:
        """A date with no time: "2026-11-27" in English, "27 nov 2026" in Spanish."""
        if self.code == SOURCE:
            return moment.isoformat()
        return format_skeleton("yMMMd", moment, locale=self.locale)

    def size(self, size: int | float | None) -> str:
        """Bytes in decimal units, two significant figures: "4.2 GB" in English, "4,2 GB"
        in German, "4,2 Go" in French (CLDR's unit names; spaces plain, as SMS carry them)."""
        value, unit = float(size or 0), "byte"
        for unit in _UNITS:
            if value < 1000 or unit == _UNITS[-1]:
                break
            value /= 1000
        small = value < 10 and unit not in _UNITS[:2]
        value = round(value, 1) if small else round(value)
        if self.code == SOURCE:
            number = f"{value:.1f}".removesuffix(".0") if small else f"{value:.0f}"
            return f"{number} {_ENGLISH_UNITS[unit]}"
        text = format_unit(value, f"digital-{unit}", length="short",
                           format="0.#" if small else "0", locale=self.locale)
        return text.replace("\u202f", " ").replace("\xa0", " ")


@functools.lru_cache(maxsize=64)
def load(tag: str) -> Language:
    """The language for a BCP 47 tag ("de", "pt-BR"); ValueError names the ones there are.
    Loaded once per process and tag."""
    code, locale = _parse(tag)
    return Language(tag=tag, code=code, locale=locale, catalog=_catalog(code))


def speaking(tag: str | None, household: str) -> Language:
    """A person's language: their own tag (``[[users]]`` language, stored on the user) or,
    with none, the household's ``[sms] language``. Both were checked when the config was
    read."""
    return load(tag or household)


def problem(tag: object) -> str | None:
    """Why ``tag`` cannot be a household's language, or None when it can."""
    if not isinstance(tag, str):
        return f"{tag!r} must be a string such as \"es\""
    try:
        _parse(tag)
    except ValueError as exc:
        return str(exc)
    return None


def _parse(tag: str) -> tuple[str, Locale]:
    code = tag.replace("_", "-").split("-", 1)[0].lower()
    if code not in LANGUAGES:
        raise ValueError(f"{tag!r} has no catalog; mediabot speaks {', '.join(LANGUAGES)} "
                         "(a region may follow, as in \"es-MX\" or \"pt-BR\")")
    try:
        return code, Locale.parse(tag.replace("-", "_"))
    except (ValueError, UnknownLocaleError):
        raise ValueError(f"{tag!r} is not a language tag Babel knows; write it like "
                         f"\"{code}\" or \"{code}-XX\" with a region code") from None


@functools.cache
def _catalog(code: str) -> gettext.NullTranslations:
    """The compiled catalog for ``code``, compiled once per process (fuzzy entries skipped)."""
    if code == SOURCE:
        return gettext.NullTranslations()
    po = resources.files("mediabot").joinpath("locales", code, "LC_MESSAGES", f"{DOMAIN}.po")
    with po.open("rb") as handle:
        catalog = read_po(handle, locale=code, domain=DOMAIN)
    compiled = io.BytesIO()
    write_mo(compiled, catalog)
    compiled.seek(0)
    return gettext.GNUTranslations(compiled)
