# Sourced by the directory-case scripts that run ortkit over every model Debian ships in
# libonnx-testdata (tests/cases: conformance.sh, testdata_sweep.sh), after e2e.sh. Expects $1 (the
# ortkit binary), $2 (the source folder) and $3 (nothing, or --update to rewrite the expected
# outcomes); sets what e2e.sh sets (ortkit as an absolute path), mode (check or --update), data
# (ORTKIT_TESTDATA, default /usr/share/libonnx-testdata/data) and sets (the four folders of test cases
# under it); skips without the test data or jq, fails without the binary or on an unknown mode.
source "$2/tests/support/e2e.sh"
[ -x "$ortkit" ] || fail "no ortkit executable at $1"
ortkit="$(realpath "$1")"; mode="${3:-check}"
data="${ORTKIT_TESTDATA:-/usr/share/libonnx-testdata/data}"
sets=(node pytorch-converted pytorch-operator simple)

[ -d "$data/node" ] || skip "$data/node is missing: scripts/setup.sh installs the test cases (libonnx-testdata, .deps/onnx-testdata-*)"
command -v jq >/dev/null || skip "jq is needed to read ortkit's JSON (apt-get install jq)"
[ "$mode" = check ] || [ "$mode" = --update ] || fail "unknown mode '$mode' (expected --update or nothing)"
