#!/usr/bin/env bash
# Installs headless Chromium from Debian with apt-get when no browser is on
# PATH, for the web UI's browser tests and benchmark (webui/). Prints the
# browser's path on the last line. Progress goes to stderr.
set -euo pipefail

log() { printf 'install-chromium: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

find_browser() {
	if [[ -n "${WEFT_CHROMIUM:-}" ]]; then echo "$WEFT_CHROMIUM"; return 0; fi
	command -v chromium || command -v chromium-browser || command -v google-chrome
}

if ! path="$(find_browser)"; then
	command -v apt-get >/dev/null 2>&1 || die "no Chromium on PATH and apt-get is not available; install Chromium and set WEFT_CHROMIUM"
	sudo=""
	if [[ "$(id -u)" != 0 ]]; then
		command -v sudo >/dev/null 2>&1 || die "Chromium is missing; run as root or install the chromium package"
		sudo="sudo"
	fi
	log "installing chromium from Debian"
	$sudo apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >&2
	path="$(find_browser)" || die "chromium installed but not found on PATH"
fi
log "using $path"
echo "$path"
