#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: installs what is missing, builds, checks the
# formatting, runs CTest.
#   scripts/test.sh                 everything
#   scripts/test.sh -R check        only tests whose name matches (extra arguments go to ctest)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
# Formatting is part of the suite: a file clang-format would change fails it (scripts/lint.sh fixes it).
"$root/scripts/lint.sh" --check
build="${BUILD_DIR:-$root/build}"
cd "$build"
ctest --output-on-failure --timeout 900 -j "$(nproc)" "$@"
