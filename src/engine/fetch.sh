#!/usr/bin/env bash
# Installs chDB's libchdb.so (the embedded ClickHouse engine) into a cache directory outside the
# repository, from the npm registry, verified against the integrity hash in package-lock.json.
# Runs once: the build skips it while the library is in the cache.
set -euo pipefail
cache=${1:?usage: fetch.sh <cache-dir>}
here=$(cd "$(dirname "$0")" && pwd)
library="$cache/node_modules/@chdb/lib-linux-x64-gnu/libchdb.so"

[ -f "$library" ] && exit 0

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "The embedded engine is packaged for Linux x86_64 (glibc) only." >&2
  echo "Run Statehouse against a ClickHouse server instead: set STATEHOUSE_CLICKHOUSE_URL." >&2
  exit 1
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "npm was not found. The embedded ClickHouse engine (libchdb.so, a 180 MB download) is fetched from" >&2
  echo "the npm registry. Install Node.js 18+ with npm (https://nodejs.org or your package" >&2
  echo "manager, e.g. 'apt-get install nodejs npm'), or run against a ClickHouse server by" >&2
  echo "setting STATEHOUSE_CLICKHOUSE_URL." >&2
  exit 1
fi

echo "Fetching the embedded ClickHouse engine into $cache (once) ..."
staging="$cache.partial.$$"
rm -rf "$staging"
mkdir -p "$staging"
cp "$here/package.json" "$here/package-lock.json" "$staging/"
(cd "$staging" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
[ -f "$staging/node_modules/@chdb/lib-linux-x64-gnu/libchdb.so" ] || {
  echo "npm finished but libchdb.so is missing from $staging" >&2; exit 1; }
rm -rf "$cache"
mv "$staging" "$cache"
echo "Embedded engine ready: $library"
