# Sourced first by every end-to-end script (tests/e2e, tests/cases; serve_e2e.sh and testdata_e2e.sh
# build on it). Expects $1 (the ortkit binary) and $2 (the source folder); sets ortkit, src, bin (where
# ortkit_make_model is) and work (a scratch folder removed on exit), and defines fail, skip, expect_rc,
# expect_msg and need_python.
set -euo pipefail
ortkit="$1"; src="$2"
bin="${ORTKIT_BIN_DIR:-$(dirname "$ortkit")}"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# expect_rc CODE COMMAND...: runs COMMAND with its output in $work/out; fails unless it exits CODE.
expect_rc() { local want="$1"; shift; set +e; "$@" >"$work/out" 2>&1; local rc=$?; set -e; [ "$rc" = "$want" ] || { cat "$work/out" >&2; fail "exit $rc, expected $want: $*"; }; }
# expect_msg TEXT: the last expect_rc's output holds TEXT.
expect_msg() { grep -q -- "$1" "$work/out" || { cat "$work/out" >&2; fail "message lacks '$1'"; }; }
# skip REASON: the test cannot run here; exits 77. CTest counts that as a skip only for the scripts
# tests/CMakeLists.txt declares optional (ORTKIT_OPTIONAL_E2E, each with why): for every other script
# the set-up installs what it needs, so exit 77 fails it.
skip() {
  if [ "${ORTKIT_E2E_OPTIONAL:-0}" = 1 ]; then echo "SKIP: $*"; else echo "SKIP: $* (not an optional test: this fails it)"; fi
  exit 77
}
# need_python: sets and exports ORTKIT_PYTHON as python, or skips the test without it.
need_python() {
  python="${ORTKIT_PYTHON:-$src/.deps/python/bin/python}"
  [ -x "$python" ] || skip "no Python at $python (set ORTKIT_PYTHON; scripts/setup.sh installs it)"
  export ORTKIT_PYTHON="$python"
}
