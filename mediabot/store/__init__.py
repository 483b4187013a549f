"""The SQLite store: the peewee tables, their append-only migrations and the
sync of ``[[users]]`` from the config file.
"""
