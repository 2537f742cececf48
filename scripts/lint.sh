#!/usr/bin/env bash
# Formats the C++ sources with .clang-format and runs clang-tidy (.clang-tidy) over them.
#   scripts/lint.sh             format in place, then clang-tidy over every source of src/ and tools/
#   scripts/lint.sh --check     what the suite runs (scripts/test.sh): formatting differences without changing
#                               files, and clang-tidy over the sources changed against the merge base with
#                               main (ORTKIT_LINT_BASE names another ref), every finding an error; exit 1 if any
#   scripts/lint.sh --tidy-all  clang-tidy over every source, every finding an error (about an hour of CPU:
#                               `nproc` files at a time)
# clang-tidy reads the compile commands of BUILD_DIR (default build/, written by scripts/build.sh). Over
# every source it takes about 20 s of CPU per file, an hour for the tree on two cores, so the suite checks
# what a branch changed: a .cpp changed, and the .cpp beside a header changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
build="${BUILD_DIR:-$root/build}"
mapfile -t files < <(git ls-files 'src/*.cpp' 'src/*.h' 'tools/*.cpp' 'tools/*.h' 'tests/*.cpp' 'tests/*.h' 'bench/*.cpp' 'fuzz/*.cpp' 'fuzz/*.h')

# tidy FILE...: clang-tidy over the files, `nproc` at a time; exit 1 on any finding.
tidy() {
  [ "$#" -gt 0 ] || { echo "clang-tidy: no source to check"; return 0; }
  [ -f "$build/compile_commands.json" ] || "$root/scripts/build.sh"
  echo "clang-tidy: $# source(s)"
  printf '%s\n' "$@" | xargs -P "$(nproc)" -n 1 clang-tidy -p "$build" --quiet --warnings-as-errors='*'
}

# The sources of src/ and tools/ a branch changed against the merge base with main (committed or not), and
# the .cpp beside each header it changed. On main itself (a clean clone, CI) that is what its last commit
# changed.
changed_sources() {
  local base="${ORTKIT_LINT_BASE:-main}"
  if ! git rev-parse --verify --quiet "$base^{commit}" >/dev/null; then
    echo "clang-tidy: no ref '$base' to compare with (set ORTKIT_LINT_BASE); checking nothing" >&2
    return 0
  fi
  local since
  since="$(git merge-base HEAD "$base")"
  if [ "$since" = "$(git rev-parse HEAD)" ]; then since="$(git rev-parse --verify --quiet HEAD~1 || echo "$since")"; fi
  { git diff --name-only --diff-filter=ACMR "$since" -- 'src/*.cpp' 'src/*.h' 'tools/*.cpp' 'tools/*.h'
    git ls-files --others --exclude-standard 'src/*.cpp' 'src/*.h' 'tools/*.cpp' 'tools/*.h'
  } | sed 's/\.h$/.cpp/' | sort -u | while read -r f; do [ -f "$f" ] && echo "$f"; done
}

case "${1:-}" in
  --check)
    clang-format --dry-run --Werror "${files[@]}"
    mapfile -t changed < <(changed_sources)
    tidy "${changed[@]}"
    ;;
  --tidy-all)
    mapfile -t sources < <(printf '%s\n' "${files[@]}" | grep -E '^(src|tools)/.*\.cpp$')
    tidy "${sources[@]}"
    ;;
  *)
    clang-format -i "${files[@]}"
    mapfile -t sources < <(printf '%s\n' "${files[@]}" | grep -E '^(src|tools)/.*\.cpp$')
    tidy "${sources[@]}"
    ;;
esac
