"""What an operator's command refuses, as ops says it: no command line below ``cli.py``.

``cli.py`` shows an ``OpsError`` as click shows a ``ClickException`` ("Error: ...", exit 1),
an ``InvalidValue`` as a ``BadParameter`` naming where the value was typed (usage line,
"Invalid value for PHONE: ...", exit 2) and a ``Refusal`` as its own line with its own exit
code, so a mistake is one message, never a traceback.
"""


class OpsError(Exception):
    """An action that cannot be done as asked; the message says why and what to do instead."""


class InvalidValue(OpsError):
    """A value the operator typed is wrong; ``param_hint`` names the argument or option it
    was typed as ("PHONE", "--as")."""

    def __init__(self, message: str, param_hint: str):
        super().__init__(message)
        self.param_hint = param_hint


class Refusal(Exception):
    """A command that must not go on (the database's folder is missing, the model does not
    answer): ``message`` is shown as it is, on stderr, and the command exits ``exit_code``."""

    def __init__(self, message: str, exit_code: int = 2):
        super().__init__(message)
        self.exit_code = exit_code
