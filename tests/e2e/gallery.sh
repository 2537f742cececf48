#!/usr/bin/env bash
# The gallery of real export failures (tests/gallery): models exported with the real exporters (PyTorch 2.15's
# torch.onnx.export, both exporters; Transformers 5; Keras 3 with tf2onnx) through the export companion, or as a
# user calls torch.onnx.export with its defaults, then `ortkit doctor --format json` on each,
# held to the verdict and codes in tests/gallery/expected.txt, plus the details each case promises
# (the input named, the Reshape named, the node of the float64 leak, the TracerWarning's line).
source "$2/tests/support/e2e.sh"
need_python
export PYTHONPATH="$src/python" TF_CPP_MIN_LOG_LEVEL=2
start=$SECONDS

# One process per framework (importing each costs seconds), both at once.
"$python" "$src/tests/gallery/build_torch.py" "$work" >"$work/torch.log" 2>&1 & torch_pid=$!
"$python" "$src/tests/gallery/build_tf.py" "$work" >"$work/tf.log" 2>&1 || { cat "$work/tf.log" >&2; fail "TensorFlow gallery export"; }
wait "$torch_pid" || { cat "$work/torch.log" >&2; fail "PyTorch gallery export"; }
echo "exported in $((SECONDS - start)) s"

# 10: through `ortkit export` (the C++ command delegating to the companion): the export error, translated.
set +e
"$ortkit" export torch --module "$src/tests/gallery/torch_models.py:upper_triangle" --inputs "x:float32[4,4]" \
  --exporter torchscript --opset 13 --out "$work/10-low-opset" >"$work/10.out" 2>&1
rc=$?
set -e
[ "$rc" = 1 ] || { cat "$work/10.out" >&2; fail "export at opset 13 exited $rc, expected 1"; }
grep -q "export.unsupported-operator" "$work/10.out" && grep -q "aten::triu" "$work/10.out" && grep -q -- "--opset 14" "$work/10.out" \
  || { cat "$work/10.out" >&2; fail "untranslated export error"; }
[ ! -e "$work/10-low-opset/model.onnx" ] && [ -f "$work/10-low-opset/export.json" ] || fail "10: export.json missing or a model written"

# 12: a truncated copy of a healthy file, and a Git LFS pointer in its place.
mkdir -p "$work/12-truncated" "$work/12-lfs-pointer"
size=$(stat -c %s "$work/03-resnet18/model.onnx")
head -c $((size / 2)) "$work/03-resnet18/model.onnx" >"$work/12-truncated/model.onnx"
printf 'version https://git-lfs.github.com/spec/v1\noid sha256:%064d\nsize %d\n' 0 "$size" >"$work/12-lfs-pointer/model.onnx"

while read -r name verdict codes; do
  case "$name" in ''|'#'*) continue ;; esac
  set +e
  "$ortkit" doctor "$work/$name" --format json --runs 3 >"$work/$name.json" 2>"$work/$name.err"
  rc=$?
  set -e
  python3 - "$work/$name.json" "$name" "$verdict" "$codes" "$rc" <<'PY' || { cat "$work/$name.err" >&2; fail "$name"; }
import json, sys
path, name, verdict, codes, rc = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
r = json.load(open(path))
found = [d["code"] for d in r["diagnoses"]]
summary = f"{name}: verdict {r['verdict']}, exit {rc}, codes {found}"
assert r["verdict"] == verdict, f"expected verdict {verdict}; {summary}"
assert rc == (0 if verdict == "healthy" else 1), f"exit code; {summary}"
if codes == "-":
    assert not [d for d in r["diagnoses"] if d["severity"] != "info"], summary
else:
    wanted = codes.split(",")
    missing = [c for c in wanted if c not in found]
    assert not missing, f"missing {missing}; {summary}"
    order = {"error": 2, "warning": 1, "info": 0}
    head = next(d for d in r["diagnoses"] if d["code"] == wanted[0])
    assert order[head["severity"]] == max(order[d["severity"]] for d in r["diagnoses"]), f"{wanted[0]} outranked; {summary}"
