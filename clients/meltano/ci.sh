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
"$py" -m pytest --statehouse-jar="$jar" --basetemp="$scratch/pytest" -p no:cacheprovider "${@:3}"
