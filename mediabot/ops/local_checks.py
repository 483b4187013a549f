"""The checks of ``mediabot check`` that need no other server: the config's placeholders,
region, language and household rules, the database, the users, the public URL.

Each returns ``Line``s (``check_report.py``) with the fix written into a warn or FAIL.
"""

import os
import sqlite3
from pathlib import Path
from urllib.parse import urlparse

from mediabot.config import Config, ConfigError, webhook_url
from mediabot.ops.storage import owner_problem
from mediabot.store.db import Role
from mediabot.store.users import count_users_in, nobody_can_text
from mediabot.text.check_report import FAIL, OK, WARN, Line
from mediabot.text.language import load as load_language
from mediabot.text.phones import home_regions
from mediabot.text.sms import accents_for

NOBODY_CAN_TEXT = ("nobody can text this mediabot: the config has no [[users]] and none were "
                   "added with `mediabot users add`")
ADD_AN_ADMIN = ("add yourself as an admin, e.g. [[users]] phone = \"+15551234567\" role = "
                "\"admin\" (or: mediabot users add +15551234567 --name NAME --role admin)")


# Values config.example.toml ships with (tests keep the two in step): left as they are, they
# pass every syntax check yet reach nobody.
EXAMPLE_PUBLIC_URL = "https://sms.example.com"
EXAMPLE_ACCOUNT_SID = "AC" + "x" * 32
EXAMPLE_FROM_NUMBER = "+15550001111"
EXAMPLE_USER = ("+15551234567", "Alex")


def require_reachable_url(config: Config) -> None:
    """A ConfigError while ``public_url`` is still config.example.toml's placeholder: Twilio
    could never reach it, so every text would go unanswered (``check`` fails it too)."""
    if config.server.public_url.rstrip("/") == EXAMPLE_PUBLIC_URL:
        raise ConfigError([f"{config.source}: [server] public_url is still the example's "
                           f"{EXAMPLE_PUBLIC_URL}, which Twilio cannot reach; set it to the "
                           "https address Twilio calls (docs/reaching-it.md)"])


def check_region(config: Config) -> list[Line]:
    """A warn when the Twilio number is from another country than [sms] default_region,
    the region numbers written without +country are read in (it defaults to "US")."""
    regions = home_regions(config.twilio.from_number) if config.twilio.from_number else ()
    region = config.sms.default_region.upper()
    if not regions or region in regions:
        return []
    return [Line(WARN, "sms", f"your Twilio number {config.twilio.from_number} is from "
                              f"{regions[0]}, but numbers written without + and a country code "
                              f"(in [[users]], users add, chat --as) are read as {region} "
                              f"numbers — set [sms] default_region = \"{regions[0]}\" if that "
                              "is where the household is")]


def check_language(config: Config) -> Line:
    """The language of mediabot's own texts: the household's, the [[users]] entries that
    speak another, and what SMS do with accents (the config already refused a language
    with no catalog)."""
    sms, choice = config.sms, accents_for(config.sms)
    parts = [f"texts in {_language_name(sms.language)}"]
    for user in config.users:
        if user.language and user.language != sms.language:
            own = accents_for(sms, user.language)
            parts.append(f"{user.name or user.phone} in {_language_name(user.language)}"
                         + (f", accents {ACCENT_WORDS[own]}" if own != choice else ""))
    how = (f"accents {ACCENT_WORDS[choice]} on SMS ("
           + ("UCS-2, 70 characters a segment" if choice == "keep"
              else "á -> a, 160 characters a segment"))
    source = "[sms] accents" if sms.accents else "the language's default; see [sms] accents"
    return Line(OK, "language", f"{'; '.join(parts)}; {how}; {source})")


ACCENT_WORDS = {"keep": "kept", "fold": "folded"}


def _language_name(tag: str) -> str:
    """"Spanish (es)", "Portuguese (Brazil, pt-BR)"."""
    name = load_language(tag).english_name
    return f"{name[:-1]}, {tag})" if name.endswith(")") else f"{name} ({tag})"


def check_placeholders(config: Config) -> list[Line]:
    """A FAIL (or for the example person, a warn) for each value still equal to the example's."""
    lines = []
    if config.server.public_url.rstrip("/") == EXAMPLE_PUBLIC_URL:
        lines.append(Line(FAIL, "config", f"[server] public_url is still the example's "
                                          f"{EXAMPLE_PUBLIC_URL}, which Twilio cannot reach "
                                          "you at — set it to your own https address"))
    if config.twilio.account_sid == EXAMPLE_ACCOUNT_SID:
        lines.append(Line(FAIL, "config", "[twilio] account_sid is still the example's "
                                          "ACxxx... — copy your Account SID from the Twilio "
                                          "console (Account info)"))
    if config.twilio.from_number == EXAMPLE_FROM_NUMBER:
        lines.append(Line(FAIL, "config", f"[twilio] from_number is still the example's "
                                          f"{EXAMPLE_FROM_NUMBER} — set it to your Twilio "
                                          "number"))
    for user in config.users:
        if (user.phone, user.name) == EXAMPLE_USER:
            lines.append(Line(WARN, "config", f"[[users]] still holds the example's "
                                              f"{user.name} ({user.phone}) as {user.role} — "
                                              "replace it with a real person's phone and name"))
    return lines


