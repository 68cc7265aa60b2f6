#!/usr/bin/env bash
# Installs the Python tools the tests run (requirements.txt: every package pinned with its hashes)
# into a virtual environment outside the repository, from PyPI: <cache-dir>/<key>, the key being
# the start of the SHA-256 of requirements.txt, so that a changed file gets an environment of its
# own (PythonTools in the tests finds it the same way). Runs at every test build and does nothing
# while that environment is complete. A missing or too old Python fails the build: the tests that
# need these tools are never skipped.
set -euo pipefail
root=${1:?usage: install-python.sh <cache-dir>}
here=$(cd "$(dirname "$0")" && pwd)
python=${STATEHOUSE_PYTHON:-python3}

key=$(sha256sum "$here/requirements.txt" | cut -c1-16)
venv="$root/$key"
complete() { [ -f "$venv/.complete" ] && "$venv/bin/python" -c '' 2>/dev/null; }
complete && exit 0

if ! "$python" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
  echo "The tests need Python 3.10+ with venv and ensurepip as '$python' (or \$STATEHOUSE_PYTHON)" >&2
  echo "to install their Python tools (on Debian: apt-get install python3 python3-venv)." >&2
  exit 1
fi

mkdir -p "$root"
# One build installs, another one waits for it: a virtual environment cannot be moved into place
# after it is made, so it is made where it stays and counts once .complete is there.
exec 9>"$root/.lock"
flock 9
complete && exit 0
echo "Installing the Python test tools into $venv ..."
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --no-deps \
  --require-hashes --only-binary=:all: -r "$here/requirements.txt"
touch "$venv/.complete"
