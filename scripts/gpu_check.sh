#!/usr/bin/env bash
# The CUDA path end to end, for a machine with an NVIDIA GPU: the environment report, check on the CUDA
# provider, CPU-vs-CUDA numbers (validate --compare providers, with the nodes that fell back to the CPU),
# latency and throughput at batch 1/8/32 on both providers (bench with device IO binding, the profile's
# Memcpy and fallback report), and serving on CUDA under 64 concurrent clients. Prints the figures that go
# into docs/performance.md. Needs ortkit built against the GPU flavour, or the CPU build with the GPU library
# on LD_LIBRARY_PATH (the default here), and CUDA 13 + cuDNN 9 where the loader finds them. On a machine
# with no build tools, scripts/gpu_bundle.sh packs all of it.
#
#   scripts/gpu_check.sh [--provider cuda] [MODEL.onnx]
#
# The model defaults to a small BERT-like encoder (4 layers, hidden 256, seq_len 128). --provider cpu
# rehearses every step on a machine without a GPU. Every step runs even when an earlier one fails; the exit
# status is the number of failed steps. Reports go to $OUT (default: a new temporary folder). Under 8 minutes;
# GPU_CHECK_SECONDS (default 5) is each bench shape's and twice each perf step's measuring time.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
ortkit="$build/bin/ortkit"
gpu_lib="${ORTKIT_GPU_LIB:-$root/.deps/onnxruntime-gpu-1.29.0/lib}"
out="${OUT:-$(mktemp -d)}"
provider=cuda
model=""
seconds="${GPU_CHECK_SECONDS:-5}"
while [ $# -gt 0 ]; do
  case "$1" in
    --provider) provider="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) model="$1"; shift ;;
  esac
done
say() { printf '\n\033[1m[gpu_check]\033[0m %s\n' "$*"; }
failed=()
step() {  # step NAME COMMAND...: runs it; a failure is recorded, returned, and the script goes on
  local name="$1"; shift
  say "$name"
  "$@" || { echo "[gpu_check] FAILED: $name (exit $?)"; failed+=("$name"); return 1; }
}
[ -x "$ortkit" ] || { echo "no $ortkit: scripts/build.sh first" >&2; exit 2; }
mkdir -p "$out"
if [ "$provider" != cpu ] && [[ "$("$ortkit" env --no-python --format json || true)" != *CUDAExecutionProvider* ]]; then
  [ -d "$gpu_lib" ] || { echo "ortkit's runtime has no CUDA provider and $gpu_lib is missing: scripts/setup.sh" >&2; exit 2; }
  export LD_LIBRARY_PATH="$gpu_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
if [ -z "$model" ]; then
  model="$out/bert-tiny.onnx"
  "$build/bin/ortkit_make_model" bert-tiny "$model" --layers 4 --hidden 256 || exit 2
fi
started=$SECONDS
gpu="$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
[ -n "$gpu" ] && echo "GPU: $gpu"
echo "provider: $provider  model: $model  reports: $out"

step "1/5 ortkit env --provider $provider" bash -c '"$0" env --no-python --provider "$1" | tee "$2/env.txt"' \
  "$ortkit" "$provider" "$out"
step "2/5 check --provider $provider" "$ortkit" check "$model" --provider "$provider"
compare="providers=cpu,$provider"
[ "$provider" = cpu ] && compare=opt-levels  # a rehearsal: one provider cannot be compared with itself
step "3/5 validate --compare $compare (per-output error, nodes per provider)" \
  bash -c '"$0" validate "$1" --compare "$2" --format json >"$3/compare.json" &&
           "$0" validate "$1" --compare "$2"' "$ortkit" "$model" "$compare" "$out"

bench_table() {
  python3 - "$out/bench_cpu.json" "$out/bench_device.json" "$provider" <<'PY'
import json, sys
cpu, dev = (json.load(open(p)) for p in sys.argv[1:3])
name = sys.argv[3].upper()
print(f"{'batch':>6} {'CPU p50 ms':>11} {name + ' p50 ms':>12} {'CPU samples/s':>14} {name + ' samples/s':>15} {'speed-up':>9}")
for a, b in zip(cpu["results"], dev["results"]):
    pa, pb = a["latency_ms"]["p50"], b["latency_ms"]["p50"]
    print(f"{a['batch']:>6} {pa:11.3f} {pb:12.3f} {a['samples_per_s']:14.1f} {b['samples_per_s']:15.1f} {pa / pb:8.2f}x")
p = dev.get("profile") or {}
print("nodes per provider:", ", ".join(f"{x['name']} {x['nodes']}" for x in p.get("providers", [])))
print(f"CPU fallbacks: {len(p.get('cpu_fallbacks', []))}, memory copies: {len(p.get('memory_copies', []))}")
PY
}
step "4/5 bench: CPU and $provider at batch 1, 8, 32" bash -c '
  "$0" bench "$1" --provider cpu --batch 1,8,32 --dim seq_len=128 --duration "$4s" --format json >"$3/bench_cpu.json" &&
  "$0" bench "$1" --provider "$2" --batch 1,8,32 --dim seq_len=128 --duration "$4s" --io-binding --profile \
    --profile-prefix "$3/profile" --format json >"$3/bench_device.json"' "$ortkit" "$model" "$provider" "$out" "$seconds" &&
  step "4/5 figures" bench_table

