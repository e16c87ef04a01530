#!/bin/sh
# Joins REDIS_CLUSTER_NODES (space-separated host:port, masters first) into a Redis Cluster of
# masters with REDIS_CLUSTER_REPLICAS replicas each, once: if the nodes already know each other it
# does nothing, so it may run again. Each node gets REDIS_CLUSTER_WAIT_SECONDS (120) to answer.
# redis-cli takes the password from REDISCLI_AUTH.
# Used by the cluster overlay's Job and by docker-compose.yml's cluster profile.
set -eu
replicas="${REDIS_CLUSTER_REPLICAS:-1}"
wait_seconds="${REDIS_CLUSTER_WAIT_SECONDS:-120}"
addresses=""
for node in $REDIS_CLUSTER_NODES; do
  host="${node%:*}"
  port="${node##*:}"
  # Wait for the node to answer (its name resolves once its pod or container exists).
  tries=0
  until redis-cli -h "$host" -p "$port" ping 2>/dev/null | grep -q PONG; do
    tries=$((tries + 1))
    if [ "$tries" -ge "$wait_seconds" ]; then
      echo "redis-cluster-init: $node does not answer" >&2
      exit 1
    fi
    sleep 1
  done
  known="$(redis-cli -h "$host" -p "$port" cluster info | tr -d '\r' | sed -n 's/^cluster_known_nodes://p')"
  if [ "${known:-1}" -gt 1 ]; then
    echo "redis-cluster-init: $node already knows $known nodes: the cluster exists"
    exit 0
  fi
  # CLUSTER MEET takes addresses, not names.
  ip="$(getent hosts "$host" | awk '{ print $1; exit }')"
  addresses="$addresses ${ip:-$host}:$port"
done
# shellcheck disable=SC2086 # one argument per address
redis-cli --cluster create $addresses --cluster-replicas "$replicas" --cluster-yes
