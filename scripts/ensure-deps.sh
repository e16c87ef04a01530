#!/usr/bin/env bash
# Installs what the service and its tests need when it is missing: node modules (npm ci), Debian's
# redis-server and jq (the docs' examples); with --tests (npm test) also promtool (Debian's prometheus
# package: the tests check the alert rules and the dashboard's queries with it), gcc (the clock shim)
# and chromium (the test of GET /docs loads the page in it); with --bench (npm run bench) etcd-server, for the
# etcd scenario. Safe to run again: it only acts on what is missing or out of date.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "ensure-deps: npm ci" >&2
  npm ci --no-audit --no-fund >&2
fi

# apt_install COMMAND PACKAGES: install Debian's PACKAGES (one or more, space-separated) when COMMAND is not on the PATH.
apt_install() {
  local command="$1" package="$2" sudo=""
  command -v "$command" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else sudo="none"; fi
  fi
  if [ "$sudo" = none ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-deps: $command is missing and cannot be installed here; install $package and retry" >&2
    exit 1
  fi
  echo "ensure-deps: installing Debian's $package (for $command)" >&2
  $sudo apt-get update -qq >&2
  # shellcheck disable=SC2086 # PACKAGES may be several
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $package >&2
}

apt_install redis-server redis-server
# The README's and docs' examples read JSON with jq (test/docs/examples.test.ts runs them).
apt_install jq jq
# The bench's etcd scenario compares the service with etcd's lock API (scripts/bench.sh passes --bench).
if [ "${1:-}" = "--bench" ]; then
  apt_install etcd etcd-server
fi
# What only the tests need (scripts/test.sh passes --tests): npm run serve does without.
if [ "${1:-}" = "--tests" ]; then
  apt_install promtool prometheus
  # The tests build an LD_PRELOAD clock shim for redis-server (harness/clock-shim.c).
  apt_install cc gcc
  # test/http/api-docs.test.ts drives /usr/bin/chromium with playwright-core (which downloads no browser).
  apt_install chromium chromium
  # test/clients/python.test.ts: python3 runs the Python client's suite; an interpreter with venv, setuptools >= 61
  # and wheel builds it offline (--no-build-isolation). Debian's python3-pip brings python3-wheel. pyenv's lack wheel.
  py_builds='import venv, setuptools, wheel; assert int(setuptools.__version__.split(".")[0]) >= 61'
  if ! python3 -c "$py_builds" >/dev/null 2>&1 && ! /usr/bin/python3 -c "$py_builds" >/dev/null 2>&1; then
    apt_install python3-venv "python3 python3-venv python3-setuptools python3-pip" # python3-venv: not a command, so always
  fi
  # The Go client's suite (test/clients/go.test.ts): Debian's Go, offline (no module proxy).
  apt_install go golang-go
fi
