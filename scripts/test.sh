#!/usr/bin/env bash
# `npm test`: installs what is missing, then runs every tap test. Each test file starts its own
# redis-server processes on free ports, so nothing needs to be running beforehand.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh --tests
# Type errors fail the run too (tap runs the TypeScript without checking types).
node_modules/.bin/tsc --noEmit -p .
# The client library's dist/: what `@lock-service/client` resolves to outside this repository's tsconfig
# (the npm pack check).
node_modules/.bin/tsc -p clients/typescript
# Formatting (Prettier; npm run format fixes it) and lint (ESLint with typescript-eslint).
node_modules/.bin/prettier --check . >/dev/null
node_modules/.bin/eslint .
exec node_modules/.bin/tap "$@"
