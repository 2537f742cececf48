#!/usr/bin/env bash
# ortkit doctor's next step (~20 s): a healthy model whose float MatMul/Gemm weights are worth quantising ends
# its text report with the `ortkit optimize` command and the fact behind it (one line, after the latency; JSON
# next_step); a model of one Relu, a quantised model and a run without a latency do not.
source "$2/tests/support/e2e.sh"
need_python
"$python" "$src/tests/python/optimize_models.py" "$work" || fail "writing the models"
quick=(--no-sweep --runs 3)

expect_rc 0 "$ortkit" doctor "$work/perceptron.onnx" "${quick[@]}"
expect_msg "HEALTHY"
expect_msg "next: \`ortkit optimize $work/perceptron.onnx --out fast.onnx\` (MatMul/Gemm hold 100% of the weights; "
[ "$(grep -c 'next: ' "$work/out")" = 1 ] || fail "the next step is one line: $(cat "$work/out")"
tail -2 "$work/out" | grep -q "next: " || fail "the next step ends the report: $(cat "$work/out")"
"$ortkit" doctor "$work/perceptron.onnx" "${quick[@]}" --format json >"$work/d.json"
python3 -c 'import json,sys; n=json.load(open(sys.argv[1]))["next_step"]; assert n.startswith("`ortkit optimize"), n' \
  "$work/d.json" || fail "JSON next_step"

# No latency, no next step: the suggestion stands on a measured, healthy model.
expect_rc 0 "$ortkit" doctor "$work/perceptron.onnx" --no-sweep --runs 0
if grep -q "next: " "$work/out"; then fail "a next step without a latency: $(cat "$work/out")"; fi

printf '<ir_version: 8, opset_import: ["" : 17]>\nrelu (float[1, 64] x) => (float[1, 64] y) { y = Relu(x) }\n' |
  "$bin/ortkit_make_model" from-text "$work/relu.onnx"
"$ortkit" doctor "$work/relu.onnx" "${quick[@]}" --format json >"$work/r.json" || true
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["next_step"] is None, r["next_step"]' "$work/r.json" ||
  fail "a next step for a Relu"

"$python" -c 'import sys; from onnxruntime.quantization import quantize_dynamic as q; q(sys.argv[1], sys.argv[2])' \
  "$work/perceptron.onnx" "$work/quantised.onnx" || fail "quantising with onnxruntime"
set +e
"$ortkit" doctor "$work/quantised.onnx" "${quick[@]}" >"$work/out" 2>&1
set -e
if grep -q "next: \`ortkit optimize" "$work/out"; then fail "a next step for a quantised model: $(cat "$work/out")"; fi
echo "e2e doctor: ok"
