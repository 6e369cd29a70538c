#!/usr/bin/env bash
# Creates (once) the Python environment that tests/provider_types.rs uses to
# check our wire formats against the providers' official SDK types: a venv at
# target/python-env with tests/python/requirements.txt installed.
#
# Idempotent: a stamp file records the hash of the requirements, so a later
# run with unchanged requirements does nothing. The last line printed on
# stdout is the venv's python; everything else goes to stderr.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
requirements="$root/tests/python/requirements.txt"
venv="$root/target/python-env"
python="$venv/bin/python"
stamp="$venv/.requirements.sha256"

if ! command -v python3 >/dev/null 2>&1; then
    echo "python-env: python3 is not installed; install Python 3.11 or later, with pip" >&2
    exit 1
fi
# google-genai needs 3.11, the other SDKs 3.10.
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "python-env: $(python3 --version 2>&1) is too old; the pinned SDKs need Python 3.11 or later" >&2
    exit 1
fi

hash_of() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d' ' -f1
    else
        python3 -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' "$1"
    fi
}

wanted="$(hash_of "$requirements")"
if [[ -x "$python" && -f "$stamp" && "$(cat "$stamp")" == "$wanted" ]]; then
    echo "$python"
    exit 0
fi

# Serialize concurrent runs (two test binaries, say) where flock exists.
mkdir -p "$root/target"
if command -v flock >/dev/null 2>&1; then
    exec 9>"$root/target/python-env.lock"
    flock 9
    # Another run may have finished the job while this one waited.
    if [[ -x "$python" && -f "$stamp" && "$(cat "$stamp")" == "$wanted" ]]; then
        echo "$python"
        exit 0
    fi
fi

echo "python-env: setting up $venv" >&2
rm -f "$stamp"
if [[ ! -x "$python" ]]; then
    rm -rf "$venv"
    if ! python3 -m venv "$venv" >&2; then
        # Debian and Ubuntu ship venv's pip bootstrap (ensurepip) apart, in
        # python3-venv; virtualenv, from PyPI, brings its own pip instead.
        echo "python-env: 'python3 -m venv' failed; trying virtualenv from PyPI" >&2
        rm -rf "$venv"
        bootstrap="$root/target/python-env-bootstrap"
        python3 -m pip install --disable-pip-version-check --quiet --target "$bootstrap" virtualenv >&2
        PYTHONPATH="$bootstrap" python3 -m virtualenv --quiet "$venv" >&2
    fi
fi
"$python" -m pip install --disable-pip-version-check --quiet --upgrade pip >&2
"$python" -m pip install --disable-pip-version-check --quiet -r "$requirements" >&2
echo "$wanted" >"$stamp"
echo "python-env: ready" >&2
echo "$python"
