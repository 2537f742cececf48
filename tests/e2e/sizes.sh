#!/usr/bin/env bash
# Sizes found by running, the same in every command: a model with unnamed dims (float[?, ?]) that needs a
# minimum length runs under `run`, `validate`, `bench` and `doctor` with no argument, each unnamed dim can be
# set as INPUT:AXIS, an image starts at 224 x 224, and the reports say what the model needs and why a sweep
# stops where it does. Failures at the file's own sizes are shown, and said once.
source "$2/tests/support/e2e.sh"
make() { "$bin/ortkit_make_model" from-text "$work/$1.onnx"; }

# tests/data/models: an audio front end whose reflect pad needs 33 samples, and a 100-row position table.
for name in unnamed_audio position_table; do make "$name" <"$src/tests/data/models/$name.txt"; done
make image <<'TXT'
<ir_version: 8, opset_import: ["" : 17]>
image (float[?, 3, ?, ?] x) => (float[?, 4, ?, ?] y) {
  shape = Constant <value = int64[4] {4, 3, 5, 5}> ()
  w = ConstantOfShape <value = float[1] {0.01}> (shape)
  y = Conv (x, w)
}
TXT
make nan <<'TXT'
<ir_version: 8, opset_import: ["" : 17]>
nan (float[batch, 8] x) => (float[batch, 8] y) {
  zero = Constant <value = float[1] {0}> ()
  z = Mul (x, zero)
  y = Div (z, zero)
}
TXT

# run: the guessed length fails, so it is grown, and the report says what the model needs.
expect_rc 0 "$ortkit" run "$work/unnamed_audio.onnx"
expect_msg "needs at least 33"
expect_rc 0 "$ortkit" run "$work/unnamed_audio.onnx" --dim x:1=64
expect_msg "\[1, 64\]"
"$ortkit" run "$work/image.onnx" --format json >"$work/image.json"
python3 - "$work/image.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["inputs"][0]["shape"] == [1, 3, 224, 224], r["inputs"]
PY

# validate: the cross-check runs where the model runs, and the sweep covers both unnamed axes.
expect_rc 0 "$ortkit" validate "$work/unnamed_audio.onnx"
expect_msg "PASS"
expect_msg "x:0  x:1"
expect_rc 0 "$ortkit" validate "$work/unnamed_audio.onnx" --sweep x:1=64,128
# Why the sweep stops at 100 is in the text, not only in the JSON.
expect_rc 0 "$ortkit" validate "$work/position_table.onnx"
expect_msg "runs up to 100"
# Every dimension set: the one run is shown with its finding.
expect_rc 1 "$ortkit" validate "$work/nan.onnx" --dim batch=2
expect_msg "sweep.nan-inf"
expect_msg "one run"

# bench: unnamed dims are settable, and an image is timed at 224 x 224, said in the report.
expect_rc 0 "$ortkit" bench "$work/unnamed_audio.onnx" --dim x:1=512 --iterations 2
expect_msg "x:1=512"
expect_rc 0 "$ortkit" bench "$work/image.onnx" --iterations 2
expect_msg "x:2=224 x:3=224"

# doctor: an input shaped by --shape is not swept; a failure at fixed sizes is one finding.
"$ortkit" doctor "$work/unnamed_audio.onnx" --shape x=1x512 --runs 2 --format json >"$work/doctor.json"
python3 - "$work/doctor.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["verdict"] == "healthy", r["diagnoses"]
axes = [a["dim"] for a in r["providers"][0]["sweep"]["axes"]]
assert "x:0" not in axes and "x:1" not in axes, axes
PY
echo "sizes passed"
