"""What a household's texts cost a real llama-server: reuse of its KV cache (issue 20), the
cold prompt and a household of three on one slot or a slot each (issue 31).

For each mediabot tree given (``--baseline REV`` against this checkout, or ``--source
label=DIR``; default: this checkout alone) and each variant, a fresh llama-server (built once
and cached, see ``bench/llama_setup.py``) serves the model ``--model`` names (``gemma``:
Gemma 3 270M, the default; ``smollm2``: SmolLM2-135M-Instruct, no sliding-window attention)
with Qwen2.5's tool template (``--jinja --chat-template-file``; SmolLM2 speaks the same ChatML
markup, ``<|im_start|>``, and its own template has no tools), ``-c 8192 --parallel 1
--cache-reuse 256`` and, for Gemma, ``--swa-full`` (Gemma 3 uses sliding-window attention;
without a full-size SWA cache the server may not reuse at all: ``--swa both`` measures it off
too). A child process
(``bench/cache_driver.py``, with that tree first on PYTHONPATH) holds the 30 texts of
``bench/household_script.py`` through the real engine, the simulated library and an injected
clock. Between them, a recording proxy (``bench/cache_proxy.py``) keeps every request and the
server's ``timings``. Afterwards each text's first request is read again from scratch
(``bench/cold_prompt.py``: the cold prompt, its parts by the server's ``/tokenize``, and the
time to read it), and consecutive requests are compared (``bench/prefix_diff.py``).

Variants (``--variant``, repeatable; default the six below):

- ``solo-20`` / ``solo-8`` (any ``solo-N``): Sam, an admin, sends the 30 texts, with
  ``[history] max_messages`` 20 (the default a household gets) or 8 (as issue 20 measured);
- ``household``: the same texts sent by three members in turn (Sam the admin, Alex a member,
  Lucía a member who reads Spanish) on the one slot, at 20 messages, with llama-server's
  host-memory prompt cache (its default, or ``--cache-ram``);
- ``household-no-ram``: the same with ``--cache-ram 0``, as older llama.cpp builds and servers
  that keep one prompt per slot behave;
- ``household-slots`` / ``household-slots-no-ram``: the household with ``--parallel 3
  --kv-unified`` (a slot per member; mediabot names each member's slot, ``id_slot``), with
  and without the host-memory cache. A run's ``slots`` says which slot each member's
  requests named and how many llama-server's log says it gave by id;
- ``household-pN`` (e.g. ``household-p4``, llama-server's own default of 4 slots): the
  household on N slots of one KV buffer; any household variant may end in ``-no-idle``
  (``--no-cache-idle-slots``: idle slots keep their prompt) after ``-no-ram``.

What the household waits for, per text (each variant's ``figures``): model requests
(``requests_per_text``), tokens read (``tokens_read_per_text_mean``: the mean over texts of
their requests' ``prompt_n``), tokens written (``tokens_written_per_text_mean``, of
``predicted_n``: 1 a request with ``--scripted-replies``; the model's own reply, at most N
tokens, with ``--written-replies N``) and the server's own seconds
(``server_seconds_per_text_mean``: ``prompt_ms`` + ``predicted_ms``; wall-clock on a shared
machine, so noisy, where the token counts and shares are not).

``--baseline REV`` exports REV (``git archive``: a plain tree in a temporary directory, no
git worktree to clean up if the run is killed) and runs it as ``baseline`` beside this
checkout as ``current``. Checkouts are interleaved within every variant of every round
(order reversed in odd rounds), so machine noise hits both alike; ``compare`` gives each
figure's median over the rounds and the ratio current/baseline.

Prints JSON: ``figures`` (per checkout and variant, the median of each figure over the
rounds), ``compare``, per run a ``summary`` (the reused share at a text's first request,
after a tool result and overall; new tokens per text; the cold prompt, its parts, the
schemas' bytes and tokens and the cold read time; for a household, the same at texts that
follow another member's; the issue's targets) and the detail (rows, texts, cold reads,
prefix diagnosis); llama-server's CPU seconds, the driver's (the load generator: engine,
simulated library, SQLite) and the bench's own (proxy and analysis).

    .venv/bin/python bench/prompt_cache.py [--baseline 4879028] [--rounds 1]
        [--variant solo-20 --variant household ...] [--swa on|off|both] [--texts 30]
        [--cold-sample 10] [--scripted-replies | --written-replies 64]
        [--model gemma|smollm2] [--out result.json]
"""

