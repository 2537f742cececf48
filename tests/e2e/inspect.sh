#!/usr/bin/env bash
# End-to-end: `ortkit inspect` on a real exported model in text and JSON, and the exit code and
# message for files that are not models. Usage: inspect.sh ORTKIT_BINARY SOURCE_DIR
set -u
ORTKIT=$1
SOURCE_DIR=$2
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
expect_grep() {  # expect_grep WHAT PATTERN TEXT
  grep -Eq -- "$2" <<<"$3" || fail "$1: no line matches /$2/ in:"$'\n'"$3"
}

TESTDATA=/usr/share/libonnx-testdata/data
MODEL=$TESTDATA/pytorch-converted/test_ConvTranspose2d/model.onnx
if [ ! -f "$MODEL" ]; then
  MODEL=$(ls "$TESTDATA"/pytorch-converted/*/model.onnx 2>/dev/null | head -n 1)
fi
if [ -z "$MODEL" ] || [ ! -f "$MODEL" ]; then
  echo "SKIP: no libonnx-testdata model installed"
  exit 0
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# --- text report ---
text=$("$ORTKIT" inspect "$MODEL" 2>"$TMP/stderr")
rc=$?
[ "$rc" -eq 0 ] || fail "text: exit code $rc, expected 0; stderr: $(cat "$TMP/stderr")"
expect_grep "text" '^model$' "$text"
expect_grep "text" '^  IR version +[0-9]+$' "$text"
expect_grep "text" '^  producer +pytorch .*\[pytorch: PyTorch torch\.onnx exporter\]' "$text"
expect_grep "text" '^  opsets +ai\.onnx [0-9]+' "$text"
expect_grep "text" '^inputs  [0-9]+$' "$text"
expect_grep "text" '^operators  [0-9]+ nodes? in the main graph$' "$text"
if grep -q $'\033' <<<"$text"; then fail "text: colour escapes in output that is not a terminal"; fi
if [[ "$MODEL" == */test_ConvTranspose2d/* ]]; then
  expect_grep "ConvTranspose2d" '^  0 +float32\[1,3,7,6\]$' "$text"
  expect_grep "ConvTranspose2d" '^  3 +float32\[1,4,20,12\]$' "$text"
  expect_grep "ConvTranspose2d" '^initializers  2 tensors, 448 B \(2 also listed as graph inputs\)$' "$text"
  expect_grep "ConvTranspose2d" '^  1 +float32 +\[3,4,3,3\] +432 B$' "$text"
  expect_grep "ConvTranspose2d" '^  ConvTranspose +ai\.onnx +1 +100\.0%$' "$text"
fi

# --- JSON report ---
"$ORTKIT" inspect "$MODEL" --format json >"$TMP/summary.json" 2>"$TMP/stderr"
rc=$?
[ "$rc" -eq 0 ] || fail "json: exit code $rc, expected 0; stderr: $(cat "$TMP/stderr")"
python3 - "$TMP/summary.json" "$SOURCE_DIR/docs/schema/inspect.schema.json" "$MODEL" <<'PY' || fail "json: checks above"
import json, sys
summary = json.load(open(sys.argv[1]))
schema = json.load(open(sys.argv[2]))
model = sys.argv[3]
problems = [key for key in schema["required"] if key not in summary]
problems += [f"initializers.{k}" for k in schema["properties"]["initializers"]["required"] if k not in summary["initializers"]]
assert summary["schema_version"] == 1, summary["schema_version"]
assert summary["file"]["path"] == model, summary["file"]
assert summary["producer"]["family"] == "pytorch", summary["producer"]
assert summary["nodes"] == sum(n for ops in summary["operators"].values() for n in ops.values())
assert all(i["type"]["kind"] == "tensor" for i in summary["inputs"]), summary["inputs"]
if model.endswith("/test_ConvTranspose2d/model.onnx"):
    assert summary["operators"] == {"ai.onnx": {"ConvTranspose": 1}}, summary["operators"]
    assert summary["inputs"][0]["type"]["shape"] == [1, 3, 7, 6], summary["inputs"]
    assert summary["initializers"]["bytes"] == 448, summary["initializers"]
    assert summary["initializers"]["listed_as_inputs"] == 2
    assert [i["name"] for i in summary["initializers"]["largest"]] == ["1", "2"]
if problems:
    sys.exit("missing keys: " + ", ".join(problems))
PY

# --- a file that does not exist ---
"$ORTKIT" inspect "$TMP/absent.onnx" >"$TMP/stdout" 2>"$TMP/stderr"
rc=$?
[ "$rc" -eq 2 ] || fail "missing file: exit code $rc, expected 2"
expect_grep "missing file" "file\.not-found +'$TMP/absent\.onnx' does not exist" "$(cat "$TMP/stderr")"
[ -s "$TMP/stdout" ] && fail "missing file: text mode wrote to stdout: $(cat "$TMP/stdout")"

# --- an HTML page saved as .onnx (a download gone wrong) ---
printf '<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>Please log in</body></html>\n' >"$TMP/page.onnx"
"$ORTKIT" inspect "$TMP/page.onnx" >"$TMP/stdout" 2>"$TMP/stderr"
rc=$?
[ "$rc" -eq 1 ] || fail "html: exit code $rc, expected 1 (read, but not a model: as check)"
expect_grep "html" "file\.html-page +'$TMP/page\.onnx' \([0-9]+ bytes\) is an HTML page, not an ONNX model" "$(cat "$TMP/stderr")"

"$ORTKIT" inspect "$TMP/page.onnx" --format json >"$TMP/error.json" 2>"$TMP/stderr"
rc=$?
[ "$rc" -eq 1 ] || fail "html json: exit code $rc, expected 1"
python3 - "$TMP/error.json" <<'PY' || fail "html json: checks above"
import json, sys
error = json.load(open(sys.argv[1]))
assert "is an HTML page" in error["error"], error
assert [d["code"] for d in error["diagnoses"]] == ["file.html-page"], error["diagnoses"]
assert error["diagnoses"][0]["fix"], error["diagnoses"][0]
PY

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "PASS: inspect"
