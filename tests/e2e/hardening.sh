#!/usr/bin/env bash
# Hostile files and flags against the CLI (~30 s): a named pipe, /dev/zero, a depth bomb, external
# data reaching outside the model's folder, an .npz that inflates a thousandfold, a model whose
# made-up inputs would take 8 GiB, NaN tolerances. Each gets a specific message and exit code,
# never a hang, a crash or a pass (tests/python/hostile_files.py writes the files).
source "$2/tests/support/e2e.sh"
need_python
"$python" "$src/tests/python/hostile_files.py" "$work/f"
f="$work/f"

# peak_mb COMMAND...: runs COMMAND (output in $work/out); prints its peak resident memory in MB and its exit code.
peak_mb() {
  "$python" - "$work/out" "$@" <<'PY'
import resource, subprocess, sys
with open(sys.argv[1], "w") as out:
    rc = subprocess.call(sys.argv[2:], stdout=out, stderr=subprocess.STDOUT)
print(f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024} {rc}")
PY
}

echo "== special files are refused by type, never opened (a FIFO used to block forever)"
mkfifo "$work/pipe.onnx"
for command in inspect check run validate; do
  expect_rc 2 timeout 20 "$ortkit" "$command" "$work/pipe.onnx"
  expect_msg "is a named pipe (FIFO), not a regular file"
done
expect_rc 2 timeout 20 "$ortkit" check /dev/zero
expect_msg "is a character device, not a regular file"
grep -q "TiB" "$work/out" && fail "/dev/zero was sized"
mkfifo "$work/pipe.npz"
expect_rc 2 timeout 20 "$ortkit" run "$f/relu16.onnx" --input "$work/pipe.npz"
expect_msg "is a named pipe (FIFO), not a tensor file"

echo "== the same file gets the same exit code from every command: 2 unreadable, 1 read but no model"
"$python" -c 'import random, sys; r = random.Random(7); open(sys.argv[1], "wb").write(bytes(r.randrange(256) for _ in range(100)))' "$work/random.onnx"
for command in inspect check run validate doctor; do
  expect_rc 2 "$ortkit" "$command" "$work/missing.onnx"
  expect_rc 2 "$ortkit" "$command" "$work"
  expect_rc 1 "$ortkit" "$command" "$work/random.onnx"
  expect_rc 1 "$ortkit" "$command" "$f/deep.onnx"
done

echo "== a depth bomb is named for its depth"
expect_rc 1 "$ortkit" check "$f/deep.onnx"
expect_msg "file.nesting-too-deep"
expect_msg "more than 1000 levels deep"

echo "== external data outside the model's folder is an error in every layer, and never read"
expect_rc 1 "$ortkit" check "$f/absolute/model.onnx" --no-runtime
expect_msg "external-data.path-escapes"
expect_msg "is an absolute path"
expect_rc 1 "$ortkit" check "$f/linked/model.onnx" --no-runtime
expect_msg "leads through a symbolic link to $f/outside.bin"
expect_rc 1 "$ortkit" check "$f/linked/model.onnx"
expect_msg "external-data.path-escapes"
grep -q "a reason ortkit does not know yet" "$work/out" && fail "ONNX Runtime's refusal was not recognised"
expect_rc 0 "$ortkit" inspect "$f/passwd/model.onnx"
expect_msg "outside the model's folder (not read)"
"$ortkit" inspect "$f/passwd/model.onnx" --format json >"$work/inspect.json"
"$python" - "$work/inspect.json" <<'PY'
import json, sys
files = json.load(open(sys.argv[1]))["external_data"]
assert files[0]["outside_folder"] is True and files[0]["file_bytes"] is None, files
PY

echo "== an .npz is checked against the model from its header, before it is inflated"
read -r peak rc < <(peak_mb "$ortkit" run "$f/relu16.onnx" --input "$f/bomb.npz")
[ "$rc" = 2 ] || { cat "$work/out"; fail "bomb.npz: exit $rc, expected 2"; }
expect_msg "input 'x' dimension 0 is 16777216 but the model fixes it to 1"
[ "$peak" -lt 500 ] || fail "bomb.npz: peak memory $peak MB; the member was inflated before its shape was checked"
echo "ok: refused at $peak MB peak"
read -r peak rc < <(peak_mb "$ortkit" run "$f/relu_rows.onnx" --input "$f/huge_member.npz")
[ "$rc" = 2 ] || { cat "$work/out"; fail "huge_member.npz: exit $rc, expected 2"; }
expect_msg "over ortkit's limit of 2.0 GiB for a compressed member"
[ "$peak" -lt 500 ] || fail "huge_member.npz: peak memory $peak MB"

echo "== made-up inputs over the budget are refused with the size named"
read -r peak rc < <(peak_mb "$ortkit" run "$f/huge_dim.onnx")
[ "$rc" = 2 ] || { cat "$work/out"; fail "huge_dim: exit $rc, expected 2"; }
expect_msg "the synthesised inputs would take 8.0 GiB"
expect_msg "over ortkit's limit of 2.0 GiB"
[ "$peak" -lt 500 ] || fail "huge_dim: peak memory $peak MB"

echo "== a dimension declared as -5 is said, never silently replaced"
expect_rc 1 "$ortkit" check "$f/minus5.onnx" --no-runtime
expect_msg "graph.bad-dimension"
"$ortkit" run "$f/minus5.onnx" >"$work/out" 2>&1 || true
expect_msg "the model declares dimension 0 as -5, which is not a size: it was given"

echo "== NaN or infinite tolerances are refused, never a pass"
for flags in "--atol nan" "--rtol nan" "--atol inf" "--per-output y:nan:nan" "--per-output y:1e-3:-1"; do
  # shellcheck disable=SC2086
  expect_rc 2 "$ortkit" validate "$f/relu16.onnx" --reference "$f/reference_bad.npz" $flags
  expect_msg "finite number"
done
expect_rc 2 "$ortkit" doctor "$f/relu16.onnx" --reference "$f/reference_bad.npz" --atol nan
expect_msg "finite number"
expect_rc 1 "$ortkit" validate "$f/relu16.onnx" --reference "$f/reference_bad.npz" --atol 1e-3
echo "PASS: hostile files and flags"