import argparse
import io
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from urllib.request import urlopen

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.cache_proxy import Proxy
from bench.cache_summary import TARGETS, compare, figures, summarise, tool_results
from bench.cold_prompt import cold_figures
from bench.harness import CLOCK_TICKS, ROOT, free_port, loadavg
from bench.household_script import HOUSEHOLD, MEMBERS, TEXTS
from bench.llama_setup import DEFAULT_MODEL, MODELS, ensure_model, ensure_server
from bench.prefix_diff import diagnose, tally

TEMPLATE = ROOT / "tests" / "templates" / "Qwen-Qwen2.5-7B-Instruct.jinja"
DRIVER = Path(__file__).resolve().parent / "cache_driver.py"
VARIANTS = ("solo-20", "solo-8", "household", "household-no-ram", "household-slots",
            "household-slots-no-ram")
HOUSEHOLD_VARIANT = re.compile(r"household(-slots|-p(\d+))?(-no-ram)?(-no-idle)?")
HOUSEHOLD_MESSAGES = 20


def variant_plan(name: str, cache_ram: int | None, parallel: int = 1) -> dict:
    """What a variant sets: members, window, the texts as (member, minutes, text, call),
    llama-server's ``--cache-ram`` (None: the server's default), its slots (``--parallel``;
    a ``-slots`` variant gives each member one, ``-pN`` N) and whether idle slots keep their
    prompt (``idle``: False adds ``--no-cache-idle-slots``)."""
    solo = re.fullmatch(r"solo-(\d+)", name)
    if solo:
        return {"members": MEMBERS[:1], "max_messages": int(solo.group(1)),
                "texts": [(0, *entry) for entry in TEXTS], "cache_ram": cache_ram,
                "parallel": parallel, "idle": True}
    house = HOUSEHOLD_VARIANT.fullmatch(name)
    if house:
        slots = (int(house.group(2)) if house.group(2) else len(MEMBERS)) if house.group(1) \
            else parallel
        return {"members": MEMBERS, "max_messages": HOUSEHOLD_MESSAGES,
                "texts": list(HOUSEHOLD), "cache_ram": 0 if house.group(3) else cache_ram,
                "parallel": slots, "idle": not house.group(4)}
    raise argparse.ArgumentTypeError(f"unknown variant {name!r}: solo-N, or household with "
                                     "-slots or -pN, then -no-ram, then -no-idle (each "
                                     "optional)")


def server_argv(binary: Path, model: Path, port: int, swa_full: bool, repack: bool,
                cache_ram: int | None = None, extra: tuple = (), parallel: int = 1,
                idle: bool = True) -> list:
    """Several slots share one KV buffer (``--kv-unified``), as llama-server's default of 4
    does, so each slot may hold a whole prompt of the 8,192 tokens. ``swa_full`` only for a
    model with sliding-window attention."""
    argv = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port),
            "--jinja", "--chat-template-file", str(TEMPLATE), "-c", "8192",
            "--parallel", str(parallel), *(["--kv-unified"] if parallel > 1 else []),
            "--cache-reuse", "256", "--slots", "--no-webui"]
    argv += ([] if cache_ram is None else ["--cache-ram", str(cache_ram)])
    argv += ([] if idle else ["--no-cache-idle-slots"]) + list(extra)
    return argv + (["--swa-full"] if swa_full else []) + ([] if repack else ["--no-repack"])


