#!/usr/bin/env bash
# Runs one benchmark of the harness in benchmarks/src: ./benchmarks/run.sh <Name> [-Dseconds=5 -Drounds=3]
# Names: EngineBenchmark, StateBenchmark, LockBenchmark, MaterializerBenchmark, CoordinationBenchmark, SecurityBenchmark,
# MeltanoCycleBenchmark (-Dseconds=10 -Drounds=3 -DbackendCycles=5), InProcessKeeperBenchmark (-Dseconds=5 -Drounds=3),
# Soak (-Dminutes=10 -Drate=60 -Dwindow=60), ScaleBenchmark (-Dids=1000000 -Dversions=10),
# TransferBenchmark (-Xmx384m -Dids=1000000), WatchBenchmark (-Dstreams=1000 -Dwrites=500),
# ProfileBenchmark (-Dseconds=10: where a request's CPU goes, by thread, layer and statement)
# -Dsmoke=true runs every phase of one for a fraction of a second: to see that it runs, not to measure.
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: benchmarks/run.sh <BenchmarkName> [-Dname=value ...]}
shift
./mvnw -q test-compile
./mvnw -q dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/benchmark-classpath.txt >/dev/null
exec java "$@" -cp "$PWD/target/test-classes:$PWD/target/classes:$(cat target/benchmark-classpath.txt)" \
  "io.statehouse.benchmarks.$name"
