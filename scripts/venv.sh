# Sourced by serve.sh and test.sh: make .venv and install mediabot into it (editable, with
# the extras in $1, e.g. "[test]") only when needed. A stamp per extras,
# .venv/.mediabot-install<extras>, holds what that install was made from (pyproject.toml's
# hash and Python's version); while it matches, nothing is installed, so a start is quick
# and prints nothing. An install with extras also counts as the plain one. $PYTHON picks the
# interpreter (default python3): older than 3.11 stops here with one line, before pip, and
# a .venv made by another Python version is made again.
ensure_venv() {
    local extras=${1:-}
    local python=${PYTHON:-python3}
    local version
    if ! version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null); then
        echo "error: cannot run $python; install Python 3.11 or newer, or name one: PYTHON=python3.12 $0" >&2
        exit 2
    fi
    case "$version" in
        3.1[1-9]|3.[2-9][0-9]|[4-9].*) ;;
        *) echo "error: mediabot needs Python 3.11 or newer; $python is $version. Install one (apt-get install python3.11 python3.11-venv) and name it: PYTHON=python3.11 $0" >&2
           exit 2 ;;
    esac
    local made
    made=$(sed -n 's/^version\(_info\)\? *= *\([0-9]*\.[0-9]*\).*/\2/p' .venv/pyvenv.cfg 2>/dev/null | head -1 || true)
    if [ -n "$made" ] && [ "$made" != "$version" ]; then
        echo "note: .venv was made by Python $made, not $python ($version); making it again" >&2
        rm -rf .venv
    fi
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
