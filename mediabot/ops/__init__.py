"""What an operator runs: ``mediabot check`` (``checks.py`` and the checks it runs), the
health probe, the users/history commands (``accounts.py``), the log's format (``logs.py``)
and what a command refuses (``errors.py``, which only ``cli.py`` turns into click's).
"""
