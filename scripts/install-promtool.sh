#!/usr/bin/env bash
# Builds Prometheus' promtool, pinned, from the Go module proxy into a cache
# folder and prints the path of the promtool binary on stdout. Progress goes
# to stderr. The alert rules test checks deploy/prometheus/weft-rules.yaml
# and evaluates it with promtool against series scraped from a weft.
#
# promtool is built in a temporary module of its own so that Weft's go.mod
# never takes Prometheus' dependencies. Re-running is cheap: a built
# promtool is reused.
#
# Needs: go (modules come through the Go module proxy).
#
# Environment:
#   WEFT_CACHE_DIR  cache root (default $HOME/.cache/weft); promtool goes to
#                   $WEFT_CACHE_DIR/promtool/<version>/promtool
set -euo pipefail

# Prometheus 3.x as a Go module version (v0.3MM.P is Prometheus 3.MM.P).
readonly PROMTOOL_VERSION="v0.316.0"

log() { printf 'install-promtool: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v go >/dev/null 2>&1 || die "go is required but not found on PATH"

cache_root="${WEFT_CACHE_DIR:-${HOME:?HOME is not set}/.cache/weft}"
# remove_all_sd leaves the service discoveries (and their cloud SDKs) out:
# promtool only checks and evaluates rules here, and the build takes under
# two minutes instead of twelve.
dest="$cache_root/promtool/$PROMTOOL_VERSION-nosd"
bin="$dest/promtool"
if [[ -x "$bin" ]]; then
	log "promtool $PROMTOOL_VERSION already built ($bin)"
	printf '%s\n' "$bin"
	exit 0
fi

mkdir -p "$dest"
work="$(mktemp -d "$dest/.build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
log "building promtool $PROMTOOL_VERSION without service discovery (about two minutes the first time)"
(
	cd "$work"
	go mod init weft.local/promtoolbuild >/dev/null 2>&1
	go get "github.com/prometheus/prometheus/cmd/promtool@$PROMTOOL_VERSION" >&2
	GOFLAGS=-trimpath CGO_ENABLED=0 go build -tags remove_all_sd -o promtool github.com/prometheus/prometheus/cmd/promtool >&2
) || die "building promtool failed"
# Moved into place last, so an interrupted run is never taken for a build.
mv -f "$work/promtool" "$bin"
log "built $bin"
printf '%s\n' "$bin"
