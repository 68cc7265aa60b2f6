#!/usr/bin/env bash
# The Meltano plugin's checks, as the build runs them after the jar is packaged: lint, format,
# types, and the tests with real Meltano against a real Statehouse started from the jar.
#
#   bash clients/meltano/ci.sh <statehouse jar> <scratch dir> [pytest arguments]
#
# The pinned environment and the plugin's installation are venv.sh's.
set -euo pipefail
jar=${1:?usage: ci.sh <statehouse jar> <scratch dir>}
scratch=${2:?usage: ci.sh <statehouse jar> <scratch dir>}
here=$(cd "$(dirname "$0")" && pwd)
jar=$(cd "$(dirname "$jar")" && pwd)/$(basename "$jar")
mkdir -p "$scratch"
scratch=$(cd "$scratch" && pwd)

. "$here/venv.sh"
meltano_venv "$scratch"

cd "$here"
"$py" -m ruff check .
"$py" -m ruff format --check .
"$py" -m mypy
# Two workers (pytest-xdist), each with a Statehouse of its own: in one process the tests keep
# about one core busy (Meltano's Python and theirs), and the build runs them after the JVM tests,
# when both cores are free (113 s against 178 s on 2 cores). `-n 0` runs them in one process.
"$py" -m pytest --statehouse-jar="$jar" --basetemp="$scratch/pytest" -p no:cacheprovider -n 2 "${@:3}"
