"""Every bench script still starts (``--help``) and every bench still runs at its smallest
setting, so none can rot unseen again (issue 27: two of them stopped starting when serve
began refusing the example's public_url, and one timed a failing send).

Each runs as the operator runs it, ``python bench/NAME.py ...`` from the checkout. A bench
that needs what is not on this machine (llama-server, a real model) is skipped, naming it.
"""

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.llama_setup import missing

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"

SMALLEST = {
    "webhook_load.py": ["--levels", "1", "--repeats", "1", "--requests", "20", "--warmup", "5",
                        "--users", "2", "--max-seconds", "5", "--drain-seconds", "20"],
    "start_memory.py": ["--rounds", "1", "--webhooks", "8", "--users", "2"],
    "context_scale.py": ["--small", "10", "--messages", "100", "--rounds", "1", "--turns", "2",
                         "--prune", "10"],
    "tool_payload.py": [],
    "prompt_cache.py": ["--variant", "solo-20", "--texts", "1", "--rounds", "1", "--swa", "on",
                        "--cold-sample", "1", "--scripted-replies"],
    "cold_offline.py": ["--model", "smollm2", "--variant", "solo-20"],
}
# Scripts that are a step of a bench above, run by it rather than on their own.
RUN_BY = {"load_client.py": "webhook_load.py", "cache_driver.py": "prompt_cache.py",
          "llama_setup.py": "prompt_cache.py"}


def scripts() -> list[str]:
    """The files of bench/ that run as a script (the rest are modules the scripts import)."""
    return sorted(path.name for path in BENCH.glob("*.py") if _runs_as_script(path))


def _runs_as_script(path: Path) -> bool:
    return any(isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)
               for node in ast.parse(path.read_text()).body)


def run(tmp_path: Path, name: str, *args: str, timeout: float = 120, keep=()):
    """The script as the operator runs it, with none of this machine's MEDIABOT_* settings
    but those in ``keep``; its temporary files go under ``tmp_path``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEDIABOT_") or k in keep}
    env["TMPDIR"] = str(tmp_path)
    return subprocess.run([sys.executable, str(BENCH / name), *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT, env=env, stdin=subprocess.DEVNULL)


def test_every_script_has_a_smallest_setting_or_is_run_by_one_that_has():
    assert set(scripts()) == set(SMALLEST) | set(RUN_BY)
    assert set(RUN_BY.values()) <= set(SMALLEST)


@pytest.mark.parametrize("name", scripts())
def test_each_script_answers_help(tmp_path, name):
    done = run(tmp_path, name, "--help", timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: {name} [-h]"), done.stdout
    assert list(tmp_path.iterdir()) == [], "--help did the work instead"


def report(done) -> dict:
    """The one JSON object a bench prints; it fails the test with the bench's stderr when the
    bench crashed. Exit 1 with a report is a target missed, which a tiny run may well do."""
    assert done.returncode in (0, 1) and done.stdout.lstrip().startswith("{"), done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout)


def test_webhook_load_smallest(tmp_path):
    out = report(run(tmp_path, "webhook_load.py", *SMALLEST["webhook_load.py"]))
    lost = out["targets"]["nothing_lost"]
    assert lost["acknowledged_200"] == 25 and lost["pass"], lost   # 5 warm-up + 20
    assert out["mediabot"]["inbox_by_status"] == {"done": 25}
    assert out["mediabot"]["worker_drained"] and out["mediabot"]["exit_codes"]["mediabot"] == 0
    assert out["mediabot"]["twilio_sent"] >= 2, "each user was answered"


def test_start_memory_smallest(tmp_path):
    out = report(run(tmp_path, "start_memory.py", *SMALLEST["start_memory.py"]))
    mediabot = out["rounds"][0]["mediabot"]
    assert (mediabot["acknowledged"], mediabot["errors"]) == (8, 0)
    assert mediabot["worker_drained"] and out["fakes"]["twilio_sent"] >= 2


def test_context_scale_smallest(tmp_path):
    out = report(run(tmp_path, "context_scale.py", *SMALLEST["context_scale.py"]))
    for size, rows in (("10", 10), ("100", 100)):
        figures = out["sizes"][size]
        assert figures["rows"]["messages"] == rows
        assert figures["unsent_replies"] == 0, "every timed turn sent its reply"
        assert len(figures["round_medians_ms"]) == 1
    assert out["prune_at_scale"]["pruned"] == 10


def test_tool_payload_smallest(tmp_path):
    out = report(run(tmp_path, "tool_payload.py"))
    for case in ("queue", "calendar", "lookup_series", "lookup_movies", "lookup_any"):
        assert 0 < out[case]["result_bytes"] < out[case]["raw_bytes"], case
    assert out["tool_schemas"]["tools"] > 0


def test_prompt_cache_smallest(tmp_path):
    absent = missing()
    if absent:
        pytest.skip("bench/prompt_cache.py needs " + " and ".join(absent))
    out = report(run(tmp_path, "prompt_cache.py", *SMALLEST["prompt_cache.py"], timeout=600,
                     keep=("MEDIABOT_BENCH_CACHE",)))   # where missing() looked
    texts = out["runs"][0]["texts"]
    assert len(texts) == 1 and texts[0]["reply"], texts


def test_cold_offline_smallest(tmp_path):
    absent = missing("smollm2")
    if absent:
        pytest.skip("bench/cold_offline.py needs " + " and ".join(absent))
    out = report(run(tmp_path, "cold_offline.py", *SMALLEST["cold_offline.py"], timeout=300,
                     keep=("MEDIABOT_BENCH_CACHE",)))   # where missing() looked
    (solo,) = out["current"]
    assert solo["variant"] == "solo-20" and len(solo["first_requests"]) == 29
    assert 0 < solo["tools_block_median"] < solo["total_median"]
