#!/usr/bin/env bash
# Builds Weft's OCI image without a container daemon, with buildah, and
# prints the OCI layout directory holding it as its last line. Progress goes
# to stderr. The image is the same one the Dockerfile builds: weft, exactly
# the shared libraries it links (found with ldd: DuckDB's static build needs
# the C and C++ runtimes), CA certificates, a non-root user and the data
# directory it owns; nothing else, not even a shell.
#
# Usage: scripts/build-image.sh [OUT_DIR]   (default: dist/image)
#   OUT_DIR/weft-oci is an OCI image layout; copy it anywhere with e.g.
#   skopeo copy oci:OUT_DIR/weft-oci:VERSION docker://registry/weft:VERSION
#
# Needs: go, a C compiler, ldd, and buildah (installed with apt-get when
# missing). Runs as root, or as a user buildah can run rootless for.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'build-image: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# The user the image runs as: the uid distroless calls nonroot, so the
# Dockerfile's image and this one agree.
readonly WEFT_UID=65532

out="${1:-dist/image}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

if ! command -v buildah >/dev/null 2>&1; then
	log "installing buildah"
	sudo_cmd=""
	[[ "$(id -u)" -eq 0 ]] || sudo_cmd="sudo"
	$sudo_cmd apt-get install -y buildah >&2 || {
		$sudo_cmd apt-get update >&2 && $sudo_cmd apt-get install -y buildah >&2
	} || die "could not install buildah with apt-get"
fi

work="$(mktemp -d)"
cleanup() {
	[[ -n "${ctr:-}" ]] && bh rm "$ctr" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
# A private, throwaway store: vfs works without overlay support, and
# nothing is left behind in the machine's container storage.
bh() { buildah --storage-driver vfs --root "$work/storage" --runroot "$work/run" "$@"; }

bin="$(scripts/build.sh "$work/bin" | tail -n 1)/weft"
version="$("$bin" version | awk '{print $2}')"
log "built $("$bin" version)"

root="$work/rootfs"
mkdir -p "$root/usr/bin" "$root/etc/ssl/certs" "$root/tmp" "$root/var/lib/weft"
install -m 0755 "$bin" "$root/usr/bin/weft"
# Exactly the libraries the binary loads, at the paths the loader looks.
for lib in $(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done
[[ -f /etc/ssl/certs/ca-certificates.crt ]] && cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
printf 'root:x:0:0:root:/root:/sbin/nologin\nweft:x:%d:%d:weft:/var/lib/weft:/sbin/nologin\n' "$WEFT_UID" "$WEFT_UID" >"$root/etc/passwd"
printf 'root:x:0:\nweft:x:%d:\n' "$WEFT_UID" >"$root/etc/group"
printf 'hosts: files dns\n' >"$root/etc/nsswitch.conf"
chmod 1777 "$root/tmp"
chmod 0700 "$root/var/lib/weft"
# Layer timestamps: the commit's, so one commit gives one image.
epoch="$(git log -1 --format=%ct 2>/dev/null || echo 0)"
find "$root" -exec touch -h -d "@$epoch" {} +

ctr="$(bh from scratch)"
bh copy "$ctr" "$root/" / >&2
# The data directory is the user's; the rest stays root's, so the image
# runs with a read-only root filesystem.
mnt="$(bh mount "$ctr")"
chown "$WEFT_UID:$WEFT_UID" "$mnt/var/lib/weft"
bh umount "$ctr" >/dev/null
bh config \
	--user "$WEFT_UID:$WEFT_UID" \
	--workingdir /var/lib/weft \
	--env WEFT_LISTEN=0.0.0.0:6345 \
	--env WEFT_OTLP_GRPC_LISTEN=0.0.0.0:4317 \
	--env WEFT_DATA_DIR=/var/lib/weft \
	--env HOME=/var/lib/weft \
	--port 6345 --port 4317 \
	--volume /var/lib/weft \
	--entrypoint '["/usr/bin/weft"]' \
	--cmd serve \
	--label org.opencontainers.image.title=weft \
	--label "org.opencontainers.image.version=$version" \
	--label "org.opencontainers.image.revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
	"$ctr" >&2
layout="$out/weft-oci"
rm -rf "$layout"
bh commit --format oci --disable-compression=false --timestamp "$epoch" --rm "$ctr" "oci:$layout:$version" >&2
ctr=""
log "image weft:$version in $layout ($(du -sh "$layout" | cut -f1) compressed)"
printf '%s\n' "$layout"
