#!/usr/bin/env bash
# Sets up everything on a fresh Debian 12 machine, builds ortkit and runs its main job, the whole
# chain on a Transformers model from a local checkpoint the project writes (a tiny BERT, random
# weights, save_pretrained; nothing is downloaded): export with PyTorch's default exporter and
# Transformers' own outputs as references, inspect, check, validate against those references with the
# dynamic-shape sweep, doctor's one verdict, and a performance baseline.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
ortkit="${BUILD_DIR:-$root/build}/bin/ortkit"
python="$root/.deps/python/bin/python"
out="$root/out/demo"
rm -rf "$out/bert" "$out/checkpoints"
mkdir -p "$out"
step() { printf '\n\033[1m$ ortkit %s\033[0m\n' "$*"; "$ortkit" "$@"; }

printf '\n\033[1mwriting a tiny BERT checkpoint (save_pretrained) to %s\033[0m\n' "$out/checkpoints/bert"
PYTHONPATH="$root/python" "$python" "$root/tests/gallery/hf_checkpoints.py" "$out/checkpoints" bert 2>/dev/null
step export hf "$out/checkpoints/bert" --task feature-extraction --out "$out/bert"
step inspect "$out/bert/model.onnx"
step check "$out/bert/model.onnx"
step validate "$out/bert/model.onnx" --reference "$out/bert/test_data_set_0" --sweep auto
# The whole chain in one verdict (exit 0 when healthy): check, load, validate, sweep, baseline latency.
step doctor "$out/bert"
step bench "$out/bert/model.onnx" --batch 1,8,32 --dim seq_len=32 --duration 1 --plot "$out/bert-bench.svg"
echo
echo "plot of latency and throughput against batch size: $out/bert-bench.svg"
