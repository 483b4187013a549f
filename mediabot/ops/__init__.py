"""What an operator runs: ``mediabot check``, the health probe and the
users/history commands.
"""
