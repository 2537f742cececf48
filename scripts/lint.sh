#!/usr/bin/env bash
# Formats the C++ sources with .clang-format and runs clang-tidy (.clang-tidy) over them.
#   scripts/lint.sh            format in place, then clang-tidy
#   scripts/lint.sh --check    report formatting differences without changing files (exit 1 if any)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
mapfile -t files < <(git ls-files 'src/*.cpp' 'src/*.h' 'tools/*.cpp' 'tools/*.h' 'tests/*.cpp' 'tests/*.h' 'bench/*.cpp' 'fuzz/*.cpp' 'fuzz/*.h')
if [ "${1:-}" = "--check" ]; then
  clang-format --dry-run --Werror "${files[@]}"
  exit
fi
clang-format -i "${files[@]}"
build="${BUILD_DIR:-$root/build}"
[ -f "$build/compile_commands.json" ] || "$root/scripts/build.sh"
mapfile -t sources < <(printf '%s\n' "${files[@]}" | grep -E '^(src|tools)/.*\.cpp$')
clang-tidy -p "$build" --quiet "${sources[@]}"
