#!/usr/bin/env bash
# Sets up everything on a fresh Debian 12 machine, builds ortkit and runs its main job on a model
# the project generates: inspect, then check.
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
