#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: installs what is missing, builds, checks the
# formatting, runs CTest.
#   scripts/test.sh                 everything but the clang fuzz builds (what CI runs)
#   scripts/test.sh --quick         the unit tests only, on a machine already set up (about 20 s after a build)
#   scripts/test.sh --fuzz          everything, and 30 s libFuzzer runs of the model loader and the REST decoder
#                                   (they build a clang tree with sanitizers first: about 6 minutes)
#   scripts/test.sh -R check        only tests whose name matches (extra arguments go to ctest)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode=default
case "${1:-}" in
  --quick) mode=quick; shift ;;
  --fuzz) mode=fuzz; shift ;;
esac
build="${BUILD_DIR:-$root/build}"
if [ "$mode" = quick ]; then
  "$root/scripts/build.sh"
  cd "$build"
  exec ctest --output-on-failure --timeout 300 -j "$(nproc)" -L unit "$@"
fi
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
# Formatting is part of the suite: a file clang-format would change fails it (scripts/lint.sh fixes it).
"$root/scripts/lint.sh" --check
cd "$build"
labels=(-LE fuzz-build)
[ "$mode" = fuzz ] && labels=()
ctest --output-on-failure --timeout 900 -j "$(nproc)" "${labels[@]}" "$@"
