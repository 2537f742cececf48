#!/usr/bin/env bash
# ortkit optimize (~30 s) on small models written with the onnx package: the written model's provenance in
# `ortkit inspect`, its outputs against the original's in onnxruntime's Python API (an independent oracle), a
# gate no rounding passes refusing every quantised candidate with the metric and writing nothing, an already
# quantised model getting no quantising candidate, int4 on a decoder step, float16 refused without a GPU, and
# a specific usage error for each bad flag.
source "$2/tests/support/e2e.sh"
need_python
"$python" "$src/tests/python/optimize_models.py" "$work" || fail "writing the models"

# The default run: proven and measured; written when a candidate is faster (exit 0), else nothing (exit 1).
set +e
"$ortkit" optimize "$work/perceptron.onnx" --out "$work/fast.onnx" --threads 1 --rounds 3 --format json >"$work/run.json" 2>"$work/err"
rc=$?
set -e
[ "$rc" = 0 ] || [ "$rc" = 1 ] || { cat "$work/err" "$work/run.json" >&2; fail "optimize exit $rc"; }
python3 - "$work/run.json" "$rc" <<'PY' || fail "optimize report"
import json, sys
r = json.load(open(sys.argv[1]))  # nothing but the JSON document on stdout
names = [c["name"] for c in r["candidates"]]
assert names == ["fuse", "int8-dynamic"], names
int8 = r["candidates"][1]
assert int8["proof"]["passed"], int8["proof"]
assert int8["passes"][0]["rewritten"] == {"MatMul": 2, "Gemm": 1}, int8["passes"]
assert int8["proof"]["dynamic_quantization"] and len(int8["latency_ms"]["round_p50"]) == 3, int8
assert r["written"] == (sys.argv[2] == "0") == bool(r["chosen"]), (r["written"], r["chosen"])
print("chosen:", r["chosen"] or "none", {c["name"]: round(c.get("speed_up", {}).get("ratio", 0), 2) for c in r["candidates"]})
PY
if [ "$rc" = 0 ]; then
  expect_rc 0 "$ortkit" inspect "$work/fast.onnx"
  expect_msg "optimized by ortkit"
  "$python" - "$work/perceptron.onnx" "$work/fast.onnx" <<'PY' || fail "the written model in onnxruntime"
import sys
import numpy as np
import onnxruntime as ort
x = np.random.default_rng(1).standard_normal((5, 256)).astype(np.float32)
a, b = (ort.InferenceSession(p, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0] for p in sys.argv[1:])
cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
assert cos.min() > 0.99 and (a.argmax(1) == b.argmax(1)).all(), (cos, a.argmax(1), b.argmax(1))
PY
fi

# A gate no rounding passes: refused before it is measured, the metric named, nothing written, exit 1.
expect_rc 1 "$ortkit" optimize "$work/perceptron.onnx" --out "$work/never.onnx" --passes int8-dynamic --max-drop cosine=0,top1=0
expect_msg "optimize.candidate-refused"
expect_msg "per-row cosine"
[ ! -e "$work/never.onnx" ] || fail "a refused candidate was written"

# An already quantised model: only fusions are tried.
"$python" - "$work/perceptron.onnx" "$work/quantised.onnx" <<'PY' || fail "quantising with onnxruntime"
import sys
from onnxruntime.quantization import QuantType, quantize_dynamic
quantize_dynamic(sys.argv[1], sys.argv[2], weight_type=QuantType.QInt8)
PY
set +e
"$ortkit" optimize "$work/quantised.onnx" --dry-run --threads 1 --rounds 2 --format json >"$work/q.json"
set -e
python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
assert [c['name'] for c in r['candidates']] == ['fuse'], r['candidates']
assert any(d['code'] == 'optimize.already-quantized' for d in r['diagnoses']), r['diagnoses']
" "$work/q.json" || fail "already quantised"
expect_rc 1 "$ortkit" optimize "$work/quantised.onnx" --dry-run --passes int8-dynamic --threads 1
expect_msg "the model is already quantised (dynamic int8"

# Static int8 on the convolutional model, calibrated on samples read as `run` reads its inputs.
"$python" - "$work/calibration" <<'PY' || fail "writing calibration samples"
import pathlib, sys
import numpy as np
out = pathlib.Path(sys.argv[1]); out.mkdir()
rng = np.random.default_rng(2)
for i in range(8):
    np.savez(out / f"sample_{i}.npz", x=rng.standard_normal((1, 3, 32, 32)).astype(np.float32))
np.savez(out.parent / "wrong.npz", pixels=np.zeros((1, 3, 32, 32), np.float32))
PY
set +e
"$ortkit" optimize "$work/convolutional.onnx" --out "$work/conv-int8.onnx" --calibration "$work/calibration" \
  --passes int8-static,int8-dynamic-conv --threads 1 --rounds 3 --format json >"$work/conv.json"
