#!/usr/bin/env bash
# The sanitizer run: ortkit built with AddressSanitizer + UndefinedBehaviorSanitizer (clang,
# -DORTKIT_SANITIZE=ON, build-asan/), then, under them: every unit test, the replay of every fuzz
# corpus and reproducer, and the serving e2e scripts that attack the server (hostile requests,
# load with faults). Any sanitizer report fails the run. About 40 minutes on 2 cores from nothing
# (the build is most of it; ccache makes a second run a few minutes).
#   scripts/sanitize.sh                 all of it
#   ORTKIT_LOAD_SECONDS=10 ...          a shorter load-with-faults step
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build-asan}"
"$root/scripts/setup.sh"

# shellcheck disable=SC2086
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DORTKIT_SANITIZE=ON -DORTKIT_BUILD_BENCHMARKS=OFF ${CMAKE_ARGS:-}
ninja -C "$build" ortkit_unit_tests ortkit_fuzz_replay ortkit_cli ortkit_make_model

# halt_on_error: the first report ends the process with a failure; leaks are reported too, except
# those inside ONNX Runtime's and protobuf's own one-time allocations (fuzz/lsan.supp).
# allocator_may_return_null: a failed malloc returns null, as without ASan.
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:allocator_may_return_null=1"
export LSAN_OPTIONS="suppressions=$root/fuzz/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"

echo "== unit tests under ASan + UBSan"
# The out_of_memory case asks ONNX Runtime for 4 PiB to check its message; ASan's operator new
# aborts on any failed allocation rather than throwing std::bad_alloc, so that case (and the test
# that produces every known message) cannot run here.
"$build/tests/ortkit_unit_tests" --gtest_brief=1 \
  --gtest_filter='-*out_of_memory*:RuntimeMessages.EveryKnownMessageIsProducedByARealSession'
echo "== fuzz corpora and reproducers (model loader) under ASan + UBSan"
"$build/tests/ortkit_fuzz_replay" "$root/fuzz/corpus" "$root/fuzz/regressions"
echo "== ortkit serve under attack, under ASan + UBSan"
export ORTKIT_BIN_DIR="$build/bin" ORTKIT_LOAD_SECONDS="${ORTKIT_LOAD_SECONDS:-20}" ORTKIT_LOAD_CONCURRENCY=32 \
  ORTKIT_LOAD_RSS_MB=1500
for test in serve_hardening serve_load_fault serve_http_edges; do
  bash "$root/tests/e2e/$test.sh" "$build/bin/ortkit" "$root"
done
echo "PASS: sanitizers found nothing"