def check_users(config: Config) -> list[Line]:
    """A warn exactly when ``serve`` would refuse to start: nobody can text (the one
    predicate both ask, on the database as it stands). Nothing when someone can, or when
    the database cannot be read (the database line says why)."""
    stored = count_users_in(config.database.path)
    if stored is None or not nobody_can_text(config.users, stored):
        return []
    return [Line(WARN, "users", f"{NOBODY_CAN_TEXT}, so `mediabot serve` will not start — "
                                f"fix: {ADD_AN_ADMIN}")]


def check_database(path: str) -> Line:
    """Can this process write the SQLite file (or create it)?

    An existing file is opened and a table is created inside a transaction that is rolled
    back, so nothing changes. WAL mode also writes ``-wal``/``-shm`` files beside it, so the
    directory must be writable too.
    """
    if path == ":memory:":
        return Line(WARN, "database", "path is :memory:; nothing is kept across restarts — "
                                      "set [database] path to a file")
    file = Path(path)
    folder = file.parent if str(file.parent) else Path(".")
    if not folder.is_dir():
        return Line(FAIL, "database", f"directory {folder} does not exist — create it or "
                                      "fix [database] path")
    if not os.access(folder, os.W_OK | os.X_OK):
        return Line(FAIL, "database", f"directory {folder} is not writable by this user — "
                                      f"fix its owner/permissions or [database] path")
    if not file.exists():
        return Line(OK, "database", f"{file} will be created on first start ({folder} is "
                                    "writable)")
    problem = owner_problem(path)
    if problem:
        return Line(FAIL, "database", problem)
    problem = _write_and_roll_back(file)
    if problem:
        return Line(FAIL, "database", f"{file} is not writable ({problem}) — fix its "
                                      "owner/permissions or [database] path")
    return Line(OK, "database", f"{file} is writable")


def _write_and_roll_back(file: Path) -> str | None:
    """None when a write succeeds; otherwise SQLite's reason."""
    try:
        connection = sqlite3.connect(file, timeout=5, isolation_level=None)
    except sqlite3.Error as exc:
        return str(exc)
    try:
        connection.execute("BEGIN IMMEDIATE")
        connection.execute("CREATE TABLE mediabot_check_probe (x)")
        connection.execute("ROLLBACK")
    except sqlite3.Error as exc:
        return str(exc)
    finally:
        connection.close()
    return None


def check_server(config: Config) -> list[Line]:
    """public_url must be https for Twilio; the hooks need a webhook secret to work at all."""
    url = config.server.public_url
    if urlparse(url).scheme == "https":
        lines = [Line(OK, "server", f"Twilio should post to {webhook_url(url)}")]
    else:
        lines = [Line(WARN, "server", f"public_url is http; Twilio needs https — serve "
                                      f"{url} through an https proxy and set [server] "
                                      "public_url to its https address")]
    arrs = config.sonarr is not None or config.radarr is not None
    if not _latin1(config.notifications.webhook_secret):
        lines.append(Line(WARN, "notifications", "webhook_secret has a character Sonarr/Radarr "
                                                 "cannot send (they encode the password as "
                                                 "ISO-8859-1), so their calls get 401 — use "
                                                 "letters, digits and punctuation in "
                                                 "[notifications] webhook_secret"))
    if arrs and not config.notifications.webhook_secret:
        lines.append(Line(WARN, "notifications", "webhook_secret is empty, so /hooks/sonarr and "
                                                 "/hooks/radarr refuse every call and nobody "
                                                 "hears when downloads finish — set "
                                                 "[notifications] webhook_secret"))
    return lines


def _latin1(text: str) -> bool:
    try:
        text.encode("iso-8859-1")
    except UnicodeEncodeError:
        return False
    return True


def check_household(config: Config) -> Line:
    """The household rules in force, in one line (warn when approvals have nobody to ask)."""
    rules, sms = config.requests, config.sms
    parts = [f"members' adds wait for an admin's APPROVE (expire after "
             f"{rules.approval_ttl_hours} h)" if rules.approval == "members"
             else "adds run at once (no approval)"]
    limits = [f"{n} {unit}{'s' if n != 1 else ''}" for n, unit in
              ((rules.movies_per_week, "movie"), (rules.seasons_per_week, "season")) if n]
    parts.append(f"at most {' and '.join(limits)} a week per member" if limits
                 else "no weekly quotas")
    parts.append(f"search again at most every {rules.search_again_hours} h per title")
    parts.append("posters sent by MMS" if sms.posters else "no posters")
    if rules.approval == "members" and not any(u.role == Role.ADMIN for u in config.users):
        return Line(WARN, "requests", "; ".join(parts) + ". No admin in [[users]] to approve: "
                    "fix: add one with role = \"admin\" (or `mediabot users add`)")
    return Line(OK, "requests", "; ".join(parts))