def start_server(argv: list, log: Path, timeout: float = 180.0) -> subprocess.Popen:
    """llama-server, once /health says ok; its log tail in the error when it dies or stalls."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log.open("wb"))
    port = argv[argv.index("--port") + 1]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
                if response.status == 200:
                    return proc
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError(f"llama-server did not start:\n{log.read_text()[-2000:]}")


def stop_server(proc: subprocess.Popen, grace: float = 30.0) -> None:
    """SIGTERM, then SIGKILL when it is still busy (mid-answer) after ``grace`` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def own_cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def drive(source: Path, plan: dict, timeout: float) -> tuple[list[dict], float]:
    """The driver child against ``source``: its per-text lines and its CPU seconds. Its
    stderr on failure; an error when it imported mediabot from anywhere but ``source``."""
    env = {**os.environ, "PYTHONPATH": str(source)}
    before = own_cpu(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, str(DRIVER)], input=json.dumps(plan), text=True,
                          capture_output=True, env=env, cwd=plan["workdir"], timeout=timeout,
                          check=False)
    cpu = own_cpu(resource.RUSAGE_CHILDREN) - before
    if done.returncode:
        raise RuntimeError(f"driver failed on {source}:\n{done.stderr[-3000:]}")
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    imported = Path(lines[0]["mediabot"]).resolve()
    if not imported.is_relative_to(source.resolve()):
        raise RuntimeError(f"the driver imported {imported}, not the tree {source}")
    return lines[1:], cpu


def one_run(label: str, source: Path, variant: str, swa_full: bool, args, tmp: Path) -> dict:
    binary, model = ensure_server(_note), ensure_model(_note, args.model)
    setup = variant_plan(variant, args.cache_ram, args.parallel)
    texts_wanted = setup["texts"][:args.texts]
    port, started, bench_cpu = free_port(), time.monotonic(), own_cpu(resource.RUSAGE_SELF)
    log = Path(args.logs or tmp) / f"llama-{label}-{variant}-{swa_full}.log"
    server = start_server(server_argv(binary, model, port, swa_full, args.repack,
                                      setup["cache_ram"], tuple(args.server_arg),
                                      setup["parallel"], setup["idle"]), log)
    base = f"http://127.0.0.1:{port}"
    try:
        with Proxy(port, scripted=args.scripted_replies, written=args.written_replies) as proxy:
            plan = {"proxy": proxy.url, "texts": texts_wanted, "timeout": 900,
                    "members": [dict(zip(("phone", "name", "role", "language"), m,
                                         strict=True)) for m in setup["members"]],
                    "reply_tokens": args.reply_tokens, "max_messages": setup["max_messages"],
                    "workdir": str(tmp),
                    "database": str(tmp / f"{label}-{variant}-{time.time_ns()}.db")}
            texts, driver_cpu = drive(source, plan, timeout=args.run_timeout)
        rows, requests = proxy.recorder.rows, proxy.recorder.requests
        if args.requests:
            Path(f"{args.requests}.{label}-{variant}-{swa_full}.json").write_text(
                json.dumps(requests))
        breaks = diagnose(base, requests, rows)
        cold = cold_figures(base, requests, rows, args.cold_sample)   # last: it empties the slot
        server_cpu = cpu_seconds(server.pid)
    finally:
        stop_server(server)
    return {"label": label, "source": str(source), "commit": _commit(source, label, args),
            "model": args.model, "variant": variant, "swa_full": swa_full,
            "max_messages": setup["max_messages"], "cache_ram": setup["cache_ram"],
            "parallel": setup["parallel"], "idle_slots_cached": setup["idle"],
            "slots": slots_used(rows, log), "scripted_replies": args.scripted_replies,
            "written_replies": args.written_replies,
            "server_cpu_seconds": round(server_cpu, 2),
            "driver_cpu_seconds": round(driver_cpu, 2),
            "bench_cpu_seconds": round(own_cpu(resource.RUSAGE_SELF) - bench_cpu, 2),
            "wall_seconds": round(time.monotonic() - started, 1),
            "summary": summarise(rows, texts, breaks, variant, cold), "breaks": tally(breaks),
            "tool_results": tool_results(requests), "cold": cold, "rows": rows,
            "texts": texts, "prefix": breaks}


