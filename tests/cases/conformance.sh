#!/usr/bin/env bash
# cases.conformance: `ortkit validate MODEL --reference CASE --format json` over every ONNX backend test
# case Debian ships in libonnx-testdata (node, pytorch-converted, pytorch-operator, simple: 1,072
# cases, each model.onnx + test_data_set_N/{input,output}_K.pb), each outcome classified and compared
# with tests/data/conformance_expected.txt. It fails on any difference, and on any crash or hang.
#
#   conformance.sh ORTKIT SOURCE_DIR             check against the expected outcomes
#   conformance.sh ORTKIT SOURCE_DIR --update    rewrite the expected outcomes (or ORTKIT_CONFORMANCE_UPDATE=1)
#
# One line per case: "SET/CASE OUTCOME DETAIL", OUTCOME being
#   passed                 every output within tolerance                     DETAIL -
#   failed                 numbers differ                                    DETAIL OUTPUT:max-abs=E (the output with
#                          the largest error), OUTPUT:strings-differ=N/M, OUTPUT:type-differs, OUTPUT:shape-differs,
#                          OUTPUT:nan-inf=N, or OUTPUT:missing
#   random                 the model draws random numbers without a seed: passes or fails by chance   DETAIL -
#   not-supported          this ONNX Runtime refuses the model (no kernel, unknown op, opset)          DETAIL the code
#   load-error             any other refusal to load                                                  DETAIL the code
#   run-error              loaded, but the run failed                                                 DETAIL the code
#   reference-unreadable   ortkit cannot read the case's .pb files (sequences, optionals)             DETAIL the code
#   error                  any other exit code 2                                                      DETAIL the code
#   crash                  a signal, exit code 3, output that is not JSON, or over the time limit     DETAIL why
# docs/conformance.md has the counts and the diagnosis of every class that is not "passed".
#
# A failed case's error may differ from the expected one by up to 10x either way (the exact value
# depends on the CPU's vector width); everything else must match exactly.
#
# Environment: CONFORMANCE_JOBS (parallel cases, default 2), CONFORMANCE_TIMEOUT (seconds per case,
# default 60), ORTKIT_TESTDATA (default /usr/share/libonnx-testdata/data), CONFORMANCE_EXPECTED (the
# expected outcomes, default tests/data/conformance_expected.txt), CONFORMANCE_MIN_CASES (fewer cases
# found is a failure, default 1000), CONFORMANCE_RESULTS (where the outcomes of this run are written,
# default ./conformance_results.txt). conformance_onnx_1_23.sh sets them for ONNX 1.23's cases.
# The prologue reads the mode from $3 only: ORTKIT_CONFORMANCE_UPDATE=1 becomes that argument.
[ "${ORTKIT_CONFORMANCE_UPDATE:-0}" = 1 ] && set -- "$1" "$2" --update
source "$2/tests/support/testdata_e2e.sh"
jobs="${CONFORMANCE_JOBS:-2}"
per_case_timeout="${CONFORMANCE_TIMEOUT:-60}"
expected="${CONFORMANCE_EXPECTED:-$src/tests/data/conformance_expected.txt}"
min_cases="${CONFORMANCE_MIN_CASES:-1000}"
results="${CONFORMANCE_RESULTS:-$PWD/conformance_results.txt}"

# StringNormalizer builds the en_US.UTF-8 locale when the session is created; without it ONNX
# Runtime refuses the model. Where the system lacks the locale, compile one for ortkit alone.
locale_note=""
if ! locale -a 2>/dev/null | grep -qix 'en_US\.utf-\?8'; then
  mkdir -p "$work/locale"
  if localedef -i en_US -f UTF-8 "$work/locale/en_US.UTF-8" >/dev/null 2>&1 || [ -d "$work/locale/en_US.UTF-8" ]; then
    export LOCPATH="$work/locale"
  else
    locale_note="en_US.UTF-8 is not installed and localedef cannot build it: StringNormalizer cases not compared"
  fi
fi

# The codes with which ONNX Runtime says it does not implement what the model asks for.
not_supported='^(runtime\.not-implemented|runtime\.unknown-op|runtime\.missing-opset-import|runtime\.unsupported-ir-version|graph\.opset-too-old|graph\.opset-too-new)$'

