"""A household's own language: German texts the daemon sends, word for word."""

from mediabot.trial.sim.arr_fixtures import OFFICE_TVDB

REMOVE_OFFICE = [("remove_media", {"kind": "series", "id": OFFICE_TVDB, "delete_files": True})]
HELP_DE = (
    "mediabot: schreib mir wie einem Menschen. Probier \"hol den neuen Dune\", \"was lädt "
    "gerade?\", \"was gibt's Neues diese Woche?\" oder \"haben wir Severance?\". Antworte JA "
    "oder NEIN, wenn ich um Bestätigung bitte. NEUSTART löscht unseren Chat. STOP meldet dich "
    "ab, START wieder an.")
KEPT_DE = "OK, ich behalte es. Es wurde nichts entfernt."
