#!/usr/bin/env bash
# cases.testdata_sweep: the real `ortkit check --format json` (every layer, ONNX Runtime load included)
# over every ONNX backend test model Debian ships in libonnx-testdata (node, pytorch-converted,
# pytorch-operator, simple: 1,072 models). It fails when a model crashes ortkit (a signal, exit
# code 2 or 3), hangs (over 60 s), or when an outcome differs from tests/data/testdata_sweep_expected.txt.
#
#   testdata_sweep.sh ORTKIT SOURCE_DIR              check against the expected outcomes
#   testdata_sweep.sh ORTKIT SOURCE_DIR --update     rewrite the expected outcomes from this run
#
# Environment: SWEEP_JOBS (parallel checks, default 2), SWEEP_TIMEOUT (seconds per model, default 60),
# ORTKIT_TESTDATA (default /usr/share/libonnx-testdata/data), SWEEP_RESULTS (where the per-model
# outcomes are written, default ./testdata_sweep_results.txt). docs/testdata-sweep.md has the counts.
source "$2/tests/support/testdata_e2e.sh"
jobs="${SWEEP_JOBS:-2}"
per_model_timeout="${SWEEP_TIMEOUT:-60}"
expected="$src/tests/data/testdata_sweep_expected.txt"
results="${SWEEP_RESULTS:-$PWD/testdata_sweep_results.txt}"

# One model -> one line "SUITE/TEST OUTCOME", OUTCOME being "pass", "fail FIRST_ERROR_CODE" (the
# first error in layer order: file, external-data, checker, shape-inference, rules, runtime),
# or "CRASH ..." / "HANG ..." for what must never happen.
check_one() {
  local model="$1" name rc json
  name="${model#"$data"/}"; name="${name%/model.onnx}"
  json="$(timeout -k 5 "$per_model_timeout" "$ortkit" check --format json "$model" 2>"$work/${name//\//_}.err")" && rc=0 || rc=$?
  case "$rc" in
    0|1)
      jq -r --arg name "$name" --argjson rc "$rc" '
        [.layers[].diagnoses[] | select(.severity == "error") | .code] as $errors
        | if .verdict == "pass" and $rc == 0 then "\($name) pass"
          elif .verdict == "fail" and $rc == 1 then "\($name) fail \($errors[0] // "(warnings, strict)")"
          else "\($name) CRASH verdict \(.verdict) with exit code \($rc)" end' <<<"$json" \
        || echo "$name CRASH exit code $rc with output that is not JSON"
      ;;
    124|137) echo "$name HANG over ${per_model_timeout}s" ;;
    *)
      local why="exit code $rc"
      [ "$rc" -gt 128 ] && why="signal $((rc - 128)) ($(kill -l "$((rc - 128))" 2>/dev/null || echo '?'))"
      echo "$name CRASH $why: $(head -c 300 "$work/${name//\//_}.err" | tr '\n' ' ')"
      ;;
  esac
}
export -f check_one
export ortkit data work per_model_timeout

start=$SECONDS
for set in "${sets[@]}"; do
  find "$data/$set" -mindepth 2 -maxdepth 2 -name model.onnx
done | sort | xargs -P "$jobs" -I{} bash -c 'check_one "$1"' _ {} | LC_ALL=C sort >"$results"
elapsed=$((SECONDS - start))
total=$(wc -l <"$results")

echo "ortkit check over $total models of $data (${sets[*]}) in ${elapsed}s with $jobs jobs"
echo
echo "outcome counts:"
awk '{ outcome = ($2 == "fail") ? "fail " $3 : $2; count[outcome]++ }
     END { for (o in count) printf "%6d  %s\n", count[o], o }' "$results" | LC_ALL=C sort -k1,1nr -k2,2
echo
echo "per-model outcomes: $results"

if grep -E ' (CRASH|HANG)' "$results"; then
  fail "ortkit crashed or hung on the models above (exit codes must be 0 or 1)"
fi
[ "$total" -ge 1000 ] || fail "only $total models found under $data; libonnx-testdata ships 1,072"

if [ "$mode" = --update ]; then
  {
    echo "# Expected outcome of \`ortkit check --format json\` per libonnx-testdata model: pass, or fail and"
    echo "# the first error code. Written by: tests/cases/testdata_sweep.sh build/bin/ortkit . --update"
    cat "$results"
  } >"$expected"
  echo "wrote $expected"
  exit 0
fi

[ -f "$expected" ] || fail "$expected is missing; create it with: $0 ORTKIT SOURCE_DIR --update"
if ! diff <(grep -v '^#' "$expected") "$results" >"$work/diff"; then
  echo "outcomes that changed (< expected, > now):"
  cat "$work/diff"
  fail "$(grep -c '^>' "$work/diff" || true) outcome(s) differ from $expected; if the change is intended, rerun with --update"
fi
echo "all $total outcomes as expected"