# rc 0/1 JSON -> "OUTCOME DETAIL".
classify_json='
  def worst_output:
    [.reference.cases[] | select(.ran) | .comparison as $c
     | ($c.outputs[] | select(.passed | not)
        | if (.type_match | not) then {rank: 4, detail: "\(.name):type-differs"}
          elif (.shape_match | not) then {rank: 4, detail: "\(.name):shape-differs"}
          elif (.actual | startswith("string")) then {rank: 3, detail: "\(.name):strings-differ=\(.mismatches)/\(.elements)"}
          elif (.max_abs_error == 0 and (.nan_only_actual + .nan_only_expected + .inf_mismatch) > 0)
            then {rank: 2, detail: "\(.name):nan-inf=\(.nan_only_actual + .nan_only_expected + .inf_mismatch)"}
          else {rank: 1, error: .max_abs_error, detail: "\(.name):max-abs=\(.max_abs_error)"} end),
       ($c.missing_in_run[] | {rank: 5, detail: "\(.):missing"})]
    | sort_by(.rank, (.error // 0)) | last;
  if .error then
    (.diagnoses[0].code // "none") as $code
    | if ($code | test($not_supported)) then "not-supported \($code)" else "load-error \($code)" end
  elif ([.reference.cases[] | select(.ran | not)] | length) > 0 then
    "run-error \([.reference.cases[] | select(.ran | not)][0].diagnosis.code // "none")"
  elif .verdict == "pass" then "passed -"
  else "failed \(worst_output.detail // "none")" end'

classify_one() {
  local dir="$1" name rc json outcome base
  name="${dir#"$data"/}"; base="$work/${name//\//_}"
  json="$(timeout -k 5 "$per_case_timeout" "$ortkit" validate "$dir/model.onnx" --reference "$dir" --format json 2>"$base.err")" \
    && rc=0 || rc=$?
  case "$rc" in
    0|1)
      outcome="$(jq -r --arg not_supported "$not_supported" "$classify_json" <<<"$json" 2>/dev/null)" \
        || outcome="crash exit-$rc-output-not-json"
      if [[ "$outcome" =~ ^(failed .*:max-abs=)(.*)$ ]]; then
        outcome="${BASH_REMATCH[1]}$(printf '%.2g' "${BASH_REMATCH[2]}")"
      fi
      # An unseeded Bernoulli/RandomUniform/... draws new numbers every run: the reference is one draw.
      if [[ "$outcome" =~ ^(passed|failed) ]] && grep -qaE 'Bernoulli|RandomUniform|RandomNormal|Multinomial' "$dir/model.onnx" \
         && ! grep -qa seed "$dir/model.onnx"; then
        outcome="random -"
      fi
      ;;
    2)
      local code
      code="$(jq -r '.diagnoses[0].code // "none"' <<<"$json" 2>/dev/null)" || code="output-not-json"
      if [ "$code" = validate.reference-input ]; then outcome="reference-unreadable $code"; else outcome="error $code"; fi
      ;;
    124|137) outcome="crash timeout-${per_case_timeout}s" ;;
    3) outcome="crash exit-3" ;;
    *)
      if [ "$rc" -gt 128 ]; then outcome="crash signal-$((rc - 128))-$(kill -l "$((rc - 128))" 2>/dev/null || echo '?')"
      else outcome="crash exit-$rc"; fi
      ;;
  esac
  echo "$name $outcome"
}
export -f classify_one
export ortkit data work per_case_timeout not_supported classify_json

start=$SECONDS
for set in "${sets[@]}"; do
  find "$data/$set" -mindepth 2 -maxdepth 2 -name model.onnx -printf '%h\n'
done | xargs -P "$jobs" -I{} bash -c 'classify_one "$1"' _ {} | LC_ALL=C sort >"$results"
elapsed=$((SECONDS - start))
total=$(wc -l <"$results")

echo "ortkit validate over $total cases of $data (${sets[*]}) in ${elapsed}s with $jobs jobs"
echo
printf '%-22s' outcome; printf '%18s' "${sets[@]}" total; echo
awk -v sets="${sets[*]}" '
  { split($1, p, "/"); n[$2, p[1]]++; n[$2, "total"]++; seen[$2] = 1 }
  END {
    ns = split(sets " total", s, " ")
    for (o in seen) { line = sprintf("%-22s", o); for (i = 1; i <= ns; i++) line = line sprintf("%18d", n[o, s[i]]); print line }
  }' "$results" | LC_ALL=C sort
echo
echo "per-case outcomes: $results"
[ -z "$locale_note" ] || echo "note: $locale_note"

if grep -E '^\S+ crash ' "$results"; then
  fail "ortkit crashed or hung on the cases above"
fi
[ "$total" -ge "$min_cases" ] || fail "only $total cases found under $data; expected at least $min_cases"

if [ "$mode" = --update ]; then
  {
    echo "# Expected outcome of \`ortkit validate MODEL --reference CASE --format json\` per case of ${data#"$src"/}:"
    echo "# SET/CASE OUTCOME DETAIL (tests/cases/conformance.sh explains them; docs/conformance.md diagnoses them)."
    echo "# Written by: ORTKIT_CONFORMANCE_UPDATE=1 tests/cases/$(basename "${CONFORMANCE_SCRIPT:-$0}") build/bin/ortkit ."
    cat "$results"
  } >"$expected"
  echo "wrote $expected"
  exit 0
fi

[ -f "$expected" ] || fail "$expected is missing; create it with: ORTKIT_CONFORMANCE_UPDATE=1 $0 ORTKIT SOURCE_DIR"
skip='^$'
[ -z "$locale_note" ] || skip='strnorm'
# Same case, same outcome, same detail; a failed case's max-abs within 10x of the expected.
awk -v skip="$skip" '
  function detail_matches(a, b,   ka, kb, va, vb) {
    if (a == b) return 1
    if (a !~ /:max-abs=/ || b !~ /:max-abs=/) return 0
    ka = a; sub(/=.*/, "", ka); kb = b; sub(/=.*/, "", kb)
    if (ka != kb) return 0
    va = a; sub(/.*=/, "", va); vb = b; sub(/.*=/, "", vb)
    va += 0; vb += 0
    if (va == 0 || vb == 0) return va == vb
    return va / vb <= 10 && vb / va <= 10
  }
  FNR == NR { if ($0 !~ /^#/ && NF) { want[$1] = $2 " " $3 } next }
  {
    got[$1] = $2 " " $3
    if ($1 ~ skip) next
    if (!($1 in want)) { print "  " $1 ": new case, now " $2 " " $3; bad++; next }
    split(want[$1], w, " ")
    if (w[1] != $2 || !detail_matches(w[2], $3)) { print "  " $1 ": expected " want[$1] ", now " $2 " " $3; bad++ }
  }
  END {
    for (c in want) if (!(c in got) && c !~ skip) { print "  " c ": expected " want[c] ", now no such case"; bad++ }
    exit bad > 0
  }' "$expected" "$results" >"$work/diff" || {
  echo "outcomes that changed:"
  LC_ALL=C sort "$work/diff"
  fail "$(wc -l <"$work/diff") case(s) differ from $expected; if the change is intended, rerun with ORTKIT_CONFORMANCE_UPDATE=1"
}
echo "all $total outcomes as expected"
