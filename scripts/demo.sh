#!/usr/bin/env bash
# Sets up everything on a fresh Debian 12 machine, builds ortkit and runs its main job, the whole
# chain on a small BERT-like PyTorch model the project ships (tests/gallery/torch_models.py):
# export with the framework's outputs as references, inspect, check, validate against those
# references with the dynamic-shape sweep, doctor's one verdict, and a performance baseline.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
ortkit="${BUILD_DIR:-$root/build}/bin/ortkit"
out="$root/out/demo"
rm -rf "$out/bert"
mkdir -p "$out"
step() { printf '\n\033[1m$ ortkit %s\033[0m\n' "$*"; "$ortkit" "$@"; }

step export torch --module "$root/tests/gallery/torch_models.py:bert" \
  --inputs "input_ids:int64[2,16]=1..1000" "attention_mask:int64[2,16]" "token_type_ids:int64[2,16]=0..2" \
  --dynamic auto --sequence-axis 1 --out "$out/bert"
step inspect "$out/bert/model.onnx"
step check "$out/bert/model.onnx"
step validate "$out/bert/model.onnx" --reference "$out/bert/test_data_set_0" --sweep auto
# The whole chain in one verdict (exit 0 when healthy): check, load, validate, sweep, baseline latency.
step doctor "$out/bert"
step bench "$out/bert/model.onnx" --batch 1,8,32 --dim seq_len=32 --duration 1 --plot "$out/bert-bench.svg"
echo
echo "plot of latency and throughput against batch size: $out/bert-bench.svg"
