#!/usr/bin/env bash
# Installs libchdb (the embedded ClickHouse engine used by Weft's ClickHouse tests and by
# cmd/weft-devstack) from the npm package @chdb/lib-linux-x64-gnu into a cache folder, and prints
# the path of libchdb.so on stdout. Progress goes to stderr.
#
# Needs: bash, node + npm, tar. Re-running is cheap: an install of the pinned version is reused.
#
# Environment:
#   WEFT_CACHE_DIR  cache root (default $HOME/.cache/weft); the library goes to $WEFT_CACHE_DIR/chdb
#
# Go code finds the library through WEFT_LIBCHDB, falling back to $WEFT_CACHE_DIR/chdb/libchdb.so.
set -euo pipefail

# The version is pinned: clickhouse-go's HTTP decoding in internal/chfront depends on the exact
# engine behaviour of this build. Change both together.
readonly PKG="@chdb/lib-linux-x64-gnu"
readonly VERSION="26.5.3"
readonly INTEGRITY="sha512-fPrLmRt5Moor9yGz4mazbrNje4t7X9KB2mTGkXFWRxRBs2iKy8yh6jx11xsa0Qr3iDFMU/yHqd+bVdYJXu3QaQ=="

log() { printf 'install-libchdb: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

case "$(uname -s)-$(uname -m)" in
Linux-x86_64) ;;
*) die "only linux x86_64 is supported (the npm package is $PKG)" ;;
esac
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	if command -v apt-get >/dev/null 2>&1 && [[ "$(id -u)" == 0 ]]; then
		log "node/npm missing: installing Debian's nodejs and npm"
		apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >&2
	fi
fi
for tool in node npm tar; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool is required but not found on PATH"
done

cache_root="${WEFT_CACHE_DIR:-${HOME:?HOME is not set}/.cache/weft}"
dest="$cache_root/chdb"
so="$dest/libchdb.so"
stamp="$dest/VERSION"

if [[ -f "$so" && -f "$stamp" && "$(cat "$stamp")" == "$VERSION" ]]; then
	log "libchdb $VERSION already installed"
	printf '%s\n' "$so"
	exit 0
fi

mkdir -p "$dest"
work="$(mktemp -d "$dest/.install.XXXXXX")"
trap 'rm -rf "$work"' EXIT

log "downloading $PKG@$VERSION (about 170 MB)"
(cd "$work" && npm pack --silent "$PKG@$VERSION" >/dev/null) || die "npm pack $PKG@$VERSION failed"
tarball="$(find "$work" -maxdepth 1 -name '*.tgz' -print -quit)"
[[ -n "$tarball" ]] || die "npm pack produced no tarball"

# npm checks the registry's own hash; the pinned hash also guards against a changed registry entry.
got="$(node -e '
const fs = require("fs"), crypto = require("crypto");
const h = crypto.createHash("sha512");
const s = fs.createReadStream(process.argv[1]);
s.on("data", (d) => h.update(d));
s.on("end", () => console.log("sha512-" + h.digest("base64")));
' "$tarball")"
[[ "$got" == "$INTEGRITY" ]] || die "integrity mismatch for $tarball: got $got, want $INTEGRITY"

log "extracting"
tar -xzf "$tarball" -C "$work" package/libchdb.so
[[ -s "$work/package/libchdb.so" ]] || die "libchdb.so missing from $tarball"

# Rename into place, then write the stamp, so an interrupted run is never mistaken for an install.
rm -f "$stamp"
mv -f "$work/package/libchdb.so" "$so"
printf '%s\n' "$VERSION" >"$stamp"
log "installed libchdb $VERSION"
printf '%s\n' "$so"
