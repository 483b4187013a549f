"""What ``mediabot check`` prints: one ``Line`` per finding, and the summary under them.

``ok`` is fine, ``warn`` works but the operator should know, ``FAIL`` breaks something and
carries the fix in its text. The checks themselves are ``local_checks.py``,
``model_checks.py`` and ``service_checks.py``; ``checks.py`` runs them in order.
"""

from dataclasses import dataclass

OK, WARN, FAIL = "ok", "warn", "FAIL"


@dataclass(frozen=True)
class Line:
    status: str      # OK, WARN or FAIL
    subject: str     # "sonarr", "llm", ...
    text: str

    def render(self) -> str:
        return f"{self.status:<4} {self.subject}: {self.text}"


def summary(lines: list[Line]) -> str:
    """The last line: how many failed, or that all passed."""
    failed = sum(line.status == FAIL for line in lines)
    warnings = count_of(sum(line.status == WARN for line in lines), "warning")
    if failed:
        return (f"{count_of(failed, 'check')} failed, {warnings}; fix the FAIL lines and run "
                "mediabot check again")
    return f"all checks passed ({warnings})"


def count_of(n: int, noun: str) -> str:
    """"1 warning", "2 warnings"."""
    return f"{n} {noun}" + ("" if n == 1 else "s")
