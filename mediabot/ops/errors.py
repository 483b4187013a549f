"""What an operator's command refuses, as ops says it: no command line below ``cli.py``.

``cli.py`` shows an ``OpsError`` as click shows a ``ClickException`` ("Error: ...", exit 1)
and an ``InvalidValue`` as a ``BadParameter`` naming where the value was typed (usage line,
"Invalid value for PHONE: ...", exit 2), so a mistake is one message, never a traceback.
"""


class OpsError(Exception):
    """An action that cannot be done as asked; the message says why and what to do instead."""


class InvalidValue(OpsError):
    """A value the operator typed is wrong; ``param_hint`` names the argument or option it
    was typed as ("PHONE", "--as")."""

    def __init__(self, message: str, param_hint: str):
        super().__init__(message)
        self.param_hint = param_hint
