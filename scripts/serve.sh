#!/usr/bin/env bash
# `npm run serve`: installs what is missing, builds, and starts the service. When neither REDIS_URLS
# nor REDIS_URL is set it uses a local redis-server on 127.0.0.1:${LOCAL_REDIS_PORT:-6379}, starting
# one (stopped again when the service stops) if nothing answers there.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
npm run --silent build

redis_pid=""
if [ -z "${REDIS_URLS:-}" ] && [ -z "${REDIS_URL:-}" ]; then
  port="${LOCAL_REDIS_PORT:-6379}"
  export REDIS_URLS="redis://127.0.0.1:${port}"
  if ! redis-cli -p "$port" ping >/dev/null 2>&1; then
    mkdir -p .redis-dev
    redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$PWD/.redis-dev" --loglevel warning &
    redis_pid=$!
    for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    echo "serve: started a local redis-server on 127.0.0.1:${port}" >&2
  fi
fi

node dist/server.js &
service_pid=$!
stop() { kill -TERM "$service_pid" 2>/dev/null || true; }
trap stop INT TERM
status=0
wait "$service_pid" || status=$?
# `wait` returns early when a trapped signal arrives; wait for the drain to finish.
wait "$service_pid" 2>/dev/null || true
[ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null || true
exit "$status"
