#!/usr/bin/env bash
# A dynamic-shape sweep of 12 shapes on a 100 MiB model: one session, and wall time against the sum
# of the same 12 runs made bare with Ort::Session::Run (target: ratio <= 1.2). Prints the medians.
#   bench/sweep_overhead.sh [BUILD_DIR] [ROUNDS]     defaults: build, 5
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
rounds="${2:-5}"
ninja -C "$build" ortkit_make_large_model sweep_overhead >/dev/null
scratch="$(mktemp -d /tmp/ortkit-sweep-overhead.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
"$build/bench/ortkit_make_large_model" 100 "$scratch/model.onnx"
"$build/bench/sweep_overhead" "$scratch/model.onnx" "$rounds"
