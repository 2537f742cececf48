#!/usr/bin/env bash
# Configures and builds ortkit into build/ (after scripts/setup.sh has installed the dependencies).
# It configures every time (a few seconds when nothing changed), so that CMAKE_ARGS always apply.
#   BUILD_DIR=build-asan CMAKE_ARGS="-DCMAKE_BUILD_TYPE=Debug" scripts/build.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
# shellcheck disable=SC2086
cmake -S "$root" -B "$build" -G Ninja ${CMAKE_ARGS:-}
ninja -C "$build" "$@"
