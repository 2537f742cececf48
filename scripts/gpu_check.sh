#!/usr/bin/env bash
# The CUDA path end to end, for a machine with an NVIDIA GPU: the environment report, check on the CUDA
# provider, CPU-vs-CUDA numbers (validate --compare providers, with the nodes that fell back to the CPU),
# latency and throughput at batch 1/8/32 on both providers (bench, IO binding, the profile's Memcpy and
# fallback report), and serving on CUDA under 64 concurrent clients. Prints the figures that go into
# docs/performance.md. Needs ortkit built against the GPU flavour, or the CPU build with the GPU library
# on LD_LIBRARY_PATH (the default here), and CUDA 13 + cuDNN 9 where the loader finds them.
#
#   scripts/gpu_check.sh [MODEL.onnx]    the model defaults to a small BERT-like encoder (seq_len 128)
#
# Stops at the first step that fails, with its output; under 8 minutes on one GPU.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
ortkit="$build/bin/ortkit"
gpu_lib="${ORTKIT_GPU_LIB:-$root/.deps/onnxruntime-gpu-1.29.0/lib}"
out="${OUT:-$(mktemp -d)}"
say() { printf '\n\033[1m[gpu_check]\033[0m %s\n' "$*"; }
[ -x "$ortkit" ] || { echo "no $ortkit: scripts/build.sh first" >&2; exit 2; }
own_env="$("$ortkit" env --no-python --format json || true)"
if [[ "$own_env" != *CUDAExecutionProvider* ]]; then
  [ -d "$gpu_lib" ] || { echo "ortkit's runtime has no CUDA provider and $gpu_lib is missing: scripts/setup.sh" >&2; exit 2; }
  export LD_LIBRARY_PATH="$gpu_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
model="${1:-}"
if [ -z "$model" ]; then
  model="$out/bert-tiny.onnx"
  "$build/bin/ortkit_make_model" bert-tiny "$model" --layers 4 --hidden 256
fi
started=$SECONDS
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/GPU: /' || true

say "1/5 ortkit env --provider cuda"
"$ortkit" env --no-python --provider cuda | tee "$out/env.txt"

say "2/5 check --provider cuda"
"$ortkit" check "$model" --provider cuda

say "3/5 validate --compare providers=cpu,cuda (per-output error, CPU fallbacks)"
"$ortkit" validate "$model" --compare providers=cpu,cuda --format json >"$out/compare.json"
"$ortkit" validate "$model" --compare providers=cpu,cuda

say "4/5 bench: CPU and CUDA at batch 1, 8, 32"
"$ortkit" bench "$model" --provider cpu --batch 1,8,32 --dim seq_len=128 --duration 5s --format json \
  >"$out/bench_cpu.json"
"$ortkit" bench "$model" --provider cuda --batch 1,8,32 --dim seq_len=128 --duration 5s --io-binding --profile \
  --profile-prefix "$out/profile" --format json >"$out/bench_cuda.json"
python3 - "$out/bench_cpu.json" "$out/bench_cuda.json" <<'PY'
import json, sys
cpu, cuda = (json.load(open(p)) for p in sys.argv[1:3])
print(f"{'batch':>6} {'CPU p50 ms':>11} {'CUDA p50 ms':>12} {'CPU samples/s':>14} {'CUDA samples/s':>15} {'speed-up':>9}")
for a, b in zip(cpu["results"], cuda["results"]):
    pa, pb = a["latency_ms"]["p50"], b["latency_ms"]["p50"]
    print(f"{a['batch']:>6} {pa:11.3f} {pb:12.3f} {a['samples_per_s']:14.1f} {b['samples_per_s']:15.1f} {pa / pb:8.2f}x")
profile = cuda.get("profile") or {}
print("nodes per provider:", profile.get("providers"))
print("CPU fallbacks:", len(profile.get("cpu_fallbacks", [])), " memory copies:", len(profile.get("memory_copies", [])))
PY

say "5/5 serve on CUDA, perf at concurrency 64"
port=$((20000 + RANDOM % 20000))
"$ortkit" serve --model "m=$model" --provider cuda --http-port "$port" --grpc-port 0 >"$out/serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf "127.0.0.1:$port/v2/health/ready" >/dev/null && break; sleep 0.2; done
"$ortkit" perf --url "127.0.0.1:$port" --model m --dim seq_len=128 --concurrency 1,64 --duration 10
kill "$server"; wait "$server" 2>/dev/null || true
say "done in $((SECONDS - started)) s; reports in $out"
