#!/usr/bin/env bash
# `npm run bench`: installs what is missing, builds the service, then runs every benchmark scenario
# (bench/run.ts) against its own redis-server and service processes on free loopback ports.
# Extra arguments go to bench/run.ts, e.g. `npm run bench -- --only uncontended --profile`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh --bench
npm run --silent build
exec node --import tsx bench/run.ts "$@"
