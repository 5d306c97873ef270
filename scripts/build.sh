#!/usr/bin/env bash
# Builds Weft's release binaries reproducibly into a directory and writes a
# SHA256SUMS file beside them. Prints the directory as its last line.
#
# Reproducible: -trimpath keeps the build machine's paths out, Go writes no
# timestamps, and the version comes from the module and the commit
# (runtime/debug build info: vcs.revision and vcs.time, the commit's time).
# The same commit built with the same Go toolchain gives the same bytes.
#
# Usage: scripts/build.sh [OUT_DIR]   (default: dist/bin)
#
# Environment:
#   WEFT_BUILD_COMMANDS  the commands to build (default: "weft")
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'build: %s\n' "$*" >&2; }

out="${1:-dist/bin}"
commands="${WEFT_BUILD_COMMANDS:-weft}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# -s -w: no symbol table or DWARF (a third of the size); Go's own stack
# traces keep their function names and lines. -buildid= leaves out the
# build id, which would otherwise differ between otherwise identical
# builds from different checkouts.
ldflags="-s -w -buildid="
# The toolchain stamps the commit from a git checkout, but not from a git
# worktree; the same facts, from git, cover that case.
if commit="$(git rev-parse HEAD 2>/dev/null)"; then
	[[ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]] || commit="$commit-modified"
	ldflags="$ldflags -X main.stampedCommit=$commit -X main.stampedCommitTime=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ)"
fi
for cmd in $commands; do
	log "building $cmd"
	CGO_ENABLED=1 go build -trimpath -buildvcs=auto -ldflags "$ldflags" -o "$out/$cmd" "./cmd/$cmd" >&2
done
(cd "$out" && sha256sum $commands >SHA256SUMS)
log "wrote $out/SHA256SUMS"
printf '%s\n' "$out"
