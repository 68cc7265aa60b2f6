#!/usr/bin/env bash
# The Meltano plugin's checks, as the build runs them after the jar is packaged: lint, format,
# types, and the tests with real Meltano against a real Statehouse started from the jar.
#
#   bash clients/meltano/ci.sh <statehouse jar> <scratch dir>
#
# The plugin's pinned environment (requirements-dev.txt, with hashes) lives in a virtualenv under
# ~/.cache/statehouse, rebuilt only when the lock or the Python changes: it is built in a staging
# directory and moved into place once complete. The plugin itself is installed from this checkout
# into the scratch directory on every run, so the cached environment never holds a stale copy.
set -euo pipefail
jar=${1:?usage: ci.sh <statehouse jar> <scratch dir>}
scratch=${2:?usage: ci.sh <statehouse jar> <scratch dir>}
here=$(cd "$(dirname "$0")" && pwd)
jar=$(cd "$(dirname "$jar")" && pwd)/$(basename "$jar")
mkdir -p "$scratch"
scratch=$(cd "$scratch" && pwd)

python=""
for candidate in python3.11 python3.12 python3.13 python3.10 python3; do
  if command -v "$candidate" >/dev/null 2>&1 \
      && "$candidate" -c 'import sys; sys.exit(not (3, 10) <= sys.version_info[:2] < (3, 14))' 2>/dev/null; then
    python=$candidate
    break
  fi
done
if [ -z "$python" ]; then
  echo "ci.sh: the Meltano plugin's tests need Python 3.10-3.13 with venv and pip" >&2
  exit 1
fi

cache=${STATEHOUSE_CACHE:-$HOME/.cache/statehouse}
venv=$cache/meltano-venv
key=$( (cat "$here/requirements-dev.txt"; "$python" -c 'import sys; print(sys.version)') | sha256sum | cut -d' ' -f1)
if [ "$(cat "$venv/.lock-key" 2>/dev/null)" != "$key" ]; then
  echo "Building the Meltano plugin's environment in $venv ..."
  mkdir -p "$cache"
  staging=$venv.partial.$$
  rm -rf "$staging"
  "$python" -m venv "$staging"
  "$staging/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
    --require-hashes -r "$here/requirements-dev.txt"
  echo "$key" >"$staging/.lock-key"
  rm -rf "$venv"
  mv "$staging" "$venv"
fi
# Console scripts keep the staging path in their first line: everything runs as `python -m`.
py=$venv/bin/python

site=$scratch/site
rm -rf "$site"
"$py" -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation \
  --target "$site" "$here"
export PYTHONPATH=$site

cd "$here"
"$py" -m ruff check .
"$py" -m ruff format --check .
"$py" -m mypy
"$py" -m pytest --statehouse-jar="$jar" --basetemp="$scratch/pytest" -p no:cacheprovider "${@:3}"
