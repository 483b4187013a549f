"""Each table has one owner module, and only the owner queries it.

Every other module calls a function of the owner, so a table's rules (what a row means, which
rows count, how it is cleaned up) live in one place. "Querying" is any attribute of the table
class: ``db.User.select``, ``db.Message.created_at``, ``Outbox.update``. Naming the row type on
its own (``db.User`` in an annotation) is fine. The storage layer itself (``store/db.py``,
``store/migrations.py``) is exempt: it defines the tables and changes their shape.

Raw SQL counts too: a string that writes a table (``INSERT INTO inbox``, ``UPDATE users``,
``DELETE FROM outbox``) may stand only in that table's owner. The intake's batched writer and
the health probe write with raw SQL for speed; both write only tables they own, and the one
statement the intake runs on the users table is ``store.users.OPT_OUT_BY_ID``, called
through ``users.opt_out_in``.
"""

import ast
import functools
import re
from pathlib import Path

import pytest

import mediabot

PACKAGE = Path(mediabot.__file__).parent
DB_MODULE = "mediabot.store.db"
EXEMPT = {"mediabot.store.db", "mediabot.store.migrations"}
OWNERS = {
    "User": "mediabot.store.users",
    "Message": "mediabot.conversation.history",
    "PendingAction": "mediabot.conversation.confirmations",
    "Inbox": "mediabot.mailbox.inbox",
    "InboxCursor": "mediabot.mailbox.inbox",
    "Outbox": "mediabot.mailbox.outbox",
    "Request": "mediabot.arr.wanted",
    "Notice": "mediabot.arr.notices",
    "Announced": "mediabot.arr.notices",
    "Import": "mediabot.arr.notices",
    "Approval": "mediabot.approvals.house_rules",
    "Search": "mediabot.arr.searches",
    "TokenCalibration": "mediabot.model.calibration",
    "SeerrApproval": "mediabot.approvals.seerr_requests",
    "GatewayEvent": "mediabot.mailbox.gateway_events",
    "HealthProbe": "mediabot.ops.health",  # health_probe: raw SQL today, no model yet
}


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module an ``import from`` names, resolving ``from . import x``."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base[:len(base) - node.level + (1 if is_package else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def _bindings(tree: ast.AST, module: str, is_package: bool) -> tuple[set[str], dict[str, str]]:
    """Names bound to the db module, and names bound to a table class (local -> table)."""
    db_names, table_names = set(), {}
    parent, _, leaf = DB_MODULE.rpartition(".")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            db_names |= {a.asname for a in node.names if a.name == DB_MODULE and a.asname}
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node, module, is_package)
            for alias in node.names:
                local = alias.asname or alias.name
                if source == parent and alias.name == leaf:
                    db_names.add(local)
                elif source == DB_MODULE and alias.name in OWNERS:
                    table_names[local] = alias.name
    return db_names, table_names


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return inner and f"{inner}.{node.attr}"
    return None


