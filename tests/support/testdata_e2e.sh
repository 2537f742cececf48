# Sourced by the e2e scripts that run ortkit over every model Debian ships in libonnx-testdata
# (conformance.sh, testdata_sweep.sh). Expects $1 (the ortkit binary), $2 (the source folder) and $3
# (nothing, or --update to rewrite the expected outcomes); sets ortkit, src, mode (check or --update),
# data (ORTKIT_TESTDATA, default /usr/share/libonnx-testdata/data), sets (the four folders of test
# cases under it) and work; defines fail; exits 1 without the binary, the test data or jq, or on an
# unknown mode; removes $work on exit.
set -euo pipefail
ortkit="$(realpath "$1")"; src="$2"; mode="${3:-check}"
data="${ORTKIT_TESTDATA:-/usr/share/libonnx-testdata/data}"
sets=(node pytorch-converted pytorch-operator simple)

fail() { echo "FAIL: $*" >&2; exit 1; }
[ -x "$ortkit" ] || fail "no ortkit executable at $1"
[ -d "$data/node" ] || fail "$data/node is missing: scripts/setup.sh installs the test cases (libonnx-testdata, .deps/onnx-testdata-*)"
command -v jq >/dev/null || fail "jq is needed to read ortkit's JSON (apt-get install jq)"
[ "$mode" = check ] || [ "$mode" = --update ] || fail "unknown mode '$mode' (expected --update or nothing)"

work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
