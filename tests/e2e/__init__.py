"""End-to-end scenarios: the daemon texted the way Twilio does (through its app in process
or a real `mediabot serve`), the CLI and the scripts as processes, the container, the
systemd unit and the benches. Every test here is marked ``e2e`` (see conftest.py)."""
