#!/usr/bin/env bash
# Refresh the message catalogs from the code (docs/languages.md): the template
# mediabot/locales/mediabot.pot, then each language's mediabot.po (new ids added empty,
# ids the code no longer has dropped). Translators then fill the empty msgstr lines;
# tests/text/test_language.py fails until every id has its translation in every catalog.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-.venv/bin/python}
locales=mediabot/locales
mkdir -p "$locales"
"$python" -m babel.messages.frontend extract --no-location --sort-output \
    -k gettext -k ngettext:1,2 --project mediabot -o "$locales/mediabot.pot" mediabot
for code in es de fr pt nl; do
    po="$locales/$code/LC_MESSAGES/mediabot.po"
    if [ -f "$po" ]; then
        "$python" -m babel.messages.frontend update --no-fuzzy-matching --ignore-obsolete \
            -D mediabot -l "$code" -i "$locales/mediabot.pot" -o "$po"
    else
        "$python" -m babel.messages.frontend init -D mediabot -l "$code" \
            -i "$locales/mediabot.pot" -o "$po"
    fi
done
