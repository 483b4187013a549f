# Sourced by serve.sh and test.sh: make .venv and install mediabot into it (editable, with
# the extras in $1, e.g. "[test]") only when needed. A stamp per extras,
# .venv/.mediabot-install<extras>, holds what that install was made from (pyproject.toml's
# hash and Python's version); while it matches, nothing is installed, so a start is quick
# and prints nothing. An install with extras also counts as the plain one.
ensure_venv() {
    local extras=${1:-}
    local python=${PYTHON:-python3}
    if [ ! -x .venv/bin/python ]; then
        "$python" -m venv .venv
        .venv/bin/python -m pip install --quiet --upgrade pip
    fi
    local want
    want="$(sha256sum pyproject.toml | cut -d' ' -f1) $(.venv/bin/python -V 2>&1)"
    if [ "$(cat ".venv/.mediabot-install$extras" 2>/dev/null)" != "$want" ]; then
        # setuptools' deprecation notices are for packagers, not for someone starting mediabot
        PYTHONWARNINGS=ignore PIP_DISABLE_PIP_VERSION_CHECK=1 \
            .venv/bin/python -m pip install --quiet -e ".$extras"
        printf '%s\n' "$want" > ".venv/.mediabot-install$extras"
        printf '%s\n' "$want" > .venv/.mediabot-install
    fi
}