for d in r["diagnoses"]:
    assert d["message"] and d["cause"] and d["fix"], d
by_code = {}
for d in r["diagnoses"]:
    by_code.setdefault(d["code"], []).append(d)
cpu = r["providers"][0] if r["providers"] else {}
if verdict == "healthy":
    # Every swept shape passes and the framework's references match.
    assert all(c["state"] == "passed" for c in cpu["sweep"]["cells"]) and len(cpu["sweep"]["cells"]) >= 3, summary
    assert cpu["validation"]["passed"] and len(cpu["validation"]["cases"]) == 2, summary
    assert cpu["latency"]["runs"] == 3 and cpu["latency"]["p50_ms"] > 0, cpu["latency"]
if name == "01-encoder":
    assert {a["dim"] for a in cpu["sweep"]["axes"]} == {"batch", "seq_len"}, cpu["sweep"]["axes"]
if name == "31-dynamo-varargs":
    d = by_code["export.dynamic-shapes-mismatch"][0]
    assert "`inputs` has 1 elements" in d["message"] and "forward(self, a, b)" in d["fix"], d
if name == "04-static-batch":
    d = by_code["graph.static-batch"][0]
    assert d["location"]["input"] == "x" and "dynamic_shapes" in d["fix"] and "dynamic_axes" in d["fix"], d
if name == "06-baked-batch":
    reshapes = [d["location"] for d in by_code["graph.baked-batch-reshape"]]
    assert all(l["op_type"] == "Reshape" and l["node"] for l in reshapes), reshapes
    assert any(c["state"] == "failed" for c in cpu["sweep"]["cells"]), "the sweep should fail at other batches"
    assert "torch_models.py:" in by_code["export.traced-constant"][0]["location"]["file"], by_code["export.traced-constant"]
if name == "07-float64-leak":
    assert any(d["location"].get("op_type") == "Cast" and d["location"].get("node") for d in by_code["graph.float64-mixed"]), \
        by_code["graph.float64-mixed"]
if name == "08-tensor-scale":
    assert by_code["export.input-dropped"][0]["location"]["input"] == "scale"
    assert "float(scale)" in by_code["export.traced-constant"][0]["message"], by_code["export.traced-constant"][0]["message"]
if name == "09-traced-branch":
    d = by_code["validate.branch-not-taken"][0]
    assert "torch_models.py:" in d["location"]["file"] and "x.sum() > 0" in d["message"], d
    cases = {c["label"]: c for c in cpu["validation"]["cases"]}
    assert cases["test_data_set_0"]["comparison"]["passed"] and not cases["test_data_set_1"]["comparison"]["passed"], cases
if name == "10-low-opset":
    d = by_code["export.unsupported-operator"][0]
    assert "opset 14" in d["message"] and "--opset 14" in d["fix"], d
if name in ("13-dynamo-data-dependent", "14-dynamo-item-scale"):
    d = by_code["export.data-dependent-guard"][0]
    assert "torch_models.py:" in d["message"] and "torch.cond" in d["fix"], d
    assert "torch_models.py:" in d["location"]["file"], d  # the user's line, where a tool can jump to it
    assert ("x.sum() > 0" if name.startswith("13") else "float(scale)") in d["message"], d
if name == "16-hf-t5-cache":
    d = by_code["export.unsupported-output-type"][0]
    assert "EncoderDecoderCache" in d["message"] and "ortkit export hf" in d["fix"], d
if name == "17-dynamo-no-translation":
    d = by_code["export.unsupported-operator"][0]
    assert "aten::_linalg_svd" in d["message"] and "custom_translation_table" in d["fix"], d
if name == "19-dynamo-fixed-size-buffer":
    found = sorted(d["message"] for d in by_code["export.dim-specialized"])
    assert len(found) == 2 and all(d["location"]["input"] == "x" for d in by_code["export.dim-specialized"]), found
    assert "axis 0" in found[0] and "fixes it to 2" in found[0] and "axis 1" in found[1] and "fixes it to 16" in found[1], found
    assert "torch_models.py" in by_code["export.dim-specialized"][0]["location"]["file"], by_code["export.dim-specialized"]
