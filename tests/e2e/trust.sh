#!/usr/bin/env bash
# A diagnosis tool lives on trust: a user's mistake, this machine's environment, ortkit's own limits or
# inputs of ortkit's making are never reported as a defect of the model. Each case below once was.
source "$2/tests/support/e2e.sh"

"$bin/ortkit_make_model" demo-encoder "$work/enc.onnx"
model() { "$bin/ortkit_make_model" from-text "$work/$1.onnx"; }
model seqout <<'TXT'
<ir_version: 8, opset_import: ["" : 17]>
split (float[N, 3] x) => (seq(float[?, 3]) pieces) {
  pieces = SplitToSequence <axis = 0> (x)
}
TXT
model relu4d <<'TXT'
<ir_version: 8, opset_import: ["" : 17]>
relu (float[a, b, c, d] x) => (float[a, b, c, d] y) {
  y = Relu (x)
}
TXT
model loop <<'TXT'
<ir_version: 8, opset_import: ["" : 17]>
sum (int64 M, bool cond, float[N, 3] init, float[N, 3] x) => (float[N, 3] final, float[K, N, 3] stacked) {
  final, stacked = Loop (M, cond, init) <body = loop_body (int64 i, bool cond_in, float[N, 3] acc_in)
                                                       => (bool cond_out, float[N, 3] acc_out, float[N, 3] scan_out) {
    cond_out = Identity (cond_in)
    acc_out = Add (acc_in, x)
    scan_out = Identity (acc_out)
  }>
}
TXT
model str2float <<'TXT'
<ir_version: 8, opset_import: ["" : 17]>
parse (string[N] x) => (float[N] y) {
  y = Cast <to = 1> (x)
}
TXT

echo "== every output a sequence: ortkit's limit, said as a note; the model runs"
expect_rc 0 "$ortkit" doctor "$work/seqout.onnx" --runs 2
expect_msg "verdict: HEALTHY (1 note)"
expect_msg "runtime.non-tensor-output"
expect_msg "no output of the model is a tensor: 'pieces' is a sequence"
grep -q "runtime.invalid-input" "$work/out" && fail "ortkit's limit reported as a wrong input"
expect_rc 0 "$ortkit" run "$work/seqout.onnx"
expect_msg "output 'pieces' is a sequence, map or optional"
expect_msg "computed, not fetched"
expect_rc 0 "$ortkit" validate "$work/seqout.onnx"
expect_msg "note: output 'pieces' is a sequence, map or optional"

echo "== four dynamic axes: the automatic sweep keeps its largest cell within the budget"
expect_rc 0 "$ortkit" validate "$work/relu4d.onnx" --no-batch-check --format json
python3 - "$work/out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
sweep = r["sweep"]
largest = 4
for axis in sweep["axes"]:
    assert axis["values"][0] == 1 and axis["values"][-1] > 4, axis
    largest *= axis["values"][-1]
assert largest * 64 <= 1 << 30, largest
assert any("stays within the memory budget of 1.0 GiB" in n for n in sweep["notes"]), sweep["notes"]
assert sweep["passed"], sweep
PY
expect_rc 0 "$ortkit" doctor "$work/relu4d.onnx" --runs 0
expect_msg "verdict: HEALTHY"
grep -q "sweep not run" "$work/out" && fail "doctor skipped the sweep: $(cat "$work/out")"

echo "== synthesised inputs a healthy model accepts: booleans true, strings that are numbers"
expect_rc 0 "$ortkit" doctor "$work/loop.onnx" --runs 0
expect_msg "verdict: HEALTHY"
expect_rc 0 "$ortkit" run "$work/loop.onnx" --dim N=2 --format json
python3 - "$work/out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
stacked = next(o for o in r["outputs"] if o["name"] == "stacked")
assert stacked["shape"][0] >= 1 and stacked["shape"][1:] == [2, 3], stacked  # the loop ran
assert next(i for i in r["inputs"] if i["name"] == "cond")["source"] == "synthesised: all true", r["inputs"]
PY
expect_rc 0 "$ortkit" doctor "$work/str2float.onnx" --runs 0
expect_msg "verdict: HEALTHY"
expect_rc 0 "$ortkit" run "$work/str2float.onnx" --dim N=5
expect_msg "synthesised: whole numbers in \[0, 4) as text"

