"""How a model call fails: one ``ModelError`` with a short reason, whatever the SDK raised,
and the statuses that sort a server's answer into those reasons."""

import re

# llama.cpp answers 500 when the sampled output breaks the tool-call format: bad luck in
# sampling, not a prompt the server refuses, so the same request is tried once more.
SAMPLING_FAILURE = re.compile(r"output that does not match the expected", re.IGNORECASE)
# Statuses that say "not now" rather than "not this request": the same prompt may work later.
BUSY_STATUSES = frozenset({408, 425, 429, 502, 503, 504})
# Statuses that say the operator's setup is wrong (key, model name, URL): no prompt helps.
SETUP_STATUSES = frozenset({401, 403, 404})


class ModelError(Exception):
    """The model could not answer; ``reason`` is one of timeout, unreachable, busy (408/429/
    502-504), misconfigured (401/403/404), rejected (other 4xx) or error; ``status`` is the
    HTTP status when the server answered one."""

    def __init__(self, reason: str, detail: str = "", status: int | None = None):
        self.reason = reason
        self.status = status
        super().__init__(f"{reason}: {detail}" if detail else reason)

    @property
    def refused(self) -> bool:
        """The server answered but would not take this request (a template error, a body it
        cannot parse): a different prompt may work where waiting would not. A sampling
        failure (``SAMPLING_FAILURE``) is not one: the prompt was read fine."""
        return (self.status is not None and self.status >= 400
                and self.status not in BUSY_STATUSES | SETUP_STATUSES
                and not SAMPLING_FAILURE.search(str(self)))
