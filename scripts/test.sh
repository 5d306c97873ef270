#!/usr/bin/env bash
# Runs Weft's whole test suite on a fresh machine: installs what the tests
# need (Go modules, the ClickHouse engine libchdb, an OpenTelemetry Collector
# built by ocb, the Weave TypeScript SDK from npm and Chromium for the web
# UI), checks
# formatting and vet, then runs every test with the race detector.
# Tests that need an engine fail, never skip, when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "==> go modules"
go mod download

if [ -x scripts/install-libchdb.sh ]; then
  echo "==> libchdb (ClickHouse engine for the scale-out tests)"
  WEFT_LIBCHDB="$(scripts/install-libchdb.sh | tail -n 1)"
  export WEFT_LIBCHDB
fi

if [ -x scripts/install-otelcol.sh ]; then
  echo "==> OpenTelemetry Collector (built by ocb) for the Collector e2e test"
  WEFT_OTELCOL="$(scripts/install-otelcol.sh | tail -n 1)"
  export WEFT_OTELCOL
fi

if [ -x scripts/install-helm.sh ]; then
  echo "==> helm (renders the chart for the chart tests)"
  WEFT_HELM="$(scripts/install-helm.sh | tail -n 1)"
  export WEFT_HELM
fi

if [ -x scripts/install-promtool.sh ]; then
  echo "==> promtool (evaluates the Prometheus alert rules)"
  WEFT_PROMTOOL="$(scripts/install-promtool.sh | tail -n 1)"
  export WEFT_PROMTOOL
fi

if [ -x scripts/install-node-deps.sh ]; then
  echo "==> npm packages for the TypeScript SDK test"
  scripts/install-node-deps.sh
fi

if [ -x scripts/install-chromium.sh ]; then
  echo "==> chromium (headless browser for the web UI tests)"
  WEFT_CHROMIUM="$(scripts/install-chromium.sh | tail -n 1)"
  export WEFT_CHROMIUM
fi

echo "==> gofmt"
unformatted="$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './node_modules/*'))"
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "==> go vet"
go vet ./...

echo "==> go test -race"
go test -race -count=1 -timeout 15m "$@" ./...
