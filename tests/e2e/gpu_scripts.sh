#!/usr/bin/env bash
# The scripts that check a GPU machine, kept working on this one: scripts/trim_cuda_kernels.py on the real
# CUDA provider of the GPU build (sm_90's kernels kept byte for byte, every other architecture's zeroed,
# nothing else touched), and scripts/gpu_check.sh rehearsed end to end on the CPU (--provider cpu), so the
# commands and report fields it relies on are the ones ortkit has.
source "$2/tests/support/e2e.sh"
provider="$src/.deps/onnxruntime-gpu-1.29.0/lib/libonnxruntime_providers_cuda.so"
[ -f "$provider" ] || fail "no $provider: run scripts/setup.sh"

# 1. Trimming: the same size, only fat-binary payloads changed, sm_90 kept.
expect_rc 0 python3 "$src/scripts/trim_cuda_kernels.py" "$provider" "$work/cuda90.so" --arch 90
expect_msg "kept sm_90"
expect_msg "zeroed sm_75"
python3 - "$provider" "$work/cuda90.so" "$src/scripts" <<'PY'
import sys
sys.path.insert(0, sys.argv[3])
from trim_cuda_kernels import section
a, b = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
assert len(a) == len(b), (len(a), len(b))
start, size = section(a, ".nv_fatbin")
assert a[:start] == b[:start] and a[start + size:] == b[start + size:], "bytes outside .nv_fatbin changed"
zeroed = b[start:start + size].count(0) - a[start:start + size].count(0)
assert zeroed > 100_000_000, f"only {zeroed} bytes zeroed"  # sm_75..sm_120 but sm_90: about 134 MB
assert b[start:start + size].count(0) < size - 30_000_000, "sm_90's kernels (about 32 MB) were not kept"
PY
readelf -d "$work/cuda90.so" | grep -q "libcudart.so.13" || fail "the trimmed library's dynamic section is unreadable"
expect_rc 1 python3 "$src/scripts/trim_cuda_kernels.py" "$provider" "$work/x.so" --arch 52
expect_msg "no kernels for sm_52; it has sm_75, sm_80, sm_86, sm_89, sm_90, sm_120"
[ ! -e "$work/x.so" ] || fail "a refused trim wrote its output"
echo "not a library" >"$work/text.so"
expect_rc 1 python3 "$src/scripts/trim_cuda_kernels.py" "$work/text.so" "$work/x.so" --arch 90
expect_msg "cannot read it as a shared library: not a 64-bit little-endian ELF file"

# 2. gpu_check.sh rehearsed on the CPU: every step passes and prints its figures.
expect_rc 0 env BUILD_DIR="$(dirname "$bin")" OUT="$work/gpu" GPU_CHECK_SECONDS=1 bash "$src/scripts/gpu_check.sh" --provider cpu
expect_msg "5/5 serve on cpu"
expect_msg "speed-up"
expect_msg "nodes per provider: CPUExecutionProvider"
grep -Eq "^ +64 +[0-9.]+ " "$work/out" || { cat "$work/out" >&2; fail "no perf row at concurrency 64"; }
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["profile"]["providers"], d["profile"]' \
  "$work/gpu/bench_device.json"
echo "gpu_scripts: ok"
