#!/usr/bin/env bash
# Sets up everything on a fresh Debian 12 machine, builds ortkit and runs its main job on a model
# the project generates (a Transformer encoder block with dynamic batch and sequence axes):
# inspect, check, one run saved as a reference, validate against it with the shape sweep, then doctor.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build="${BUILD_DIR:-$root/build}"
out="$root/out/demo"
mkdir -p "$out"
"$build/bin/ortkit_make_model" demo-encoder "$out/encoder.onnx"
echo
"$build/bin/ortkit" inspect "$out/encoder.onnx"
echo
"$build/bin/ortkit" check "$out/encoder.onnx"
echo
"$build/bin/ortkit" run "$out/encoder.onnx" --dim batch=2,seq_len=8 --output-dir "$out/reference" --save-format pb
echo
"$build/bin/ortkit" validate "$out/encoder.onnx" --reference "$out/reference" --sweep auto
echo
# The whole chain in one verdict (exit 0 when healthy): check, load, validate, sweep, baseline latency.
"$build/bin/ortkit" doctor "$out/encoder.onnx" --reference "$out/reference"
