#!/usr/bin/env bash
# linux-arm64 host release, built in an isolated amd64 Debian 12 chroot with arm64 multiarch inside it
# (never on a shared host: arm64 -dev packages would change what other builds there find).
#   packaging/build-arm64-chroot.sh [CHROOT]      default /work/chroot-arm64, made with debootstrap
# Sees /work at the same path inside the chroot, cross-compiles coreflow and
# coreflow-console with packaging/toolchain-linux-arm64.cmake, stages the release with
# make-release.py --cross arm64 and smoke-checks it under qemu-aarch64-static. The results land in
# build-release-arm64/release/ of the worktree (the same assets as ./run release, bundle id linux-arm64).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
root="${1:-/work/chroot-arm64}"
[ -x "$root/bin/bash" ] || debootstrap --variant=minbase --include=ca-certificates bookworm "$root" http://deb.debian.org/debian
mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
trap 'umount "$root/proc" 2>/dev/null || true' EXIT
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root DEBIAN_FRONTEND=noninteractive "$@"; }
in_root dpkg --add-architecture arm64
in_root apt-get update -qq
in_root apt-get install -y -qq --no-install-recommends \
  crossbuild-essential-arm64 cmake ninja-build pkgconf git patchelf python3 qemu-user-static binutils file openssl \
  qt6-base-dev-tools qt6-base-dev:arm64 qt6-websockets-dev:arm64 libqt6opengl6-dev:arm64 \
  libsodium-dev:arm64 libssl-dev:arm64 libsimdjson-dev:arm64 libhttp-parser-dev:arm64 libyaml-cpp-dev:arm64 >/dev/null
# The worktree is seen at the same path inside the chroot (its git metadata included), so the
# manifest names the real source commit and whether the tree is clean.
mkdir -p "$root/work"
mountpoint -q "$root/work" || mount --bind /work "$root/work"
trap 'umount "$root/work" 2>/dev/null || true; umount "$root/proc" 2>/dev/null || true' EXIT
build="$here/build-release-arm64"
excluded="tests/peers;tests/unit;tests/integration;tests/status;tests/console;tests/registry;tests/release"
in_root git config --global --add safe.directory '*'
in_root cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$here/packaging/toolchain-linux-arm64.cmake" "-DCOREFLOW_EXCLUDE_DIRS=$excluded" >/dev/null
in_root cmake --build "$build" -j"$(nproc)" --target coreflow coreflow-console
in_root python3 "$here/packaging/make-release.py" --build-dir "$build" --out "$build/release" --cross arm64
dir="$(cd "$build/release" && ls -d coreflow-relay-*-linux-arm64)"
in_root python3 "$here/packaging/smoke-check.py" --runner qemu-aarch64-static "$build/release/$dir"
