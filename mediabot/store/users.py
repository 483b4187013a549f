"""The users table's owner: the household's members, as the config file and the commands
keep them."""

from mediabot.store.db import User, database


def ensure_config_users(users) -> None:
    """Write ``[[users]]`` into the users table: new ones added, name/role changes applied.

    Users added by command are left alone; a config user later removed from the file keeps
    its row and history (it is only no longer marked as from the config).
    """
    phones = {u.phone for u in users}
    with database.atomic():
        for entry in users:
            user, created = User.get_or_create(
                phone=entry.phone,
                defaults={"display_name": entry.name or None, "role": entry.role,
                          "from_config": True})
            if created:
                continue
            changes = {"role": entry.role, "from_config": True}
            if entry.name:
                changes["display_name"] = entry.name
            User.update(changes).where(User.id == user.id).execute()
        stale = User.update(from_config=False).where(User.from_config == True)  # noqa: E712
        if phones:
            stale = stale.where(User.phone.not_in(list(phones)))
        stale.execute()


def get_user(user_id: int) -> User:
    """The user's row; raises ``User.DoesNotExist`` for an unknown id."""
    return User.get_by_id(user_id)


def set_opted_out(user: User, opted_out: bool) -> None:
    """Flag (or unflag) the person as opted out of texts; ``user`` is updated too."""
    User.update(opted_out=opted_out).where(User.id == user.id).execute()
    user.opted_out = opted_out


def set_display_name(user: User, name: str) -> None:
    """Store the name the person gave; ``user`` is updated too."""
    User.update(display_name=name).where(User.id == user.id).execute()
    user.display_name = name
