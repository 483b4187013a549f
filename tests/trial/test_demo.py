"""`mediabot demo` in process (click's runner): the simulated library with the configured
model."""

import os

from tests.support.prompts import person_part


def in_process(tmp_path, monkeypatch, stdin, *args, llm_url=None):
    """The same command through click's runner in this process: no interpreter start-up
    (tests/e2e/test_demo.py covers the real process's streams)."""
    from click.testing import CliRunner

    from mediabot.cli import main
    from mediabot.store import db

    for name in [k for k in os.environ if k.startswith("MEDIABOT_")]:
        monkeypatch.delenv(name)
    if llm_url:
        for key, value in (("BASE_URL", llm_url + "/v1"), ("API_KEY", "sk-test"),
                           ("MAX_RETRIES", "0")):
            monkeypatch.setenv(f"MEDIABOT_LLM_{key}", value)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["demo", *args], input=stdin)
    if not db.database.is_closed():
        db.database.close()
    assert result.exception is None or isinstance(result.exception, SystemExit)
    result.returncode = result.exit_code
    return result


def test_demo_without_a_model_says_exactly_what_to_set(tmp_path, monkeypatch):
    result = in_process(tmp_path, monkeypatch, "")
    assert result.returncode == 2
    assert 'base_url = "http://localhost:11434/v1"' in result.stderr
    assert "MEDIABOT_LLM_API_KEY" in result.stderr
    assert "Traceback" not in result.stderr


def test_demo_as_member_cannot_remove(tmp_path, fake_llm, monkeypatch):
    fake_llm.enqueue_text("Members can't remove things; ask an admin.")
    result = in_process(tmp_path, monkeypatch, "delete the office\n", "--member",
                        llm_url=fake_llm.url)
    assert result.returncode == 0, result.stderr
    tools = [t["function"]["name"] for t in fake_llm.requests[0]["tools"]]
    assert "search_media" in tools and "remove_media" in tools, "one list for everyone"
    assert "member, not an admin" in person_part(fake_llm.requests[0])


def test_demo_keeps_its_database_when_asked(tmp_path, fake_llm, monkeypatch):
    fake_llm.enqueue_text("Hello Sam!")
    result = in_process(tmp_path, monkeypatch, "hi\n", "--db", str(tmp_path / "keep.db"),
                        llm_url=fake_llm.url)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "keep.db").exists()


def test_demo_runs_on_the_config_serve_sh_writes_with_only_a_model_set(tmp_path, fake_llm,
                                                                      monkeypatch):
    """The README's path: scripts/serve.sh writes config.toml from the example (Twilio,
    Sonarr and Radarr still placeholders); with only the model set, demo works."""
    from pathlib import Path

    example = Path(__file__).resolve().parents[2] / "config.example.toml"
    (tmp_path / "config.toml").write_text(example.read_text())
    fake_llm.enqueue_tool_calls([("download_queue", {})])
    result = in_process(tmp_path, monkeypatch, "what's downloading?\n", llm_url=fake_llm.url)
    assert result.returncode == 0, result.stderr
    assert "[tool] download_queue {}" in result.stdout
    assert "bot> 4 downloads: Severance S02E05 63%, 12 min left;" in result.stdout
    assert "Dune: Part Two (2024) 63%, 2 h 15 min left." in result.stdout
    assert len(fake_llm.requests) == 1, "the queue's own words: the model is asked once"
