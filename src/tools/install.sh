#!/usr/bin/env bash
# Installs the tools the tests point at Statehouse (see package.json) into a cache directory
# outside the repository, from the npm registry, verified against package-lock.json. Runs at
# every test build and does nothing while the cache holds this very lock file.
set -euo pipefail
cache=${1:?usage: install.sh <cache-dir>}
here=$(cd "$(dirname "$0")" && pwd)

cmp -s "$here/package-lock.json" "$cache/package-lock.json" && [ -d "$cache/node_modules" ] && exit 0
if ! command -v npm >/dev/null 2>&1; then
  echo "npm was not found: the tests that run the OpenAPI linter will be skipped." >&2
  echo "Install Node.js 20.19+ with npm to run them." >&2
  exit 0
fi

echo "Installing the test tools into $cache ..."
staging="$cache.partial.$$"
rm -rf "$staging"
mkdir -p "$staging"
cp "$here/package.json" "$here/package-lock.json" "$staging/"
(cd "$staging" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
rm -rf "$cache"
mv "$staging" "$cache"
