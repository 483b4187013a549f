"""How mediabot's log reads: one handler on stderr, set up once by the command line.

Under systemd the journal stamps each line and reads its level from a ``<N>`` prefix; by
hand each line carries its own time. The libraries that log every request (or, like
arrapi, whole payloads at DEBUG) are held at WARNING even under ``-v``.
"""

import contextlib
import logging
import os
import sys
from collections.abc import Iterator, Mapping

JOURNAL_PRIORITIES = {logging.CRITICAL: 2, logging.ERROR: 3, logging.WARNING: 4,
                      logging.INFO: 6, logging.DEBUG: 7}   # syslog's numbers
NOISY = ("arrapi", "urllib3", "httpx", "httpx2", "httpcore", "httpcore2", "openai", "twilio",
         "werkzeug", "apscheduler")


class JournalFormatter(logging.Formatter):
    """Under systemd (JOURNAL_STREAM is set) stderr goes to the journal, which stamps each
    line itself and reads a ``<N>`` syslog priority prefix: so no second timestamp, and
    ``journalctl -p warning`` filters by the real level."""

    def __init__(self) -> None:
        super().__init__("%(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        priority = JOURNAL_PRIORITIES.get(record.levelno, 6)
        return "\n".join(f"<{priority}>{line}"
                         for line in super().format(record).splitlines() or [""])


def setup_logging(verbose: bool = False, environ: Mapping[str, str] = os.environ) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JournalFormatter() if environ.get("JOURNAL_STREAM") else
                         logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, handlers=[handler])
    for noisy in NOISY:
        logging.getLogger(noisy).setLevel(logging.WARNING)
    # waitress warns "Task queue depth is N" for every request that waits for a thread: in a
    # burst of texts, one line per webhook (thousands a minute), paid while busiest.
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)


@contextlib.contextmanager
def quiet_logs(level: int, verbose: bool = False) -> Iterator[None]:
    """Raise mediabot's log level to ``level`` in the block, for a command whose output
    already says it all; with ``verbose`` (``-v``) everything is still logged."""
    logger = logging.getLogger("mediabot")
    old = logger.level
    if not verbose:
        logger.setLevel(level)
    try:
        yield
    finally:
        logger.setLevel(old)
