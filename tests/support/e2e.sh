# Sourced first by the e2e scripts. Expects $1 (the ortkit binary) and $2 (the source folder); sets
# ortkit, src, bin (where ortkit_make_model is) and work (a scratch folder removed on exit), and
# defines fail, expect_rc, expect_msg and need_python.
set -euo pipefail
ortkit="$1"; src="$2"
bin="${ORTKIT_BIN_DIR:-$(dirname "$ortkit")}"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# expect_rc CODE COMMAND...: runs COMMAND with its output in $work/out; fails unless it exits CODE.
expect_rc() { local want="$1"; shift; set +e; "$@" >"$work/out" 2>&1; local rc=$?; set -e; [ "$rc" = "$want" ] || { cat "$work/out" >&2; fail "exit $rc, expected $want: $*"; }; }
# expect_msg TEXT: the last expect_rc's output holds TEXT.
expect_msg() { grep -q -- "$1" "$work/out" || { cat "$work/out" >&2; fail "message lacks '$1'"; }; }
# need_python: sets and exports ORTKIT_PYTHON as python, or skips the test (exit 77) without it.
need_python() {
  python="${ORTKIT_PYTHON:-$src/.deps/python/bin/python}"
  if [ ! -x "$python" ]; then echo "SKIP: no Python at $python (set ORTKIT_PYTHON; scripts/setup.sh installs it)"; exit 77; fi
  export ORTKIT_PYTHON="$python"
}