serve_check() {
  local port=$((20000 + RANDOM % 20000)) server ready=0
  "$ortkit" serve --model "m=$model" --provider "$provider" --http-port "$port" --grpc-port -1 >"$out/serve.log" 2>&1 &
  server=$!
  for _ in $(seq 150); do
    if python3 -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$port/v2/health/ready', timeout=1)" \
      2>/dev/null; then ready=1; break; fi
    kill -0 "$server" 2>/dev/null || break
    sleep 0.2
  done
  if [ "$ready" != 1 ]; then echo "the server did not become ready:"; tail -20 "$out/serve.log"; kill "$server" 2>/dev/null; return 1; fi
  "$ortkit" perf --url "127.0.0.1:$port" --model m --dim seq_len=128 --concurrency 1,64 --duration $((seconds * 2)) \
    --format json >"$out/perf.json"
  local rc=$?
  [ $rc = 0 ] && python3 - "$out/perf.json" <<'PY'
import json, sys
for s in json.load(open(sys.argv[1]))["steps"]:
    lat = s["latency_us"]
    print(f"concurrency {s['concurrency']:>3}: {s['throughput']:8.1f} infer/s, p50 {lat['p50'] / 1000:7.2f} ms,"
          f" p99 {lat['p99'] / 1000:7.2f} ms, server batch {s['server_batch_size']:.2f}, errors {sum(s['errors'].values())}")
PY
  kill "$server"; wait "$server" 2>/dev/null
  return $rc
}
step "5/5 serve on $provider, perf at concurrency 1 and 64" serve_check

# The figures as docs/performance.md records them: a markdown section to paste.
record() {
  python3 - "$out" "$provider" "$gpu" "$model" <<'PY'
import datetime, json, os, sys
out, provider, gpu, model = sys.argv[1:5]
def load(name):
    path = os.path.join(out, name)
    return json.load(open(path)) if os.path.exists(path) else None
cpu, dev, perf = load("bench_cpu.json"), load("bench_device.json"), load("perf.json")
name = provider.upper()
lines = [f"### {datetime.date.today()}: {gpu or 'no GPU (a rehearsal on ' + provider + ')'}", "",
         f"`scripts/gpu_check.sh --provider {provider}` on `{os.path.basename(model)}`.", ""]
if cpu and dev:
    lines += [f"| batch | CPU p50 ms | {name} p50 ms | CPU samples/s | {name} samples/s | speed-up |", "|---|---|---|---|---|---|"]
    for a, b in zip(cpu["results"], dev["results"]):
        pa, pb = a["latency_ms"]["p50"], b["latency_ms"]["p50"]
        lines.append(f"| {a['batch']} | {pa:.3f} | {pb:.3f} | {a['samples_per_s']:.1f} | {b['samples_per_s']:.1f} | {pa / pb:.2f}x |")
    p = dev.get("profile") or {}
    lines += ["", "Nodes per provider: " + ", ".join(f"{x['name']} {x['nodes']}" for x in p.get("providers", []))
              + f"; CPU fallbacks {len(p.get('cpu_fallbacks', []))}, memory copies {len(p.get('memory_copies', []))}."]
if perf:
    lines += ["", "| serving, concurrency | infer/s | p50 ms | p99 ms | server batch |", "|---|---|---|---|---|"]
    for s in perf["steps"]:
        lines.append(f"| {s['concurrency']} | {s['throughput']:.1f} | {s['latency_us']['p50'] / 1000:.2f} |"
                     f" {s['latency_us']['p99'] / 1000:.2f} | {s['server_batch_size']:.2f} |")
open(os.path.join(out, "performance.md"), "w").write("\n".join(lines) + "\n")
PY
}
record || echo "[gpu_check] could not write $out/performance.md"
say "done in $((SECONDS - started)) s; reports in $out (the figures for docs/performance.md: $out/performance.md)"
if [ ${#failed[@]} -gt 0 ]; then
  printf '[gpu_check] failed steps: %s\n' "${failed[@]}"
fi
exit ${#failed[@]}
