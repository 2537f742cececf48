#!/usr/bin/env bash
# `ortkit bench` against a plain onnxruntime-Python timing loop, in one script: demo-encoder and
# bert-tiny at batch 1 and 16, both pinned to the same CPU. Prints both medians and the ratio
# (target: within 5%).
#   bench/python_agreement.sh [BUILD_DIR] [extra python_agreement.py flags]
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$src/build}"; shift || true
python="${ORTKIT_PYTHON:-$src/.deps/python/bin/python}"
"$python" -c 'import onnxruntime' 2>/dev/null || { echo "python_agreement: no onnxruntime in $python (set ORTKIT_PYTHON)" >&2; exit 77; }
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
"$build/bin/ortkit_make_model" demo-encoder "$work/demo-encoder.onnx" >/dev/null
"$build/bin/ortkit_make_model" bert-tiny "$work/bert-tiny.onnx" >/dev/null
cpus=""
if command -v taskset >/dev/null; then
  # The last CPU the shell may use: one core for both, so neither gets a quieter one.
  cpus="$(taskset -cp $$ | sed 's/.*: //' | tr ',' '\n' | tail -1 | sed 's/.*-//')"
fi
echo "python_agreement: $("$build/bin/ortkit" --version), python $python, taskset CPUs: ${cpus:-none}"
"$python" "$src/bench/python_agreement.py" --ortkit "$build/bin/ortkit" \
  --model "demo-encoder=$work/demo-encoder.onnx" --model "bert-tiny=$work/bert-tiny.onnx" \
  ${cpus:+--cpus "$cpus"} "$@"
