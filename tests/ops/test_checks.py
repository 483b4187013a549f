"""``mediabot check`` as a whole (``ops/checks.py``): one line per check on a healthy setup,
config errors before any check, a check that crashes becomes one FAIL line, and a missing
[sonarr] turns its tools off. The fakes are tests/ops/conftest.py's ``servers``; each test
writes a real config file and runs the real command through click's CliRunner."""

from mediabot.ops.checks import _safely
from tests.support.check import LLM_KEY, PUBLIC_URL, check_line, run_check


def test_healthy_setup_passes_with_one_line_per_check(tmp_path, servers, caplog):
    result = run_check(tmp_path, servers, caplog)
    assert result.exit_code == 0, result.output
    assert "Sonarr 4.0.14.2939 answers at " + servers["urls"]["sonarr"] in check_line(
        result, "sonarr", "ok")
    assert "root folder /tv (configured" in result.output
    assert "quality profile HD-1080p (configured)" in result.output
    assert "none configured, using the first" in check_line(result, "radarr", "ok")
    assert "gpt-4o-mini" in check_line(result, "llm", "ok")
    assert "the model called a tool when asked" in check_line(result, "tools", "ok")
    probe = [body for body in servers["llm"].requests if body.get("tools")][-1]
    assert (probe["tool_choice"], probe["max_tokens"]) == ("auto", 64)
    assert f"Twilio should post to {PUBLIC_URL}/sms" in check_line(result, "server", "ok")
    assert "credentials accepted" in check_line(result, "twilio", "ok")
    assert "is writable" in check_line(result, "database", "ok") or "will be created" in \
        check_line(result, "database", "ok")
    lines = result.output.splitlines()
    assert all(text.startswith("ok   ") for text in lines[:-1])
    assert lines[-1] == "all checks passed (0 warnings)"


def test_missing_arr_section_turns_tools_off_without_failing(tmp_path, servers):
    result = run_check(tmp_path, servers, sonarr=None)
    assert result.exit_code == 0, result.output
    assert "series tools are off" in check_line(result, "sonarr", "warn")


def test_config_errors_exit_2_before_any_check(tmp_path, servers):
    result = run_check(tmp_path, servers, **{"twilio.auth_token": None,
                                             "llm.temperature": "-1"})
    assert result.exit_code == 2
    assert "[twilio] auth_token is required" in result.output
    assert "[llm] temperature = -1.0 must be 0 or more" in result.output
    assert "ok " not in result.output


def test_a_crashing_check_becomes_a_fail_line_and_the_rest_still_run(caplog):
    def broken():
        raise RuntimeError(f"boom with {LLM_KEY}")
    with caplog.at_level("DEBUG", logger="mediabot.ops.checks"):
        lines = _safely("llm", [LLM_KEY], broken)
    assert [line.render() for line in lines] == [
        "FAIL llm: the check itself failed (RuntimeError); run `mediabot -v check` for details"]
    assert "boom with ***" in caplog.text and LLM_KEY not in caplog.text