echo "== an unavailable provider is this machine's fault: exit 2, as run and validate give"
"$ortkit" env --no-python --format json >"$work/env.json" || true
if python3 -c 'import json,sys; sys.exit("CUDAExecutionProvider" in json.load(open(sys.argv[1]))["ortkit_runtime"]["providers"])' "$work/env.json"; then
  expect_rc 2 "$ortkit" run "$work/enc.onnx" --provider cuda
  for provider in cuda tensorrt; do
    expect_rc 2 "$ortkit" check "$work/enc.onnx" --provider "$provider"
    expect_msg "runtime.provider-unavailable"
    expect_msg "cannot run on this machine: the load layer was not checked (exit 2)"
  done
  "$ortkit" check "$work/enc.onnx" --provider cuda --format json >"$work/check.json" || true
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["provider_unavailable"] is True, r' "$work/check.json"
  expect_rc 2 "$ortkit" doctor "$work/enc.onnx" --provider cuda
  expect_msg "the cuda execution provider cannot run on this machine, so the model was not examined"
  expect_msg "env.provider-not-built"
  grep -q "verdict: BROKEN" "$work/out" && fail "the environment reported as a broken model"
  expect_rc 2 "$ortkit" doctor "$work/enc.onnx" --provider cpu cuda --format json
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert "cannot run on this machine" in r["error"] and any(d["code"] == "env.provider-not-built" for d in r["diagnoses"]), r' "$work/out"
fi

echo "== size flags the model cannot take: doctor says so up front, as run does"
expect_rc 2 "$ortkit" run "$work/enc.onnx" --shape x=1x2
expect_msg "\-\-shape x=\[1, 2\]: the input has rank 3"
expect_rc 2 "$ortkit" doctor "$work/enc.onnx" --shape x=1x2
expect_msg "ortkit doctor: --shape x=\[1, 2\]: the input has rank 3 (float32\[batch, seq_len, 64\])"
expect_rc 2 "$ortkit" doctor "$work/enc.onnx" --dim nosuch=3
expect_msg "ortkit doctor: --dim nosuch=3: no input has a dimension named 'nosuch'; symbolic dimensions: batch, seq_len"
expect_rc 0 "$ortkit" doctor "$work/enc.onnx" --dim batch=2 --runs 0 --no-sweep

echo "== --per-output names an output of the model"
expect_rc 2 "$ortkit" validate "$work/enc.onnx" --per-output nosuch:1:1
expect_msg "the model has no output named 'nosuch'; its outputs are: y"
expect_rc 0 "$ortkit" validate "$work/enc.onnx" --per-output y:1e-4:1e-3 --sweep batch=1,2

echo "== --shape and --dim size synthesised inputs: for an input read from a file they are refused"
"$ortkit" run "$work/enc.onnx" --dim batch=2,seq_len=5 --output-dir "$work/ref" --save-format pb >/dev/null
x="$work/ref/test_data_set_0/input_0.pb"
expect_rc 2 "$ortkit" run "$work/enc.onnx" --input "x=$x" --shape x=3x5x64
expect_msg "\-\-shape x=\[3, 5, 64\]: input 'x' is read from a file"
expect_msg "not inputs read from files"
expect_rc 2 "$ortkit" run "$work/enc.onnx" --input "x=$x" --dim batch=3
expect_msg "\-\-dim batch=3: input 'x' is read from a file .* where dimension 0 ('batch') is 2"
expect_rc 0 "$ortkit" run "$work/enc.onnx" --input "x=$x" --dim batch=2
# NAME=FILE with a name the model does not have: the name is the mistake, not the path.
expect_rc 2 "$ortkit" run "$work/enc.onnx" --input "nosuch=$x"
expect_msg "the model has no input named 'nosuch' (inputs: x)"
echo "e2e trust: ok"
