#!/usr/bin/env bash
# Builds the libFuzzer target over the model loader (clang, build-fuzz/) and fuzzes for N seconds.
#   scripts/fuzz.sh                                  60 seconds
#   scripts/fuzz.sh 600                              ten minutes
#   FUZZ_ARGS="-jobs=2 -workers=2" scripts/fuzz.sh 300
#   FUZZ_ARGS=/usr/share/libonnx-testdata/data scripts/fuzz.sh 600   more seeds (read, never written)
# FUZZ_ARGS holds extra libFuzzer flags and seed folders; new inputs always go to the work corpus.
# It fuzzes a copy of fuzz/corpus and fuzz/regressions kept in build-fuzz/fuzz/work-corpus, so
# progress carries over between runs and the committed corpus is never touched. Crashes, hangs
# (-timeout) and memory blow-ups (-rss_limit_mb) land in build-fuzz/fuzz/artifacts/; once fixed,
# copy the input into fuzz/regressions/ so that the test fuzz.replay_corpus replays it forever.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-60}"
build="${BUILD_DIR:-$root/build-fuzz}"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DORTKIT_BUILD_FUZZERS=ON \
    -DORTKIT_BUILD_TESTS=OFF -DORTKIT_BUILD_BENCHMARKS=OFF >/dev/null
fi
ninja -C "$build" model_fuzzer

work="$build/fuzz/work-corpus"
artifacts="$build/fuzz/artifacts"
mkdir -p "$work" "$artifacts"
shopt -s nullglob
for seed in "$root"/fuzz/corpus/* "$root"/fuzz/regressions/*; do
  cp -n "$seed" "$work/"
done

# shellcheck disable=SC2086
exec "$build/fuzz/model_fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=20 -max_len=16384 \
  -dict="$root/fuzz/onnx.dict" -print_final_stats=1 -artifact_prefix="$artifacts/" "$work" ${FUZZ_ARGS:-}
