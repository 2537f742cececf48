#!/usr/bin/env bash
# Builds one libFuzzer target (clang, build-fuzz/) and fuzzes it for N seconds.
#   scripts/fuzz.sh [SECONDS] [model|tensor|rest]     60 seconds of the model loader by default
#   scripts/fuzz.sh 600                               ten minutes of the model loader
#   scripts/fuzz.sh 300 rest                          the KServe v2 REST request decoder
#   scripts/fuzz.sh 300 http                          raw requests to the HTTP front end (a real server)
#   FUZZ_ARGS="-jobs=2 -workers=2" scripts/fuzz.sh 300
#   FUZZ_ARGS=/usr/share/libonnx-testdata/data scripts/fuzz.sh 600   more seeds (read, never written)
# FUZZ_ARGS holds extra libFuzzer flags and seed folders; new inputs always go to the work corpus.
# It fuzzes a copy of the target's seeds and reproducers kept in build-fuzz/fuzz/work-corpus[-TARGET],
# so progress carries over between runs and the committed corpus is never touched. Crashes, hangs
# (-timeout) and memory blow-ups (-rss_limit_mb) land in build-fuzz/fuzz/artifacts[-TARGET]/; once
# fixed, copy the input into the target's regressions folder, which the ordinary tests replay
# (fuzz.replay_corpus, TensorReaders.ReplayFuzzCorpus, ServeRestCodec.ReplayFuzzCorpus).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-60}"
target="${2:-model}"
build="${BUILD_DIR:-$root/build-fuzz}"

# target -> fuzzer, seed folders, dictionary, longest input, work folder suffix
case "$target" in
  model)  fuzzer=model_fuzzer;  seeds=(corpus regressions);               dict=onnx.dict;   max_len=16384; suffix="" ;;
  tensor) fuzzer=tensor_fuzzer; seeds=(tensor_corpus tensor_regressions); dict=tensor.dict; max_len=8192;  suffix=-tensor ;;
  rest)   fuzzer=rest_fuzzer;   seeds=(rest_corpus rest_regressions);     dict=rest.dict;   max_len=8192;  suffix=-rest ;;
  http)   fuzzer=http_fuzzer;   seeds=(http_corpus http_regressions);     dict=http.dict;   max_len=16384; suffix=-http ;;
  *) echo "usage: $0 [SECONDS] [model|tensor|rest|http]" >&2; exit 2 ;;
esac

# Configured every time (a no-op when nothing changed), so that CMAKE_ARGS are never silently ignored.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DORTKIT_BUILD_FUZZERS=ON \
  -DORTKIT_BUILD_TESTS=OFF -DORTKIT_BUILD_BENCHMARKS=OFF ${CMAKE_ARGS:-}
ninja -C "$build" "$fuzzer"

work="$build/fuzz/work-corpus$suffix"
artifacts="$build/fuzz/artifacts$suffix"
mkdir -p "$work" "$artifacts"
shopt -s nullglob
for folder in "${seeds[@]}"; do
  for seed in "$root/fuzz/$folder"/*; do
    [ "$(basename "$seed")" = README.md ] || cp -n "$seed" "$work/"
  done
done

# Leaks are findings, except allocations ONNX Runtime, protobuf and gRPC keep for the process's life
# (the HTTP target runs real sessions; ONNX Runtime sets some state up lazily on a first run).
export LSAN_OPTIONS="suppressions=$root/fuzz/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# shellcheck disable=SC2086
exec "$build/fuzz/$fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=20 -max_len="$max_len" \
  -dict="$root/fuzz/$dict" -print_final_stats=1 -artifact_prefix="$artifacts/" "$work" ${FUZZ_ARGS:-}
