"""Before a command creates or opens the database: the file-system mistakes an install
makes, each as one sentence with the fix.

Two are common. The folder of ``[database] path`` does not exist yet (SQLite's own answer
is "unable to open database file"). And ``mediabot users add`` run with sudo but without
``-u mediabot`` creates the file owned by root in the daemon's folder: the daemon then fails
every write with "attempt to write a readonly database", long after the command that caused
it. Both are caught here; ``mediabot check`` reports an existing mismatch (``owner_problem``).
"""

import os
import pwd
from pathlib import Path

from mediabot.ops.errors import Refusal


def require_storage(path: str) -> None:
    """A ``Refusal`` (exit 2) when the database's folder is missing or running as root would
    create the file the daemon then cannot write (``storage_problem``)."""
    problem = storage_problem(path, effective_uid())
    if problem:
        raise Refusal(f"error: {problem}", 2)


def storage_problem(path: str, euid: int) -> str | None:
    """Why opening the database at ``path`` as user ``euid`` would go wrong, or None."""
    if path == ":memory:":
        return None
    file = Path(path)
    folder = file.parent
    if not folder.is_dir():
        return (f"cannot open the database {path!r}: its folder {folder} does not exist; "
                f"create it (sudo install -d -o mediabot -g mediabot {folder}) or fix "
                "[database] path")
    if file.exists() or euid != 0:
        return None
    owner = folder.stat().st_uid
    if owner == 0:
        return None
    return (f"{file} does not exist yet, and running as root would create it owned by root, "
            f"which the daemon ({user_name(owner)}, who owns {folder}) cannot write; run the "
            f"command as that user: sudo -u {user_name(owner)} mediabot ...")


def owner_problem(path: str) -> str | None:
    """An existing database owned by someone other than its folder's owner (made by root
    in the daemon's folder, most likely): the daemon cannot write it."""
    file = Path(path)
    if path == ":memory:" or not file.exists():
        return None
    mine, folders = file.stat().st_uid, file.parent.stat().st_uid
    if mine == folders:
        return None
    return (f"{file} is owned by {user_name(mine)} but its folder by {user_name(folders)}, "
            f"so the daemon may not write it — fix: sudo chown {user_name(folders)}: {file}*")


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def effective_uid() -> int:
    return os.geteuid()
