#!/usr/bin/env bash
# The plugin's benchmark (issue #22) in its pinned environment, against a Statehouse it starts from
# the jar on the embedded default:
#
#   bash clients/meltano/benchmarks/run.sh <statehouse jar> [--rounds 3 --cycles 10 --runs 5 ...]
#
# The flags are `python -m benchmarks --help`'s; the defaults are a smoke run. The figures go to
# stdout as Markdown. The scratch directory (Statehouse's data and log, the Meltano project) is
# removed after a run that succeeded and kept, with its path printed, after one that failed.
set -euo pipefail
jar=${1:?usage: run.sh <statehouse jar> [benchmark flags]}
here=$(cd "$(dirname "$0")/.." && pwd)
jar=$(cd "$(dirname "$jar")" && pwd)/$(basename "$jar")
scratch=$(mktemp -d -t meltano-bench.XXXXXX)

. "$here/venv.sh"
meltano_venv "$scratch" >&2

cd "$here"
if "$py" -m benchmarks --jar "$jar" --scratch "$scratch/run" "${@:2}"; then
  rm -rf "$scratch"
else
  status=$?
  echo "run.sh: the benchmark failed ($status); its scratch directory is $scratch" >&2
  exit "$status"
fi