def slots_used(rows: list[dict], log: Path) -> dict:
    """Which slot each member's requests named (``id_slot``, None: left to the server) and
    how many requests llama-server's log says it gave the slot they named."""
    named: dict[str, list] = {}
    for row in rows:
        slot = row.get("id_slot")
        if slot not in named.setdefault(str(row.get("member", 0)), []):
            named[str(row.get("member", 0))].append(slot)
    text = log.read_text(errors="replace") if log.exists() else ""
    return {"named_by_member": named, "selected_by_id": text.count("selected slot by id")}


def export_revision(revision: str, target: Path) -> str:
    """``revision`` of this repository as a plain tree in ``target``; its short commit id."""
    commit = _git("rev-parse", "--short", f"{revision}^{{commit}}")
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", commit],
                             capture_output=True, check=True).stdout
    target.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")
    return commit


def _git(*argv: str, cwd: Path = ROOT) -> str:
    done = subprocess.run(["git", "-C", str(cwd), *argv], capture_output=True, text=True,
                          check=False)
    return done.stdout.strip()


def _commit(source: Path, label: str, args) -> str | None:
    """The baseline's exported commit, else the checkout's (``-dirty`` with local edits)."""
    if label == "baseline" and args.baseline_commit:
        return args.baseline_commit
    return _git("describe", "--always", "--dirty", "--abbrev=7", cwd=source) or None


def _note(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", metavar="REV", help="a git revision of this repository "
                        "(e.g. main, 4879028) to run as 'baseline' beside this checkout")
    parser.add_argument("--source", action="append", default=[],
                        help="label=DIR of a mediabot checkout (repeatable; default this one)")
    parser.add_argument("--variant", action="append", default=[],
                        help=f"solo-N, or household, with -slots or -pN, then -no-ram, then "
                        f"-no-idle, e.g. household-p4-no-idle (repeatable; default "
                        f"{' '.join(VARIANTS)})")
    parser.add_argument("--max-messages", type=int, action="append", default=[],
                        help="the same as --variant solo-N (as issue 20's runs were given)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--swa", choices=("on", "off", "both"), default="on")
    parser.add_argument("--texts", type=int, default=len(TEXTS))
    parser.add_argument("--reply-tokens", type=int, default=48,
                        help="[llm] max_reply_tokens: bounds the tiny model's rambling")
    parser.add_argument("--cold-sample", type=int, default=10, help="how many texts' first "
                        "requests to read again from scratch, evenly spread (default 10; "
                        "every first request is tokenized for the cold prompt's size)")
    parser.add_argument("--scripted-replies", action="store_true",
                        help="the server reads every prompt but writes one token; answers "
                        "are the script's (bench/cache_proxy.py): fast, and the same work "
                        "in every run")
    parser.add_argument("--written-replies", type=int, metavar="N", help="the model writes "
                        "every reply, at most N tokens (n_predict), and the person gets it; "
                        "the script's calls stay scripted (bench/cache_proxy.py)")
    parser.add_argument("--model", choices=sorted(MODELS), default=DEFAULT_MODEL,
                        help="the model llama-server serves (bench/llama_setup.py installs "
                        f"it; default {DEFAULT_MODEL})")
    parser.add_argument("--repack", action="store_true")
    parser.add_argument("--requests", help="also write every recorded request (messages, "
                        "tools) to REQUESTS.<label>-<variant>-<swa>.json")
    parser.add_argument("--run-timeout", type=float, default=3600)
    parser.add_argument("--logs", help="keep llama-server's logs in this directory")
    parser.add_argument("--cache-ram", type=int, help="llama-server's --cache-ram MiB for the "
                        "variants that do not set it (0 turns off its host-memory prompt "
                        "cache; see docs/benchmarks.md)")
    parser.add_argument("--parallel", type=int, default=1, help="llama-server's slots "
                        "(--parallel) for the variants that do not set them (default 1; the "
                        "-slots variants give each member one)")
    parser.add_argument("--server-arg", action="append", default=[],
                        help="one more llama-server argument (repeatable), e.g. "
                        "--server-arg=-lv --server-arg=4 for its slot traces")
    parser.add_argument("--out", help="also write the JSON to this file")
    args = parser.parse_args(argv)
    if args.scripted_replies and args.written_replies:
        parser.error("--scripted-replies and --written-replies are two ways to answer: "
                     "choose one")
    args.variants = args.variant + [f"solo-{n}" for n in args.max_messages] or list(VARIANTS)
    for name in args.variants:
        try:
            variant_plan(name, None)
        except argparse.ArgumentTypeError as exc:
            parser.error(str(exc))
    args.sources = [(s.split("=", 1)[0], Path(s.split("=", 1)[1]).resolve()) if "=" in s
                    else (Path(s).name, Path(s).resolve()) for s in args.source]
    args.baseline_commit = None
    return args


