"""Every test in this folder is end to end, and marked ``e2e`` here, so a file needs no mark
of its own: the daemon's scenarios texted the way Twilio does (through the in-process app
or a real `mediabot serve`), the CLI and the scripts as processes, the container, the
systemd unit and the benches. ``pytest -m "not e2e"`` (the inner loop) leaves them all out.
"""

from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.hookimpl(tryfirst=True)   # before `-m` deselects by mark
def pytest_collection_modifyitems(items):
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.e2e)
