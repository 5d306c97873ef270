#!/usr/bin/env bash
# Builds helm, pinned, from the Go module proxy into a cache folder and prints
# the path of the helm binary on stdout. Progress goes to stderr. The chart
# tests render deploy/helm/weft with it.
#
# helm is built in a temporary module of its own so that Weft's go.mod never
# takes helm's dependencies. Re-running is cheap: a built helm is reused.
#
# Needs: go (modules come through the Go module proxy).
#
# Environment:
#   WEFT_CACHE_DIR  cache root (default $HOME/.cache/weft); helm goes to
#                   $WEFT_CACHE_DIR/helm/<version>/helm
set -euo pipefail

readonly HELM_VERSION="v3.22.0"

log() { printf 'install-helm: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v go >/dev/null 2>&1 || die "go is required but not found on PATH"

cache_root="${WEFT_CACHE_DIR:-${HOME:?HOME is not set}/.cache/weft}"
dest="$cache_root/helm/$HELM_VERSION"
bin="$dest/helm"
if [[ -x "$bin" ]]; then
	log "helm $HELM_VERSION already built ($bin)"
	printf '%s\n' "$bin"
	exit 0
fi

mkdir -p "$dest"
work="$(mktemp -d "$dest/.build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
log "building helm $HELM_VERSION (a few minutes the first time)"
(
	cd "$work"
	go mod init weft.local/helmbuild >/dev/null 2>&1
	go get "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >&2
	GOFLAGS=-trimpath CGO_ENABLED=0 go build -o helm helm.sh/helm/v3/cmd/helm >&2
) || die "building helm failed"
# Moved into place last, so an interrupted run is never taken for a build.
mv -f "$work/helm" "$bin"
log "built $bin"
printf '%s\n' "$bin"
