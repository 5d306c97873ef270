#!/usr/bin/env bash
# Measures the scale-out pipeline on one machine: weft-devstack (kfake +
# the ClickHouse engine), one ingest role, N process roles and one query
# role; weft-bench loads calls at ingest and waits until the query role
# serves them all.
#   scripts/bench-scaleout.sh [processors] [calls]
set -euo pipefail
cd "$(dirname "$0")/.."
PROCESSORS="${1:-1}"
CALLS="${2:-100000}"
WORK="$(mktemp -d)"
ROLES=()
stop() {
  # Roles first, so processors do not report the broker vanishing.
  [ "${#ROLES[@]}" -gt 0 ] && kill "${ROLES[@]}" 2>/dev/null && wait "${ROLES[@]}" 2>/dev/null
  kill $(jobs -p) 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap stop EXIT

scripts/install-libchdb.sh >/dev/null
go build -o "$WORK/weft" ./cmd/weft
go build -o "$WORK/weft-bench" ./cmd/weft-bench
go build -o "$WORK/weft-devstack" ./cmd/weft-devstack

"$WORK/weft-devstack" --dir "$WORK/stack" --topics weft.calls:12,weft.calls.dlq:1 > "$WORK/stack.out" 2> "$WORK/stack.err" &
for _ in $(seq 100); do grep -q CLICKHOUSE= "$WORK/stack.out" 2>/dev/null && break; sleep 0.2; done
KAFKA="$(sed -n 's/^KAFKA=//p' "$WORK/stack.out")"
DSN="$(sed -n 's/^CLICKHOUSE=//p' "$WORK/stack.out")/weft"

KEY="$("$WORK/weft" keys create --clickhouse-dsn "$DSN" --entity bench | tail -n 1)"
common=(--kafka-brokers "$KAFKA" --clickhouse-dsn "$DSN" --otlp-grpc-listen "" --log-level warn)
"$WORK/weft" serve --roles ingest --listen 127.0.0.1:16345 --data-dir "$WORK/ingest" "${common[@]}" > /dev/null &
ROLES+=($!)
for i in $(seq "$PROCESSORS"); do
  "$WORK/weft" serve --roles process --listen "127.0.0.1:1635$i" --data-dir "$WORK/process$i" "${common[@]}" > /dev/null &
  ROLES+=($!)
done
"$WORK/weft" serve --roles query --listen 127.0.0.1:16347 --data-dir "$WORK/query" "${common[@]}" > /dev/null &
ROLES+=($!)
for port in 16345 16347; do
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" > /dev/null && break; sleep 0.2; done
done

echo "scale-out: $PROCESSORS processor(s), $CALLS calls"
"$WORK/weft-bench" calls --url http://127.0.0.1:16345 --key "$KEY" --calls "$CALLS" \
  --project bench/scale --visible-url http://127.0.0.1:16347
