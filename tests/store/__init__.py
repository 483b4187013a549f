"""Tests of ``mediabot/store``: the tables, the migrations and the users table's owner."""
