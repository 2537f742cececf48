#!/usr/bin/env bash
# Peak resident memory of reading a 1 GiB float32 .npy with ortkit::ReadNpy, as a ratio of the
# file's size. The reader reads straight into the tensor's buffer, so the ratio should stay
# below 1.2 (the process's own libraries count too).
#   bench/npy_memory.sh [BUILD_DIR] [MIB]     defaults: build, 1024
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
mib="${2:-1024}"
ninja -C "$build" npy_memory >/dev/null
tool="$build/bench/npy_memory"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
"$tool" write "$scratch/big.npy" "$mib"
"$tool" read "$scratch/big.npy"
if [ -x /usr/bin/time ]; then
  peak_kib="$(/usr/bin/time -v "$tool" read "$scratch/big.npy" 2>&1 >/dev/null | awk -F': ' '/Maximum resident set size/ {print $2}')"
  size="$(stat -c %s "$scratch/big.npy")"
  awk -v peak="$peak_kib" -v size="$size" \
    'BEGIN { printf "/usr/bin/time  peak %.1f MiB = %.3f x the file\n", peak / 1024, peak * 1024 / size }'
fi
