#!/usr/bin/env bash
# Installs the npm packages of the Weave TypeScript SDK test (e2e/tssdk) into
# e2e/tssdk/node_modules, exactly as pinned by its package-lock.json. Installs Node.js and npm
# from Debian with apt-get when `node` is missing. Progress goes to stderr.
#
# Re-running is cheap: an install whose stamp matches the lock file's hash is reused.
#
# Environment:
#   WEFT_NPM_CACHE  npm download cache (default $HOME/.cache/weft/npm)
set -euo pipefail

log() { printf 'install-node-deps: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

DIR="$(cd "$(dirname "$0")/../e2e/tssdk" && pwd)" || die "e2e/tssdk not found next to $0"
readonly DIR
readonly LOCK="$DIR/package-lock.json"
readonly STAMP="$DIR/node_modules/.weft-lock-sha256"

install_node() {
	command -v apt-get >/dev/null 2>&1 || die "node is missing and apt-get is not available; install Node.js 18 or newer and npm"
	local sudo=""
	if [[ "$(id -u)" != 0 ]]; then
		command -v sudo >/dev/null 2>&1 || die "node is missing; run as root or install Node.js and npm"
		sudo="sudo"
	fi
	log "installing nodejs and npm from Debian"
	$sudo apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nodejs npm >&2
}

command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || install_node
major="$(node -p 'process.versions.node.split(".")[0]')"
[[ "$major" -ge 18 ]] || die "node $(node --version) is too old; the weave SDK needs Node.js 18 or newer"
[[ -f "$LOCK" ]] || die "$LOCK is missing"

want="$(sha256sum "$LOCK" | cut -d' ' -f1)"
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]]; then
	log "node_modules of e2e/tssdk already match package-lock.json"
	exit 0
fi

log "installing e2e/tssdk packages with npm ci"
rm -f "$STAMP"
(cd "$DIR" && npm ci --no-audit --no-fund --loglevel=error \
	--cache "${WEFT_NPM_CACHE:-${HOME:?HOME is not set}/.cache/weft/npm}" >&2) || die "npm ci failed in $DIR"
# Written last, so an interrupted install is never mistaken for a complete one.
printf '%s\n' "$want" >"$STAMP"
log "installed $(node -p "require('$DIR/node_modules/weave/package.json').version" 2>/dev/null || echo '?') of weave"
