#!/usr/bin/env bash
# `npm test`: installs what is missing, then runs every tap test. Each test file starts its own
# redis-server processes on free ports, so nothing needs to be running beforehand.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh --tests
# Type errors fail the run too (tap runs the TypeScript without checking types).
node_modules/.bin/tsc --noEmit -p .
# Formatting (Prettier; npm run format fixes it) and lint (ESLint with typescript-eslint).
node_modules/.bin/prettier --check . >/dev/null
node_modules/.bin/eslint .
exec node_modules/.bin/tap "$@"
