#!/usr/bin/env bash
# ortkit run and ortkit validate end to end: references written by `run`, mismatches, the sweep on a
# model with a baked batch size, and the errors for bad flags and bad references.
source "$2/tests/support/e2e.sh"

"$bin/ortkit_make_model" demo-encoder "$work/encoder.onnx"
"$bin/ortkit_make_model" demo-encoder "$work/baked.onnx" --baked-batch 2

# run: statistics per output, saved in each format.
"$ortkit" run "$work/encoder.onnx" --dim batch=2,seq_len=8 --format json >"$work/run.json"
python3 - "$work/run.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["inputs"][0]["shape"] == [2, 8, 64], r
out = r["outputs"][0]
assert out["name"] == "y" and out["shape"] == [2, 8, 64] and out["nan"] == 0 and out["min"] < out["max"], out
PY
for fmt in npy npz pb; do "$ortkit" run "$work/encoder.onnx" --output-dir "$work/$fmt" --save-format "$fmt" >/dev/null; done
[ -f "$work/npy/y.npy" ] && [ -f "$work/npz/outputs.npz" ] && [ -f "$work/pb/test_data_set_0/output_0.pb" ] || fail "saved outputs missing"

# validate against a reference written by run: passes; and with --input from that reference.
"$ortkit" validate "$work/encoder.onnx" --reference "$work/pb" >"$work/out" || fail "validate against own reference"
grep -q "y .*pass" "$work/out" || fail "no pass row: $(cat "$work/out")"
"$ortkit" run "$work/encoder.onnx" --input "$work/pb/test_data_set_0" >/dev/null || fail "run --input DIR"

# A reference whose outputs belong to other inputs fails with exit 1 and shows the worst element.
"$ortkit" run "$work/encoder.onnx" --seed 7 --output-dir "$work/other" --save-format pb >/dev/null
mkdir -p "$work/mixed"; cp "$work/pb/test_data_set_0/input_0.pb" "$work/other/test_data_set_0/output_0.pb" "$work/mixed/"
expect_rc 1 "$ortkit" validate "$work/encoder.onnx" --reference "$work/mixed"
grep -q "worst at \[" "$work/out" || fail "no worst element: $(cat "$work/out")"
expect_rc 1 "$ortkit" validate "$work/encoder.onnx" --reference "$work/mixed" --format json
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["verdict"]=="fail"; o=r["reference"]["cases"][0]["comparison"]["outputs"][0]; assert o["mismatches"]>0 and "worst" in o, o' "$work/out"
# ... and passes with a tolerance wide enough.
"$ortkit" validate "$work/encoder.onnx" --reference "$work/mixed" --per-output y:100:0 >/dev/null || fail "--per-output tolerance ignored"

# The sweep names the node where a baked batch breaks, and the Reshape that baked it.
expect_rc 1 "$ortkit" validate "$work/baked.onnx" --sweep batch=1,2,3 --dim seq_len=4 --format json
python3 - "$work/out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cells = r["sweep"]["cells"]
assert [c["dims"]["batch"] for c in cells] == [1, 2, 3]
bad = cells[2]
assert bad["state"] == "failed"
d = bad["diagnoses"][0]
assert d["code"] == "runtime.shape-mismatch" and d["location"]["node"] == "residual1", d
assert "Reshape 'context'" in d["cause"], d["cause"]
PY

# A healthy model passes the automatic sweep and the opt-level cross-check.
"$ortkit" validate "$work/encoder.onnx" --format json >"$work/auto.json" || fail "healthy model fails validate"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["compare"]["passed"] and len(r["sweep"]["cells"]) >= 4' "$work/auto.json"
# Each side says where its nodes ran: all on the CPU here, no copies, no fallbacks.
python3 - "$work/auto.json" <<'PY'
import json, sys
placement = json.load(open(sys.argv[1]))["compare"]["placement"]
for side in ("a", "b"):
    p = placement[side]
    assert [q["name"] for q in p["providers"]] == ["CPUExecutionProvider"] and p["providers"][0]["nodes"] > 0, p
    assert p["memory_copies"] == 0 and p["cpu_fallbacks"] == [] and "note" not in p, p
PY
"$ortkit" validate "$work/encoder.onnx" --compare opt-levels --dim batch=2,seq_len=8 >"$work/out" || fail "--compare opt-levels"
grep -Eq "^  nodes +optimisations off: CPUExecutionProvider [0-9]+ \| optimisations all: CPUExecutionProvider [0-9]+$" \
  "$work/out" || fail "no nodes line: $(cat "$work/out")"

# Bad flags and bad references: exit 2 with a specific message.
expect_rc 2 "$ortkit" validate "$work/encoder.onnx" --sweep sequence=1,2
grep -q "sequence" "$work/out" || fail "unknown sweep dim not named"
expect_rc 2 "$ortkit" run "$work/encoder.onnx" --dim nosuch=3
grep -q "no input has a dimension named 'nosuch'" "$work/out" || fail "--dim message: $(cat "$work/out")"
expect_rc 2 "$ortkit" validate "$work/encoder.onnx" --reference "$work/missing"
expect_rc 2 "$ortkit" validate "$work/encoder.onnx" --reference "$work/npy"
grep -q "validate.reference-input" "$work/out" || fail "reference without inputs: $(cat "$work/out")"
head -c 40 "$work/pb/test_data_set_0/input_0.pb" >"$work/cut.pb"
expect_rc 2 "$ortkit" run "$work/encoder.onnx" --input "x=$work/cut.pb"
expect_rc 2 "$ortkit" validate "$work/encoder.onnx" --compare providers=cpu,nosuch
expect_rc 2 "$ortkit" run "$work/encoder.onnx" --shape x=1x2
echo "e2e validate: ok"