if name in ("20-dynamo-opset-13", "21-dynamo-opset-17"):
    d = by_code["export.opset-raised" if name.startswith("20") else "export.opset-conversion-broken"][0]
    assert "ortkit convert" in d["fix"], d
if name == "22-default-export":
    d = by_code["graph.output-internal-name"][0]
    assert d["location"]["output"] and d["location"]["output"] != "output", d
if name == "23-data-left-behind":
    assert "model.onnx.data" in by_code["external-data.missing-file"][0]["message"], by_code["external-data.missing-file"]
    assert "external-data.path-escapes" not in found, found
if name == "27-tf-captured-constant":
    assert by_code["graph.captured-constant-input"][0]["location"]["input"] == "MatMul/b:0", by_code
if name == "30-hf-llama-torchscript":
    assert by_code["graph.logits-to-keep-input"][0]["location"]["input"] == "logits_to_keep", by_code
if name == "24-hf-bert-torchscript":
    d = by_code["export.bad-inputs"][0]
    assert "use_cache" in d["message"] and "dynamo" in d["fix"], d
print("ok", summary)
PY
done <"$src/tests/gallery/expected.txt"

# 2: padding invariance. Row 1 of the padded data set, run alone without its padding, gives the same
# hidden states at the real positions as it did padded.
"$python" - "$work/02-bert" <<'PY'
import os, sys
import numpy as np
from onnx import numpy_helper
import onnx
folder = sys.argv[1]
def load(name):
    t = onnx.TensorProto(); t.ParseFromString(open(os.path.join(folder, "test_data_set_1", name), "rb").read())
    return numpy_helper.to_array(t)
ids, mask, types = load("input_0.pb"), load("input_1.pb"), load("input_2.pb")
real = int(mask[1].sum())
assert real < mask.shape[1], "row 1 should be padded"
out = os.path.join(folder, "unpadded")
os.makedirs(out, exist_ok=True)
for name, a in (("input_ids", ids), ("attention_mask", mask), ("token_type_ids", types)):
    np.save(os.path.join(out, name + ".npy"), a[1:2, :real])
np.save(os.path.join(folder, "padded_row.npy"), load("output_0.pb")[1, :real])
PY
"$ortkit" run "$work/02-bert/model.onnx" --input "$work/02-bert/unpadded" --output-dir "$work/02-bert/run" --save-format npy >/dev/null
"$python" - "$work/02-bert" <<'PY'
import sys
import numpy as np
folder = sys.argv[1]
alone = np.load(f"{folder}/run/last_hidden_state.npy")[0]
padded = np.load(f"{folder}/padded_row.npy")
err = float(np.abs(alone - padded).max())
assert err < 1e-4, f"padding changes the real positions' outputs: max abs error {err}"
print(f"ok 02-bert: padding invariance, max abs error {err:.2e} over {alone.shape[0]} real positions")
PY

# The text and Markdown reports of a broken case read as a report.
set +e
"$ortkit" doctor "$work/09-traced-branch" --format text --runs 3 >"$work/09.txt"; rc_text=$?
"$ortkit" doctor "$work/09-traced-branch" --format markdown --runs 3 >"$work/09.md"; rc_md=$?
set -e
[ "$rc_text" = 1 ] && [ "$rc_md" = 1 ] || fail "doctor exit codes $rc_text/$rc_md, expected 1"
grep -q "verdict: BROKEN" "$work/09.txt" && grep -q "validate.branch-not-taken" "$work/09.txt" && grep -q "sweep grid" "$work/09.txt" \
  || { cat "$work/09.txt" >&2; fail "text report"; }
grep -q '^\*\*Verdict: BROKEN' "$work/09.md" && grep -q '^## sweep grid (cpu)' "$work/09.md" && grep -q '^| batch | result' "$work/09.md" \
  || { cat "$work/09.md" >&2; fail "markdown report"; }
echo "gallery passed in $((SECONDS - start)) s"