def table_queries(source: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """(line, table) for every ``<table>.<attr>`` expression in a module's source."""
    tree = ast.parse(source)
    db_names, table_names = _bindings(tree, module, is_package)
    prefixes = {f"{name}." for name in db_names} | {f"{DB_MODULE}."}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        base = _dotted(node.value)
        if base in table_names:
            found.append((node.lineno, table_names[base]))
        elif base:
            for prefix in prefixes:
                table = base[len(prefix):] if base.startswith(prefix) else None
                if table in OWNERS:
                    found.append((node.lineno, table))
    return sorted(set(found))


@functools.cache
def package_queries() -> tuple[tuple[str, int, str], ...]:
    """(module, line, table) for every query in mediabot/, read once for all the tables."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_name(path)
        found += [(module, line, table) for line, table in
                  table_queries(path.read_text(), module, path.stem == "__init__")]
    return tuple(found)


def queries_of(table: str) -> list[str]:
    """'module:line' for each query of ``table`` outside its owner and the storage layer."""
    return [f"{module}:{line}" for module, line, name in package_queries()
            if name == table and module not in EXEMPT and module != OWNERS[table]]


@pytest.mark.parametrize("table", sorted(OWNERS))
def test_only_the_owner_queries_the_table(table):
    found = queries_of(table)
    assert not found, (
        f"{table} is owned by {OWNERS[table]}; call a function of the owner instead of "
        f"querying it at " + ", ".join(found))


def test_every_table_has_an_owner():
    tables = {node.name for node in ast.parse((PACKAGE / "store" / "db.py").read_text()).body
              if isinstance(node, ast.ClassDef)
              and any(getattr(base, "id", None) == "BaseModel" for base in node.bases)}
    assert tables - set(OWNERS) == set()


@pytest.mark.parametrize("source", [
    "from mediabot.store import db\ndb.User.select()",
    "from mediabot.store import db as store\nstore.User.phone",
    "import mediabot.store.db as tables\ntables.User.get_or_none()",
    "import mediabot.store.db\nmediabot.store.db.User.update()",
    "from mediabot.store.db import User\nUser.delete()",
    "from mediabot.store.db import User as Member\nMember.get(1)",
    "from . import db\ndb.User.id",
    "from .db import User\nUser.select()",
])
def test_the_finder_sees_every_way_to_reach_a_table(source):
    assert table_queries(source, "mediabot.store.other") == [(2, "User")]


@pytest.mark.parametrize("source", [
    "from mediabot.store import db\ndef f(user: db.User): return user.phone",
    "from mediabot.store import db\nrows = [db.User]",
    "from mediabot.store.db import database\ndatabase.atomic()",
    "import db\ndb.User.select()",
])
def test_the_finder_lets_naming_a_row_type_pass(source):
    assert table_queries(source, "mediabot.ops.accounts") == []


# SQL keywords in capitals, as the code writes them (a docstring's "update the row" is prose)
RAW_WRITE = re.compile(r"\b(?:INSERT(?:\s+OR\s+[A-Z]+)?\s+INTO|DELETE\s+FROM|REPLACE\s+INTO)"
                       r"\s+[\"`]?(\w+)|\bUPDATE\s+[\"`]?(\w+)[\"`]?\s+SET\b")


def _table_names() -> dict[str, str]:
    """SQL table name -> model class name, read from the models in ``store/db.py``."""
    from mediabot.store import db
    modelled = {model._meta.table_name: name for name in OWNERS
                if (model := getattr(db, name, None)) is not None}
    return modelled | {"health_probe": "HealthProbe"}   # made by a migration, no model


def raw_writes(source: str) -> list[tuple[int, str]]:
    """(line, SQL table name) for each string in ``source`` that writes a table."""
    tree = ast.parse(source)
    in_fstrings = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr)
                   for part in node.values}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in in_fstrings:
            text = node.value
        elif isinstance(node, ast.JoinedStr):
            text = "".join(part.value for part in node.values
                           if isinstance(part, ast.Constant) and isinstance(part.value, str))
        else:
            continue
        found += [(node.lineno, (m.group(1) or m.group(2)).lower())
                  for m in RAW_WRITE.finditer(text)]
    return found


def test_raw_sql_writes_only_a_table_its_module_owns():
    tables = _table_names()
    stray = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_name(path)
        if module in EXEMPT:
            continue
        for line, table in raw_writes(path.read_text()):
            owner = OWNERS.get(tables.get(table, ""), None)
            if owner != module:
                stray.append(f"{module}:{line} writes {table} (owner: {owner or 'none known'})")
    assert stray == []


@pytest.mark.parametrize(("source", "table"), [
    ('q = "UPDATE users SET opted_out = 1 WHERE id = ?"', "users"),
    ('q = """\nINSERT INTO inbox (a) VALUES (1)"""', "inbox"),
    ("q = f'DELETE FROM outbox WHERE id = {1}'", "outbox"),
    ('q = "INSERT OR IGNORE INTO messages (a) VALUES (1)"', "messages"),
])
def test_the_raw_sql_finder_sees_a_write(source, table):
    assert [name for _, name in raw_writes(source)] == [table]


@pytest.mark.parametrize("source", [
    'q = "SELECT id FROM users WHERE phone = ?"',
    '"""Update the row, then insert into the table the decides."""',
])
def test_the_raw_sql_finder_lets_reads_and_prose_pass(source):
    assert raw_writes(source) == []
