#!/usr/bin/env bash
# A serving build of ortkit, optimised with the profile of its own serving path (GCC profile-guided
# optimisation), after scripts/setup.sh has installed the dependencies:
#   1. builds an instrumented ortkit in BUILD_DIR/pgo-generate;
#   2. serves a generated bert-tiny and a much smaller encoder (whose Run costs microseconds, so the
#      protocol's code weighs most) under `ortkit perf` load: HTTP with binary and JSON tensors, gRPC,
#      concurrency 1 and 64, mixed lengths with bucketing; the profile lands in BUILD_DIR/pgo-profile;
#   3. builds BUILD_DIR with that profile: ortkit, ortkit_make_model and the serving benchmark's tools.
#
#   scripts/build_release.sh [BUILD_DIR=build-release]      then: bench/serve_bench.sh build-release
# Takes about twice a plain build; the test suite is not built here (scripts/test.sh builds build/).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(mkdir -p "${1:-$root/build-release}" && cd "${1:-$root/build-release}" && pwd)"
generate="$build/pgo-generate" profile="$build/pgo-profile"
work="$(mktemp -d)"
server=""
cleanup() { if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi; rm -rf "$work"; }
trap cleanup EXIT

configure() {  # $1: build folder, $2: ORTKIT_PGO, $3: benchmarks ON/OFF
  cmake -S "$root" -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DORTKIT_BUILD_BENCHMARKS="$3" -DORTKIT_PGO="$2" -DORTKIT_PGO_DIR="$profile" >/dev/null
}

echo "== 1/3 instrumented build in $generate"
configure "$generate" generate OFF
ninja -C "$generate" ortkit_cli ortkit_make_model
rm -rf "$profile"

echo "== 2/3 training: ortkit serve under ortkit perf (the profile: $profile)"
ortkit="$generate/bin/ortkit"
"$generate/bin/ortkit_make_model" bert-tiny "$work/bert.onnx"
"$generate/bin/ortkit_make_model" bert-tiny "$work/small.onnx" --layers 1 --hidden 16 --vocab 100
printf '{"batching": {"max_batch_size": 32, "max_queue_delay_us": 1000},\n "bucketing": {"dim": "seq_len", "multiple_of": 16, "mask_input": "attention_mask"}}\n' \
  >"$work/buckets.json"
serve() {  # serve flags; sets $http and $grpc
  "$ortkit" serve --http-port 0 --grpc-port 0 --instances 1 --intra-op-threads 1 "$@" >"$work/serve.log" 2>&1 &
  server=$!
  for _ in $(seq 1 600); do
    grep -q '^listening ' "$work/serve.log" && break
    kill -0 "$server" 2>/dev/null || { cat "$work/serve.log" >&2; echo "server exited" >&2; exit 1; }
    sleep 0.1
  done
  http="$(grep -o 'http=[^ ]*' "$work/serve.log" | head -1 | cut -d= -f2)"
  grpc="$(grep -o 'grpc=[^ ]*' "$work/serve.log" | head -1 | cut -d= -f2)"
}
stop() { kill -TERM "$server"; wait "$server"; server=""; }
load() { "$ortkit" perf --model m --duration 2 --warmup 0.5 --format json "$@" >/dev/null; }
for model in bert small; do
  serve --model "m=$work/$model.onnx" --max-batch-size 64 --max-queue-delay-us 500 --http-busy-poll-us 200
  load --url "$http" --concurrency 1,64 --dim seq_len=8
  load --url "$http" --concurrency 1,16 --dim seq_len=8 --json
  load --url "$grpc" --protocol grpc --concurrency 1,16 --dim seq_len=8
  stop
done
serve --model "m=$work/bert.onnx" --config "$work/buckets.json"
load --url "$http" --concurrency 16 --lengths uniform:4:64
stop
[ -n "$(find "$profile" -name '*.gcda' -print -quit 2>/dev/null)" ] || { echo "no profile was written to $profile" >&2; exit 1; }

echo "== 3/3 optimised build in $build"
configure "$build" use ON
ninja -C "$build" ortkit_cli ortkit_make_model loopback_rtt run_echo
echo "built $build/bin/ortkit with the profile of $(find "$profile" -name '*.gcda' | wc -l) objects"
