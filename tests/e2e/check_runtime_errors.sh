#!/usr/bin/env bash
# ortkit check on models that only ONNX Runtime rejects: the runtime layer must fail with the
# translated code, the node where the message names one, and exit code 1.
# The models are committed under tests/data/runtime/; tests/unit/runtime_messages_test.cpp
# generates them (RuntimeFixtures.DISABLED_Regenerate) and checks that they are up to date.
source "$2/tests/support/e2e.sh"

# expect MODEL CODE NODE MESSAGE_PART: the runtime layer fails with CODE at NODE ("" for none).
expect() {
  local model="$src/tests/data/runtime/$1" code="$2" node="$3" part="$4" rc=0
  [ -f "$model" ] || fail "fixture $1 is missing"
  "$ortkit" check "$model" --format json >"$work/report.json" || rc=$?
  [ "$rc" = 1 ] || fail "$1: exit $rc, expected 1"
  python3 - "$work/report.json" "$code" "$node" "$part" "$1" <<'PY' || fail "$1: see above"
import json, sys
path, code, node, part, name = sys.argv[1:]
report = json.load(open(path))
assert report["verdict"] == "fail", f"{name}: verdict {report['verdict']}"
runtime = next(l for l in report["layers"] if l["name"] == "runtime")
assert runtime["state"] == "failed", f"{name}: runtime layer {runtime['state']}"
found = [d for d in runtime["diagnoses"] if d["code"] == code]
if not found:
    # An earlier layer explained the same refusal: the runtime layer points at it instead.
    assert code in runtime.get("note", ""), f"{name}: no {code} in the runtime layer: {runtime}"
    found = [d for l in report["layers"] for d in l["diagnoses"] if d["code"] == code]
assert found, f"{name}: no {code} in the runtime layer: {runtime['diagnoses']}"
d = found[0]
assert d["location"].get("node", "") == node, f"{name}: node {d['location']}"
assert part in d["message"], f"{name}: '{part}' not in: {d['message']}"
assert "onnxruntime_src" not in d["message"], f"{name}: source location left in: {d['message']}"
PY
}

expect erf_double.onnx runtime.not-implemented erf_1 "no CPU kernel for Erf-13 at node 'erf_1'"
expect ir_version_99.onnx runtime.unsupported-ir-version "" "IR version 99 is not supported"
expect opset_30.onnx graph.opset-too-new "" "opset 30"

# The text report shows the same finding with its fix.
rc=0
out="$("$ortkit" check "$src/tests/data/runtime/erf_double.onnx")" || rc=$?
[ "$rc" = 1 ] || fail "text report: exit $rc, expected 1"
grep -q "runtime.not-implemented" <<<"$out" || fail "text report lacks the code: $out"
grep -q "float32" <<<"$out" || fail "text report lacks the fix: $out"
echo "e2e check_runtime_errors: ok"
