#!/usr/bin/env bash
# Builds the OpenTelemetry Collector of examples/collector/manifest.yaml with
# the OpenTelemetry Collector Builder (ocb), both pinned, into a cache folder,
# and prints the path of the Collector binary on stdout. Progress goes to
# stderr. Weft's e2e tests run this Collector in front of a weft.
#
# Needs: go (modules come through the Go module proxy). Re-running is cheap:
# the builder and a Collector built from an identical manifest are reused.
#
# Environment:
#   WEFT_CACHE_DIR  cache root (default $HOME/.cache/weft); the builder goes to
#                   $WEFT_CACHE_DIR/ocb, Collectors to $WEFT_CACHE_DIR/otelcol/<manifest hash>
set -euo pipefail

readonly BUILDER_VERSION="v0.165.0"

log() { printf 'install-otelcol: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v go >/dev/null 2>&1 || die "go is required but not found on PATH"
manifest="$(cd "$(dirname "$0")/../examples/collector" && pwd)/manifest.yaml"
[[ -f "$manifest" ]] || die "$manifest is missing"

cache_root="${WEFT_CACHE_DIR:-${HOME:?HOME is not set}/.cache/weft}"
builder_dir="$cache_root/ocb/$BUILDER_VERSION"
builder="$builder_dir/builder"
if [[ ! -x "$builder" ]]; then
	log "installing the collector builder $BUILDER_VERSION"
	mkdir -p "$builder_dir"
	GOBIN="$builder_dir" go install "go.opentelemetry.io/collector/cmd/builder@$BUILDER_VERSION" >&2 ||
		die "go install of the builder failed"
fi

hash="$( (cat "$manifest"; echo "$BUILDER_VERSION"; go env GOVERSION) | sha256sum | cut -c1-16)"
dest="$cache_root/otelcol/$hash"
bin="$dest/weft-otelcol"
if [[ -x "$bin" && -f "$dest/BUILT" ]]; then
	log "collector already built ($dest)"
	printf '%s\n' "$bin"
	exit 0
fi

mkdir -p "$dest"
work="$(mktemp -d "$dest/.build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cp "$manifest" "$work/manifest.yaml"
log "building the collector of $manifest (a few minutes the first time)"
(cd "$work" && "$builder" --config manifest.yaml >&2) || die "the collector builder failed"
[[ -x "$work/dist/weft-otelcol" ]] || die "the builder produced no weft-otelcol binary"
# Moved into place before the stamp, so an interrupted run is never taken
# for a build.
rm -f "$dest/BUILT"
mv -f "$work/dist/weft-otelcol" "$bin"
date -u +%FT%TZ >"$dest/BUILT"
log "built $bin"
printf '%s\n' "$bin"
