#!/usr/bin/env bash
# Installs what the service and its tests need when it is missing: node modules (npm ci) and
# Debian's redis-server. Safe to run again: it only acts on what is missing or out of date.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "ensure-deps: npm ci" >&2
  npm ci --no-audit --no-fund >&2
fi

if ! command -v redis-server >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "ensure-deps: installing Debian's redis-server" >&2
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >&2
  elif command -v sudo >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    echo "ensure-deps: installing Debian's redis-server (sudo)" >&2
    sudo apt-get update -qq >&2
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >&2
  else
    echo "ensure-deps: redis-server is missing and cannot be installed here; install Redis 6.2+ and retry" >&2
    exit 1
  fi
fi
