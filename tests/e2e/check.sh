#!/usr/bin/env bash
# ortkit check end to end: the real executable on generated models, text and JSON output, exit codes.
source "$2/tests/support/e2e.sh"

"$bin/ortkit_make_model" demo-encoder "$work/encoder.onnx"
"$bin/ortkit_make_model" demo-encoder "$work/static.onnx" --static-batch 2

# A healthy model passes every layer.
out="$("$ortkit" check "$work/encoder.onnx")" || fail "healthy model: exit $?"
grep -q "6. ONNX Runtime load  ok" <<<"$out" || fail "runtime layer not ok: $out"
grep -q "^PASS: 0 errors" <<<"$out" || fail "no PASS line: $out"
[[ "$out" != *$'\033'* ]] || fail "colour escapes written to a pipe"

# JSON carries the same verdict and one entry per layer.
"$ortkit" check "$work/encoder.onnx" --format json >"$work/ok.json"
python3 - "$work/ok.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["verdict"] == "pass", r
assert [l["name"] for l in r["layers"]] == ["file", "external-data", "checker", "shape-inference", "rules", "runtime"], r
assert r["counts"]["error"] == 0
PY

# Warnings pass, but fail under --strict (exit 1).
if "$ortkit" check "$work/static.onnx" --format json >"$work/static.json"; then :; else fail "static batch without --strict must pass"; fi
python3 - "$work/static.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
codes = [d["code"] for l in r["layers"] for d in l["diagnoses"]]
assert "graph.static-batch" in codes, codes
PY
set +e
"$ortkit" check "$work/static.onnx" --strict >/dev/null; rc=$?
set -e
[ "$rc" = 1 ] || fail "--strict with warnings: exit $rc, expected 1"

# Content errors exit 1; a missing file or bad flag exits 2.
head -c 1000 "$work/encoder.onnx" >"$work/cut.onnx"
set +e
out="$("$ortkit" check "$work/cut.onnx")"; rc=$?
set -e
[ "$rc" = 1 ] || fail "truncated: exit $rc"
grep -q "file.truncated" <<<"$out" || fail "truncated not diagnosed: $out"
grep -q "runtime.protobuf-parse-failed\|runtime" <<<"$out" || fail "runtime layer missing for a truncated file"

set +e
"$ortkit" check "$work/missing.onnx" >/dev/null; rc=$?
[ "$rc" = 2 ] || fail "missing file: exit $rc, expected 2"
"$ortkit" check "$work/encoder.onnx" --provider nosuch >/dev/null 2>&1; rc=$?
[ "$rc" = 2 ] || fail "unknown provider: exit $rc, expected 2"
"$ortkit" check >/dev/null 2>&1; rc=$?
[ "$rc" = 2 ] || fail "no model argument: exit $rc, expected 2"
set -e

# Every diagnosis code is documented in the troubleshooting guide.
for code in $("$ortkit" explain --format json | python3 -c 'import json,sys; print("\n".join(c["code"] for c in json.load(sys.stdin)))'); do
  grep -q "\`$code\`" "$src/docs/troubleshooting.md" || fail "docs/troubleshooting.md does not list $code"
done
echo "e2e check: ok"