rc=$?
set -e
[ "$rc" = 0 ] || [ "$rc" = 1 ] || fail "optimize --calibration exit $rc"
python3 - "$work/conv.json" <<'PY' || fail "static int8 report"
import json, sys
r = json.load(open(sys.argv[1]))
static = next(c for c in r["candidates"] if c["name"] == "int8-static")
assert static["proof"]["passed"], static
p = static["passes"][0]
assert p["rewritten"]["Conv"] == 2 and p["rewritten"]["Relu"] == 2 and p["produced"]["QuantizeLinear"] >= 4, p
assert any("on 8 samples (minmax)" in n for n in p["notes"]), p["notes"]
conv = next(c for c in r["candidates"] if c["name"] == "int8-dynamic-conv")
assert conv["state"] != "chosen" or conv["speed_up"]["faster"], conv
print("static:", static["state"], round(static["speed_up"]["ratio"], 2), "dynamic conv:", conv["state"], round(conv["speed_up"]["ratio"], 2))
PY
expect_rc 2 "$ortkit" optimize "$work/convolutional.onnx" --out "$work/x.onnx" --calibration "$work/wrong.npz"
expect_msg "wrong.npz': tensor 'pixels' is not an input of the model (inputs: x)"
expect_rc 2 "$ortkit" optimize "$work/convolutional.onnx" --out "$work/x.onnx" --calibration "$work/nowhere"
expect_msg "no such file or folder"
expect_rc 2 "$ortkit" optimize "$work/convolutional.onnx" --out "$work/x.onnx" --calibration "$work/calibration" --calibration-method median
expect_msg "expected minmax, percentile or entropy"

# int4 on the decoder step: a default candidate there (four large MatMul, a cache), each MatMul rewritten to
# MatMulNBits (com.microsoft imported), proven and measured like any candidate; not on the perceptron.
set +e
"$ortkit" optimize "$work/decoder.onnx" --dry-run --threads 1 --rounds 3 --format json >"$work/dec.json" 2>"$work/err"
rc=$?
set -e
[ "$rc" = 0 ] || [ "$rc" = 1 ] || { cat "$work/err" >&2; fail "optimize decoder exit $rc"; }
python3 - "$work/dec.json" <<'PY' || fail "int4 report"
import json, sys
r = json.load(open(sys.argv[1]))
int4 = next(c for c in r["candidates"] if c["name"] == "int4")
p = int4["passes"][0]
assert p["rewritten"] == {"MatMul": 4} and p["produced"] == {"MatMulNBits": 4}, p
assert any("4-bit blocks of 32 along K" in n for n in p["notes"]), p["notes"]
assert int4["state"] != "failed" and int4["proof"]["outputs"], int4
assert int4["size_bytes"] < r["original_bytes"] / 4, (int4["size_bytes"], r["original_bytes"])
print("int4:", int4["state"], int4["accuracy"], round(int4.get("speed_up", {}).get("ratio", 0), 2))
PY
expect_rc 1 "$ortkit" optimize "$work/decoder.onnx" --dry-run --passes int4 --int4-block 128 --threads 1 --rounds 2 --max-drop cosine=0,top1=0
expect_msg "optimize.candidate-refused"
# Nothing int4 takes: the convolutional model has no MatMul; refused with the specific reason, nothing written.
expect_rc 1 "$ortkit" optimize "$work/convolutional.onnx" --out "$work/never4.onnx" --passes int4 --threads 1
expect_msg "optimize.nothing-to-rewrite"
expect_msg "int4: nothing to rewrite (no MatMul in the main graph"
[ ! -e "$work/never4.onnx" ] || fail "int4 with nothing to rewrite wrote a file"
expect_rc 2 "$ortkit" optimize "$work/decoder.onnx" --out "$work/x.onnx" --passes int4 --int4-block 48
expect_msg "int4-block"

# float16 is for a GPU provider: refused up front with why and what to do, whatever --provider says.
expect_rc 2 "$ortkit" optimize "$work/perceptron.onnx" --out "$work/x.onnx" --passes float16
expect_msg "float16 is for a GPU provider"
expect_msg "int8-dynamic or int4"
expect_rc 2 "$ortkit" optimize "$work/perceptron.onnx" --out "$work/x.onnx" --passes fuse,fuse+float16 --provider cuda
expect_msg "float16 is for a GPU provider"
[ ! -e "$work/x.onnx" ] || fail "a refused float16 run wrote a file"
# --help lists the passes this build has, and only those.
expect_rc 0 "$ortkit" optimize --help
expect_msg "Passes: fuse, int8-dynamic, int8-dynamic-conv, int8-static, int4"
if grep -q "float16" "$work/out"; then fail "--help names float16, which this build does not make"; fi

# Usage errors, each specific, exit 2.
expect_rc 2 "$ortkit" optimize "$work/perceptron.onnx" --out "$work/x.onnx" --passes fuse,int9
expect_msg "no pass 'int9'; the passes are fuse, int8-dynamic"
expect_rc 2 "$ortkit" optimize "$work/perceptron.onnx" --out "$work/x.onnx" --max-drop cosine=0.999
expect_msg "for a floor of 0.999 write cosine=0.001"
expect_rc 2 "$ortkit" optimize "$work/perceptron.onnx" --out "$work/perceptron.onnx"
expect_msg "which this command reads"
expect_rc 2 "$ortkit" optimize "$work/perceptron.onnx"
expect_msg "--out FILE is required"
expect_rc 2 "$ortkit" optimize "$work/missing.onnx" --out "$work/x.onnx"
expect_rc 2 "$ortkit" optimize "$work/perceptron.onnx" --out "$work/x.onnx" --dim batch=two
expect_msg "--dim batch=two"
echo "optimize: ok"
