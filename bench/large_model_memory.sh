#!/usr/bin/env bash
# Peak resident memory of `ortkit inspect`, `ortkit check --no-runtime` and `ortkit check` on a large model, as a
# ratio of the model's size (the .onnx file plus its external data). Targets: an embedded model is
# held once (ratio under ~1.3: the weights plus the process's libraries); with external data the
# weights stay on disk and the ratio is far below 1.
#   bench/large_model_memory.sh [BUILD_DIR] [SIZE_MB]     defaults: build, 600
# The models are written to a temporary folder under /tmp and removed afterwards (KEEP=1 keeps them).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
size_mb="${2:-600}"
ninja -C "$build" ortkit_make_large_model ortkit_cli >/dev/null
ortkit="$build/bin/ortkit"
make_model="$build/bench/ortkit_make_large_model"
[ -x /usr/bin/time ] || { echo "needs GNU time (apt-get install time)" >&2; exit 1; }

scratch="$(mktemp -d /tmp/ortkit-large-model.XXXXXX)"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$scratch"' EXIT

# Runs a command under /usr/bin/time -v; prints "PEAK_KIB WALL_SECONDS EXIT_CODE".
measure() {
  local report="$scratch/time.txt" rc=0
  /usr/bin/time -v -o "$report" "$@" >/dev/null 2>"$scratch/stderr.txt" || rc=$?
  awk -F': ' -v rc="$rc" '
    /Maximum resident set size/ { peak = $2 }
    /Elapsed \(wall clock\)/ { n = split($2, t, ":"); wall = (n == 3) ? t[1] * 3600 + t[2] * 60 + t[3] : t[1] * 60 + t[2] }
    END { printf "%d %.1f %d\n", peak, wall, rc }' "$report"
}

echo "writing ${size_mb} MiB models to $scratch"
read -r gen_embedded_kib gen_embedded_s _ < <(measure "$make_model" "$size_mb" "$scratch/embedded.onnx")
read -r gen_external_kib gen_external_s _ < <(measure "$make_model" "$size_mb" "$scratch/external.onnx" --external)
printf "generator peak RSS: embedded %.1f MiB (%.1f s), external %.1f MiB (%.1f s)\n\n" \
  "$(bc -l <<<"$gen_embedded_kib / 1024")" "$gen_embedded_s" "$(bc -l <<<"$gen_external_kib / 1024")" "$gen_external_s"

# Baseline: the process with its libraries and nothing loaded (ONNX Runtime, the ONNX library).
read -r baseline_kib _ _ < <(measure "$ortkit" --version)

printf "%-9s %-20s %10s %10s %7s %7s %5s\n" model command "model MiB" "peak MiB" ratio "wall s" exit
for variant in embedded external; do
  model="$scratch/$variant.onnx"
  bytes=$(stat -c %s "$model")
  [ -f "$model.data" ] && bytes=$((bytes + $(stat -c %s "$model.data")))
  for command in "inspect" "check --no-runtime" "check"; do
    # shellcheck disable=SC2086
    read -r peak_kib wall rc < <(measure "$ortkit" $command "$model")
    printf "%-9s %-20s %10.1f %10.1f %7.3f %7.1f %5s\n" "$variant" "$command" "$(bc -l <<<"$bytes / 1048576")" \
      "$(bc -l <<<"$peak_kib / 1024")" "$(bc -l <<<"$peak_kib * 1024 / $bytes")" "$wall" "$rc"
  done
done
printf "\nbaseline (ortkit --version): %.1f MiB; ratio = peak RSS / (model file + external data)\n" \
  "$(bc -l <<<"$baseline_kib / 1024")"
