# The Meltano plugin's pinned environment, shared by ci.sh and benchmarks/run.sh (sourced):
#
#   . venv.sh && meltano_venv <scratch dir>    # sets $py; exports PYTHONPATH
#
# The environment (requirements-dev.txt, with hashes) lives in a virtualenv under
# ~/.cache/statehouse, rebuilt only when the lock or the Python changes: it is built in a staging
# directory and moved into place once complete. The plugin itself is installed from this checkout
# into <scratch dir>/site on every call, so the cached environment never holds a stale copy.

meltano_venv() {
  local scratch=${1:?usage: meltano_venv <scratch dir>}
  local here python="" candidate cache venv key staging
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  for candidate in python3.11 python3.12 python3.13 python3.10 python3; do
    if command -v "$candidate" >/dev/null 2>&1 \
        && "$candidate" -c 'import sys; sys.exit(not (3, 10) <= sys.version_info[:2] < (3, 14))' 2>/dev/null; then
      python=$candidate
      break
    fi
  done
  if [ -z "$python" ]; then
    echo "The Meltano plugin's environment needs Python 3.10-3.13 with venv and pip" >&2
    return 1
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

  rm -rf "$scratch/site"
  "$py" -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation \
    --target "$scratch/site" "$here"
  export PYTHONPATH=$scratch/site
}
