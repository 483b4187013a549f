"""Tests of the top of the package: the daemon, the scheduler and the command line
(``cli.py``, the install mistakes, a newcomer's first commands)."""
