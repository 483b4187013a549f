"""The ``env`` file beside the config: ``MEDIABOT_*=secret`` lines, as systemd reads them.

systemd gives the daemon these lines through ``EnvironmentFile=``; an operator command run
by hand gets none of them, so every command reads the same file itself (the real
environment still wins). Pure: text in, settings and problems out.
"""


def parse_env_file(text: str, where: str) -> tuple[dict[str, str], list[str]]:
    """(settings, problems) from systemd ``EnvironmentFile`` text.

    Blank lines and ``#``/``;`` comments are skipped, ``export`` is allowed, and a value in
    matching single or double quotes loses them. A line that is not ``KEY=VALUE`` becomes one
    problem naming its line number (never its value: it may be a secret).
    """
    settings, problems = {}, []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        key, equals, value = line.removeprefix("export ").partition("=")
        key = key.strip()
        if not equals or not key.replace("_", "").isalnum():
            problems.append(f"{where} line {number} is not KEY=VALUE; write it like "
                            "MEDIABOT_LLM_API_KEY=sk-...")
            continue
        settings[key] = _unquoted(value.strip())
    return settings, problems


def secret_text(text: str) -> str:
    """A secret as a file holds it, less a leading byte-order mark (Windows editors write
    one) and the whitespace around it (the newline an editor adds)."""
    return text.strip().removeprefix("\ufeff").strip()


def _unquoted(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value
