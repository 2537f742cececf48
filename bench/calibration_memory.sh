#!/usr/bin/env bash
# Peak resident memory of static int8 calibration against the number of samples: `ortkit optimize
# --passes int8-static --dry-run` on a BERT-like encoder, calibrated on 1 sample and then on N samples
# (token ids [1, 128]), once per calibration method. Calibration reads one sample at a time and keeps
# only the reduced ranges (minmax) or fixed-size histograms (percentile, entropy), so the growth from 1
# to N samples should stay below the model's own size.
#   bench/calibration_memory.sh [BUILD_DIR] [SAMPLES] [LAYERS] [HIDDEN]   defaults: build, 256, 12, 768 (BERT-base)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
samples="${2:-256}"
layers="${3:-12}"
hidden="${4:-768}"
python="$root/.deps/python/bin/python"
ninja -C "$build" ortkit ortkit_make_model >/dev/null
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

"$build/bin/ortkit_make_model" bert-tiny "$scratch/encoder.onnx" --layers "$layers" --hidden "$hidden" >/dev/null
"$python" - "$scratch" "$samples" <<'PY'
import pathlib, sys
import numpy as np
out, count = pathlib.Path(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(7)
for folder, n in (("one", 1), ("many", count)):
    (out / folder).mkdir()
    for i in range(n):
        np.savez(out / folder / f"sample_{i:04d}.npz",
                 input_ids=rng.integers(0, 100, (1, 128), dtype=np.int64),
                 attention_mask=np.ones((1, 128), np.int64),
                 token_type_ids=np.zeros((1, 128), np.int64))
PY

model_mib="$(awk -v s="$(stat -c %s "$scratch/encoder.onnx")" 'BEGIN { printf "%.1f", s / 1048576 }')"
echo "encoder: $layers layers, hidden $hidden, $model_mib MiB; $samples samples of [1, 128]"
printf '%-11s %12s %12s %12s %s\n' method "1 sample" "$samples samples" growth "growth / model"
peak_mib() {  # peak_mib FOLDER METHOD: the optimize run's peak resident memory, MiB (exit 1, nothing chosen, is fine)
  { /usr/bin/time -v "$build/bin/ortkit" optimize "$scratch/encoder.onnx" --dry-run --passes int8-static \
    --calibration "$scratch/$1" --calibration-method "$2" --threads 1 --rounds 1 --format json 2>&1 >/dev/null || true; } |
    awk -F': ' '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }'
}
for method in minmax percentile entropy; do
  one="$(peak_mib one "$method")"
  many="$(peak_mib many "$method")"
  awk -v m="$method" -v a="$one" -v b="$many" -v model="$model_mib" -v n="$samples" \
    'BEGIN { printf "%-11s %9.1f MiB %9.1f MiB %9.1f MiB %8.2f %s\n", m, a, b, b - a, (b - a) / model,
             (b - a < model ? "(below the model size)" : "(ABOVE the model size)") }'
done
