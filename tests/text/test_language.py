"""Every message id the code asks for has a translation in every shipped catalog.

The ids are extracted from the code the way ``scripts/catalogs.sh`` does (Babel's
extractor, keywords ``gettext`` and ``ngettext``), so a new English text with no
translation, a translation left over from a text the code no longer has, a fuzzy or empty
one, or one that dropped or renamed a ``{field}`` fails here, naming the catalog and id.
"""

import re
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from mediabot.text import language

PACKAGE = Path(language.__file__).parents[1]
CATALOGS = [code for code in language.LANGUAGES if code != language.SOURCE]
FIELD = re.compile(r"\{(\w*)[^{}]*\}")


@pytest.fixture(scope="module")
def code_ids() -> set:
    """Every message id the code asks for: extracted once for all the catalogs (read only)."""
    keywords = {"gettext": None, "ngettext": (1, 2)}
    found = set()
    for _file, _line, message, _comments, _context in extract_from_dir(
            str(PACKAGE), keywords=keywords, comment_tags=()):
        found.add(message if isinstance(message, str) else tuple(message))
    return found


def read_catalog(code: str):
    with open(PACKAGE / "locales" / code / "LC_MESSAGES" / "mediabot.po", "rb") as handle:
        return read_po(handle, locale=code)


def fields(text: str) -> set[str]:
    return set(FIELD.findall(text))


@pytest.mark.parametrize("code", CATALOGS)
def test_every_id_in_the_code_is_translated_and_none_is_stale(code, code_ids):
    catalog = read_catalog(code)
    ids = code_ids
    translated = {message.id if isinstance(message.id, str) else tuple(message.id): message
                  for message in catalog if message.id}
    missing = sorted(str(i) for i in ids - translated.keys())
    stale = sorted(str(i) for i in translated.keys() - ids)
    assert not missing, f"{code}: no translation for {missing}"
    assert not stale, f"{code}: translations of ids the code no longer has: {stale}"
    for key, message in translated.items():
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        assert all(strings) and not message.fuzzy, f"{code}: {key!r} is empty or fuzzy"
        source = key if isinstance(key, tuple) else (key,)
        for text in strings:
            assert fields(text) == fields(source[-1]), f"{code}: {key!r} -> {text!r} fields"


def test_each_catalog_compiles_and_loads():
    for code in language.LANGUAGES:
        assert language.load(code).code == code


def test_a_tag_without_a_catalog_is_refused_naming_those_there_are():
    assert language.problem("it") == (
        "'it' has no catalog; mediabot speaks en, es, de, fr, pt, nl (a region may follow, "
        "as in \"es-MX\" or \"pt-BR\")")
    assert language.problem("es-MX") is None and language.load("pt-BR").code == "pt"


def test_sizes_and_dates_follow_the_locale():
    import datetime as dt
    from zoneinfo import ZoneInfo

    moment = dt.datetime(2026, 10, 31, 18, 30, tzinfo=dt.UTC)
    madrid, new_york = ZoneInfo("Europe/Madrid"), ZoneInfo("America/New_York")
    assert language.load("en").when(moment, new_york) == "Sat 2026-10-31 14:30 EDT"
    assert language.load("es").when(moment, madrid) == "sáb, 31 oct 2026 19:30 CET"
    assert language.load("de").when(moment, madrid) == "Sa., 31. Okt. 2026 19:30 CET"
    assert [language.load(c).size(4_240_000_000) for c in ("en", "de")] == ["4.2 GB", "4,2 GB"]
    assert language.load("fr").size(62_000_000_000) == "62 Go"
    assert [language.load(c).size(1_500_000_000_000) for c in ("en", "nl")] == ["1.5 TB",
                                                                               "1,5 TB"]
