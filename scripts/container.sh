#!/usr/bin/env bash
# Builds the serving image of the repository's Dockerfile with podman, on a machine that reaches no
# container registry: the base image is made from Debian's own packages (debootstrap, signed by Debian's
# archive key), and the image holds the executable and ONNX Runtime of the project's own build, installed
# without debug information (cmake --install --strip).
#
#   scripts/container.sh base-tar  the base's root file system in .deps/container (scripts/setup.sh runs it)
#   scripts/container.sh base      localhost/ortkit-base:bookworm-KEY: Debian 12 minbase, as debian:bookworm-slim,
#                                  with the Dockerfile's RUNTIME_PACKAGES
#   scripts/container.sh build     the base, scripts/build.sh ortkit_cli, then the image (ORTKIT_IMAGE)
#   scripts/container.sh image     the same from the build as it is (no scripts/build.sh: tests/e2e/container.sh)
#   scripts/container.sh size      the image's size and the executable's, one per line
#
#   BUILD_DIR=DIR          the build to package (default build/; `BUILD_DIR=build-release scripts/container.sh
#                          image` packages the profile-guided build of scripts/build_release.sh)
#   ORTKIT_IMAGE=NAME:TAG  the image to build (default localhost/ortkit:VERSION)
#   ORTKIT_DEBIAN_MIRROR   where debootstrap fetches (default http://deb.debian.org/debian)
#   ORTKIT_CONTAINER_OFFLINE=1  fail instead of running debootstrap when the base's tar is not cached
#
# The base's root file system is kept as a tar under .deps/container: a machine whose podman storage is
# empty imports it in seconds instead of running debootstrap again (one to three minutes), and building the
# image downloads nothing (the base holds the Dockerfile's RUNTIME_PACKAGES already). podman runs with
# --runtime runc (crun refuses hybrid cgroups here; scripts/setup.sh writes the containers.conf runc needs).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
version="$(sed -n 's/^project(ortkit VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")"
image="${ORTKIT_IMAGE:-localhost/ortkit:$version}"
mirror="${ORTKIT_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
cache="$root/.deps/container"
# The cached tar and image are named after the recipe: bump base_revision when make_base_tar changes; the
# Dockerfile's RUNTIME_PACKAGES are in the name through their hash.
base_revision=1
base_key="r$base_revision-$(sed -n 's/^ARG RUNTIME_PACKAGES=//p' "$root/Dockerfile" | sha256sum | cut -c1-8)"
base_image="localhost/ortkit-base:bookworm-$base_key"
base_tar="$cache/debian-bookworm-minbase-$base_key.tar"
podman=(podman --runtime runc)

say() { printf '\033[1m[container]\033[0m %s\n' "$*" >&2; }
die() { say "$*"; exit 2; }

need() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || die "$tool is not installed: scripts/setup.sh installs podman, runc and debootstrap"
  done
}

# The Dockerfile's ARG RUNTIME_PACKAGES, one word each.
runtime_packages() {
  sed -n 's/^ARG RUNTIME_PACKAGES="\(.*\)"$/\1/p' "$root/Dockerfile"
}

# The root file system of debian:bookworm-slim, made the way Debian's own images are: debootstrap's minbase,
# the archive's three suites in apt's sources, no package cache, lists, documentation or translations;
# with the runtime libraries the Dockerfile would otherwise install.
make_base_tar() {
  if [ -f "$base_tar" ]; then say "base root file system: $base_tar (present)"; return; fi
  [ "${ORTKIT_CONTAINER_OFFLINE:-0}" != 1 ] || die "no cached base in $base_tar: scripts/setup.sh makes it (debootstrap)"
  need debootstrap
  [ "$(id -u)" = 0 ] || die "debootstrap needs root to make the base image"
  local packages; packages="$(runtime_packages)"
  [ -n "$packages" ] || die "no ARG RUNTIME_PACKAGES=\"...\" line in $root/Dockerfile"
  local rootfs; rootfs="$(mktemp -d)"
  trap 'rm -rf "$rootfs"; trap - RETURN' RETURN
  say "debootstrap --variant=minbase bookworm from $mirror with $packages (one to three minutes)"
  debootstrap --variant=minbase --include="${packages// /,}" bookworm "$rootfs" "$mirror" >"$rootfs.log" 2>&1 \
    || { tail -20 "$rootfs.log" >&2; rm -f "$rootfs.log"; die "debootstrap failed"; }
  rm -f "$rootfs.log" "$rootfs/etc/apt/sources.list"
  cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${mirror%/debian}/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  # As debian:bookworm-slim: dpkg keeps no documentation or translations of what the image installs later.
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
EOF
  # As debian:bookworm-slim: apt keeps no package files or caches in the layers that install packages.
  cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  find "$rootfs/usr/share/doc" -mindepth 2 ! -name copyright ! -type d -delete
  rm -rf "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/usr/share/locale/* \
    "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/lib/apt/lists/* \
    "$rootfs"/var/log/*.log "$rootfs"/var/log/apt/*
  mkdir -p "$cache"
  tar --numeric-owner -C "$rootfs" -cf "$base_tar.part" . && mv "$base_tar.part" "$base_tar"
  say "base root file system: $base_tar ($(du -h "$base_tar" | cut -f1))"
}

ensure_base() {
  need podman runc
  if "${podman[@]}" image exists "$base_image"; then say "base image $base_image: present"; return; fi
  [ -f "$base_tar" ] || make_base_tar
  "${podman[@]}" import --change 'CMD ["/bin/bash"]' "$base_tar" "$base_image" >/dev/null
  say "base image $base_image imported from $base_tar"
}

# The image's context: the Dockerfile and the install tree of the build (ortkit/bin, ortkit/lib).
stage_context() {
  local context="$1"
  rm -rf "$context"; mkdir -p "$context"
  cp "$root/Dockerfile" "$context/Dockerfile"
  cmake --install "$build" --prefix "$context/ortkit" --component runtime --strip >/dev/null
  [ -x "$context/ortkit/bin/ortkit" ] || die "cmake --install left no ortkit/bin/ortkit in $context"
  if readelf -S "$context/ortkit/bin/ortkit" | grep -q '\.debug_'; then die "the installed executable still has debug information"; fi
}

build_image() {
  ensure_base
  local context="$build/container"
  stage_context "$context"
  local old; old="$("${podman[@]}" image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)"
  say "podman build $image (ortkit $(du -h "$context/ortkit/bin/ortkit" | cut -f1), ONNX Runtime $(du -sh "$context/ortkit/lib" | cut -f1))"
  "${podman[@]}" build --build-arg "BASE=$base_image" -t "$image" "$context" >&2
  rm -rf "$context"
  # A rebuild leaves the previous image untagged: remove it (its layers that the new one shares stay).
  local new; new="$("${podman[@]}" image inspect --format '{{.Id}}' "$image")"
  if [ -n "$old" ] && [ "$old" != "$new" ]; then "${podman[@]}" rmi "$old" >/dev/null 2>&1 || true; fi
  say "built $image"
}

print_size() {
  "${podman[@]}" image inspect --format 'image {{.Size}}' "$image"
  "${podman[@]}" run --rm --entrypoint stat "$image" -c 'ortkit %s' /opt/ortkit/bin/ortkit
}

case "${1:-}" in
  base-tar) make_base_tar ;;
  base) ensure_base ;;
  build) "$root/scripts/build.sh" ortkit_cli >&2 && build_image ;;
  image) build_image ;;
  size) print_size ;;
  *) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