def run_all(args, tmp: Path, done=lambda runs: None) -> list[dict]:
    sources = list(args.sources)
    if args.baseline:
        args.baseline_commit = export_revision(args.baseline, tmp / "baseline")
        sources = [("baseline", tmp / "baseline")] + (sources or [("current", ROOT)])
    sources = sources or [("current", ROOT)]
    args.labels = [label for label, _ in sources]
    swa = {"on": [True], "off": [False], "both": [True, False]}[args.swa]
    if not MODELS[args.model].swa:   # nothing to make full-size: one run, without the flag
        swa = [False]
    runs = []
    for round_no in range(args.rounds):
        for variant in args.variants:
            order = sources if round_no % 2 == 0 else sources[::-1]
            for label, source in order:
                for swa_full in swa:
                    _note(f"round {round_no + 1}: {variant}, {label} ({source}), "
                          f"swa_full={swa_full}")
                    runs.append(one_run(label, source, variant, swa_full, args, tmp))
                    done(runs)
    return runs


def report(runs: list[dict], args, load_before: list[float]) -> str:
    """The JSON the bench prints: figures, comparison, per-run summaries and detail."""
    table = figures(runs)
    return json.dumps({
        "bench": "prompt_cache", "model": args.model, "targets": TARGETS,
        "complete": len(runs) == args.planned,
        "machine": {"cpus": len(os.sched_getaffinity(0)), "loadavg_before": load_before,
                    "loadavg_after": loadavg()},
        "bench_cpu_seconds": round(own_cpu(resource.RUSAGE_SELF), 2),
        "figures": table, "compare": compare(table, args.labels),
        "summary": [{"label": r["label"], "commit": r["commit"], "variant": r["variant"],
                     "swa_full": r["swa_full"], "max_messages": r["max_messages"],
                     "cache_ram": r["cache_ram"], "parallel": r["parallel"],
                     "idle_slots_cached": r["idle_slots_cached"], "slots": r["slots"],
                     "scripted_replies": r["scripted_replies"],
                     "written_replies": r["written_replies"],
                     "wall_seconds": r["wall_seconds"],
                     "server_cpu_seconds": r["server_cpu_seconds"],
                     "driver_cpu_seconds": r["driver_cpu_seconds"],
                     "bench_cpu_seconds": r["bench_cpu_seconds"],
                     **r["summary"], "breaks": r["breaks"],
                     "tool_results": r["tool_results"]} for r in runs],
        "runs": runs}, indent=1)


def _stop(signum, frame) -> None:
    """SIGTERM (``timeout``, a killed job) unwinds like Ctrl-C: each run's ``finally`` stops
    its llama-server and the temporary tree is removed."""
    raise SystemExit(128 + signum)


def main(argv=None) -> None:
    """Runs every variant; with ``--out``, the file is rewritten after each run (``complete``
    false until the last), so a long run stopped early keeps what it measured."""
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)
    load_before = loadavg()
    sources = (1 if args.baseline else 0) + (len(args.source) or 1)
    swa_runs = 2 if args.swa == "both" and MODELS[args.model].swa else 1
    args.planned = args.rounds * len(args.variants) * sources * swa_runs

    def save(runs: list[dict]) -> None:
        if args.out:
            Path(args.out).write_text(report(runs, args, load_before) + "\n")

    with tempfile.TemporaryDirectory(prefix="prompt-cache-") as tmp:
        runs = run_all(args, Path(tmp), save)
    print(report(runs, args, load_before))


if __name__ == "__main__":
    main()
