#!/bin/sh
# Builds gds's OCI image with buildah (make image) and saves it as an OCI
# archive: FROM scratch, no container is run (--isolation chroot, and the
# Containerfile has no RUN), buildah's storage in a temporary directory.
# Every file and the image's creation time carry SOURCE_DATE_EPOCH, so the
# same commit and the same CA certificates give the same image digest.
#
# Environment: VERSION, REVISION, SOURCE (the repository's URL), ARCH
# (GOARCH), ARCHIVE (the release archive holding the linux binary), OUT
# (the OCI archive to write), SOURCE_DATE_EPOCH, GO.
set -eu
: "${VERSION:?}" "${REVISION:?}" "${SOURCE:?}" "${ARCH:?}" "${ARCHIVE:?}" "${OUT:?}" "${SOURCE_DATE_EPOCH:?}"
GO=${GO:-go}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ctx=$tmp/context
root=$ctx/rootfs
mkdir -p "$root/etc/ssl/certs" "$root/tmp" "$root/usr/local/bin" "$root/usr/share/doc/gds" "$ctx/data" "$tmp/unpacked"
tar -xzf "$ARCHIVE" -C "$tmp/unpacked"
dir=$(echo "$tmp"/unpacked/gds-*)
cp "$dir/gds" "$root/usr/local/bin/gds"
cp "$dir/README.md" "$dir/THIRD_PARTY_LICENSES.md" "$root/usr/share/doc/gds/"
printf 'root:x:0:0:root:/root:/sbin/nologin\ngds:x:65532:65532:gds:/data:/sbin/nologin\n' >"$root/etc/passwd"
printf 'root:x:0:\ngds:x:65532:\n' >"$root/etc/group"
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
find "$ctx" -type d -exec chmod 0755 {} +
find "$ctx" -type f -exec chmod 0644 {} +
chmod 0755 "$root/usr/local/bin/gds"
chmod 1777 "$root/tmp"
# An empty directory is not copied: a file keeps /data.
touch "$ctx/data/.keep"

created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
buildah="buildah --root $tmp/storage --runroot $tmp/run --storage-driver vfs"
$buildah bud --quiet --isolation chroot --platform "linux/$ARCH" --timestamp "$SOURCE_DATE_EPOCH" \
	--label "org.opencontainers.image.title=gds" \
	--label "org.opencontainers.image.description=The Game Data Service: ESI-compatible name search over EVE Online data" \
	--label "org.opencontainers.image.version=$VERSION" \
	--label "org.opencontainers.image.revision=$REVISION" \
	--label "org.opencontainers.image.source=$SOURCE" \
	--label "org.opencontainers.image.created=$created" \
	-t "localhost/gds:$VERSION" -f "$here/Containerfile" "$ctx" >/dev/null
$buildah push --quiet --format oci "localhost/gds:$VERSION" "oci:$tmp/layout:gds:$VERSION"
$GO run ./cmd/release tar -out "$OUT" -mtime "$SOURCE_DATE_EPOCH" "$tmp/layout"
echo "$OUT: gds:$VERSION (linux/$ARCH), manifest $(grep -o 'sha256:[0-9a-f]*' "$tmp/layout/index.json" | head -1)"
