#!/usr/bin/env bash
# End-to-end: `ortkit inspect` on a real exported model in text and JSON, and the exit code and
# message for files that are not models. Usage: inspect.sh ORTKIT_BINARY SOURCE_DIR
source "$2/tests/support/e2e.sh"
# expect_line WHAT PATTERN FILE: a line of FILE matches the extended regular expression PATTERN.
expect_line() { grep -Eq -- "$2" "$3" || fail "$1: no line matches /$2/ in:"$'\n'"$(cat "$3")"; }

testdata=/usr/share/libonnx-testdata/data
model=$testdata/pytorch-converted/test_ConvTranspose2d/model.onnx
[ -f "$model" ] || model=$(ls "$testdata"/pytorch-converted/*/model.onnx 2>/dev/null | head -n 1 || true)
[ -n "$model" ] && [ -f "$model" ] || skip "no libonnx-testdata model installed (scripts/setup.sh installs libonnx-testdata)"

# --- text report ---
"$ortkit" inspect "$model" >"$work/text" 2>"$work/stderr" || fail "text: exit code $?, expected 0; stderr: $(cat "$work/stderr")"
expect_line "text" '^model$' "$work/text"
expect_line "text" '^  IR version +[0-9]+$' "$work/text"
expect_line "text" '^  producer +pytorch .*\[pytorch: PyTorch torch\.onnx exporter\]' "$work/text"
expect_line "text" '^  opsets +ai\.onnx [0-9]+' "$work/text"
expect_line "text" '^inputs  [0-9]+$' "$work/text"
expect_line "text" '^operators  [0-9]+ nodes? in the main graph$' "$work/text"
if grep -q $'\033' "$work/text"; then fail "text: colour escapes in output that is not a terminal"; fi
if [[ "$model" == */test_ConvTranspose2d/* ]]; then
  expect_line "ConvTranspose2d" '^  0 +float32\[1,3,7,6\]$' "$work/text"
  expect_line "ConvTranspose2d" '^  3 +float32\[1,4,20,12\]$' "$work/text"
  expect_line "ConvTranspose2d" '^initializers  2 tensors, 448 B \(2 also listed as graph inputs\)$' "$work/text"
  expect_line "ConvTranspose2d" '^  1 +float32 +\[3,4,3,3\] +432 B$' "$work/text"
  expect_line "ConvTranspose2d" '^  ConvTranspose +ai\.onnx +1 +100\.0%$' "$work/text"
fi

# --- JSON report ---
"$ortkit" inspect "$model" --format json >"$work/summary.json" 2>"$work/stderr" ||
  fail "json: exit code $?, expected 0; stderr: $(cat "$work/stderr")"
python3 - "$work/summary.json" "$src/docs/schema/inspect.schema.json" "$model" <<'PY' || fail "json: checks above"
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
set +e; "$ortkit" inspect "$work/absent.onnx" >"$work/stdout" 2>"$work/stderr"; rc=$?; set -e
[ "$rc" -eq 2 ] || fail "missing file: exit code $rc, expected 2"
expect_line "missing file" "file\.not-found +'$work/absent\.onnx' does not exist" "$work/stderr"
[ -s "$work/stdout" ] && fail "missing file: text mode wrote to stdout: $(cat "$work/stdout")"

# --- an HTML page saved as .onnx (a download gone wrong) ---
printf '<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>Please log in</body></html>\n' >"$work/page.onnx"
set +e; "$ortkit" inspect "$work/page.onnx" >"$work/stdout" 2>"$work/stderr"; rc=$?; set -e
[ "$rc" -eq 1 ] || fail "html: exit code $rc, expected 1 (read, but not a model: as check)"
expect_line "html" "file\.html-page +'$work/page\.onnx' \([0-9]+ bytes\) is an HTML page, not an ONNX model" "$work/stderr"

set +e; "$ortkit" inspect "$work/page.onnx" --format json >"$work/error.json" 2>"$work/stderr"; rc=$?; set -e
[ "$rc" -eq 1 ] || fail "html json: exit code $rc, expected 1"
python3 - "$work/error.json" <<'PY' || fail "html json: checks above"
import json, sys
error = json.load(open(sys.argv[1]))
assert "is an HTML page" in error["error"], error
assert [d["code"] for d in error["diagnoses"]] == ["file.html-page"], error["diagnoses"]
assert error["diagnoses"][0]["fix"], error["diagnoses"][0]
PY
echo "PASS: inspect"
