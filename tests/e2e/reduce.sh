#!/usr/bin/env bash
# ortkit reduce (~30 s): four 1,000-node models, each failing one way in the middle of a chain with
# skip connections (ONNX Runtime refuses a Reshape at load; a Reshape whose shape fits another size
# fails the run; a Sqrt of negative values makes NaN; a LayerNormalization written out op by op
# rounds differently once ONNX Runtime fuses it), are reduced to a handful of nodes within the time
# limit, and the Python reproducer each writes shows the failure with onnxruntime in Python (an
# independent oracle). A model that does not fail writes nothing; a bad --fails is a usage error.
# --fails cmd:COMMAND: a checker script run by the project's Python (onnxruntime in another process)
# judges each candidate of the NaN model, and the command printed reproduces the failure.
source "$2/tests/support/e2e.sh"
need_python
"$python" "$src/tests/python/failing_models.py" "$work"

# reduce KIND FLAGS...: reduces $work/KIND.onnx into $work/KIND/, JSON in $work/KIND.json; checks the
# report and runs the reproducer it prints with Python's onnxruntime.
reduce() {
  local kind="$1"; shift
  local start end
  start=$(date +%s.%N)
  expect_rc 0 "$ortkit" reduce "$work/$kind.onnx" --out "$work/$kind/min.onnx" --format json "$@"
  end=$(date +%s.%N)
  cp "$work/out" "$work/$kind.json"
  "$python" - "$work" "$kind" "$start" "$end" <<'PY'
import json, os, sys
work, kind, start, end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
r = json.load(open(f"{work}/{kind}.json"))
for key in ("model", "reproduced", "condition", "code", "node", "message", "original_nodes", "reduced_nodes", "nodes",
            "candidates", "sessions", "seconds", "budget_ran_out", "written", "command"):
    assert key in r, (key, sorted(r))
for key in ("model", "inputs", "test_data_set", "npy", "script", "command"):
    assert key in r["written"], (key, r["written"])
assert r["reproduced"] and not r["budget_ran_out"], r
assert r["original_nodes"] == 1000, r["original_nodes"]
assert r["reduced_nodes"] == len(r["nodes"]) and (r["reduced_nodes"] <= 50 or r["reduced_nodes"] < 10), r["nodes"]
assert end - start < 180, f"{kind} took {end - start:.1f} s"
assert r["command"] == f"python3 {work}/{kind}/min_repro.py", r["command"]
for path in [r["written"]["model"], r["written"]["script"], *r["written"]["npy"]]:
    assert os.path.isfile(path), path
assert os.path.isfile(f"{r['written']['test_data_set']}/input_0.pb")
print(f"reduce {kind}: {r['original_nodes']} -> {r['reduced_nodes']} nodes in {end - start:.1f} s, "
      f"{r['candidates']} candidates ({r['condition']}: {', '.join(n['op_type'] for n in r['nodes'])})")
PY
  # The printed command, run with the project's Python: exit 1 and "reproduced" is the failure shown.
  local command
  command=$("$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["command"])' "$work/$kind.json")
  expect_rc 1 "$python" "${command#python3 }"
  expect_msg "^reproduced: "
  cat "$work/out"
}

reduce load --fails load
grep -q '"condition": "load"' "$work/load.json" || fail "load: $(cat "$work/load.json")"
reduce run  # auto: the first failure the original shows
grep -q '"condition": "run"' "$work/run.json" || fail "run: $(cat "$work/run.json")"
grep -q '"node": "bad_reshape"' "$work/run.json" || fail "run: the node named by the runtime is not reported"
reduce nan --fails nan
grep -q '"op_type": "Sqrt"' "$work/nan.json" || fail "nan: the Sqrt is gone"
reduce diverge --fails diverge=opt-levels --atol 1e-5 --rtol 1e-4
grep -q '"op_type": "ReduceMean"' "$work/diverge.json" || fail "diverge: the normalisation is gone"

# The reproducer checks what it says: fed values without a negative one, the Sqrt makes no NaN.
"$python" -c 'import numpy as np, sys; np.save(sys.argv[1], np.abs(np.load(sys.argv[1])) + 1)' "$work/nan/min_inputs/below.npy"
expect_rc 0 "$python" "$work/nan/min_repro.py"
expect_msg "^not reproduced"

# The text report prints the command.
expect_rc 0 "$ortkit" reduce "$work/run.onnx" --fails run --message "cannot be reshaped" --out "$work/text/min.onnx"
expect_msg "nodes       1000 -> 1"
expect_msg "reproduce with: python3 $work/text/min_repro.py"

# A model that does not fail: exit 1, said plainly, nothing written.
expect_rc 1 "$ortkit" reduce "$work/fine.onnx" --out "$work/fine/min.onnx"
expect_msg "the original does not fail"
expect_msg "nothing written"
[ ! -e "$work/fine" ] || fail "a model that does not fail wrote $(ls "$work/fine")"
expect_rc 1 "$ortkit" reduce "$work/run.onnx" --fails nan --out "$work/fine/min.onnx"
expect_msg "does not fail as --fails nan asks"

# cmd: a check command of the user's judges each candidate in its own process.
cat >"$work/checker.py" <<'PY'
import sys
import numpy as np
import onnxruntime as ort
model, inputs = sys.argv[1], sys.argv[2]
session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
feeds = {i.name: np.load(f"{inputs}/{i.name}.npy") for i in session.get_inputs()}
for out, value in zip(session.get_outputs(), session.run(None, feeds)):
    if np.isnan(value).any() or (value > 100).any():
        print(f"bad output {out.name}")
        sys.exit(1)
print("all outputs fine")
PY
expect_rc 0 "$ortkit" reduce "$work/nan.onnx" --fails "cmd:$python $work/checker.py {model} {inputs}" \
  --message "bad output" --command-timeout 30 --out "$work/cmd/min.onnx" --format json
cp "$work/out" "$work/cmd.json"
"$python" - "$work" "$python" <<'PY'
import json, sys
work, python = sys.argv[1], sys.argv[2]
r = json.load(open(f"{work}/cmd.json"))
assert r["reproduced"] and not r["budget_ran_out"], r
assert r["condition"] == f"cmd:{python} {work}/checker.py {{model}} {{inputs}}", r["condition"]
assert r["check_command"] == [python, f"{work}/checker.py", "{model}", "{inputs}"], r["check_command"]
assert r["fed_values"] == "computed", r["fed_values"]
assert r["original_nodes"] == 1000 and 1 <= r["reduced_nodes"] <= 9, (r["original_nodes"], r["nodes"])
assert any(n["op_type"] == "Sqrt" for n in r["nodes"]), r["nodes"]
assert r["message"].startswith("exit status 1: bad output"), r["message"]
assert r["command"] == f"{python} {work}/checker.py {work}/cmd/min.onnx {work}/cmd/min_inputs", r["command"]
print(f"reduce cmd: {r['original_nodes']} -> {r['reduced_nodes']} nodes, {r['candidates']} candidates in "
      f"{r['seconds']:.1f} s ({', '.join(n['op_type'] for n in r['nodes'])})")
PY
cat "$work/out"
command=$("$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["command"])' "$work/cmd.json")
expect_rc 1 bash -c "$command"
expect_msg "bad output"
expect_rc 1 "$python" "$work/cmd/min_repro.py"
expect_msg "^reproduced: exit status 1"
# A checker that passes the original: exit 1, nothing written.
expect_rc 1 "$ortkit" reduce "$work/fine.onnx" --fails "cmd:$python $work/checker.py {model} {inputs}" \
  --out "$work/cmd_fine/min.onnx"
expect_msg "does not fail as --fails cmd:"
expect_msg "all outputs fine"
[ ! -e "$work/cmd_fine" ] || fail "a model the command passes wrote $(ls "$work/cmd_fine")"

# Usage errors name the flag.
expect_rc 2 "$ortkit" reduce "$work/run.onnx" --fails crash --out "$work/x.onnx"
expect_msg "\-\-fails 'crash'"
expect_msg "diverge=opt-levels"
expect_rc 2 "$ortkit" reduce "$work/run.onnx" --fails diverge=opt-levels=off,fast --out "$work/x.onnx"
expect_rc 2 "$ortkit" reduce "$work/run.onnx" --fails nan --message boom --out "$work/x.onnx"
expect_msg "\-\-message applies to load, run and cmd"
expect_rc 2 "$ortkit" reduce "$work/run.onnx" --fails "cmd:" --out "$work/x.onnx"
expect_msg "\-\-fails 'cmd:' names no command"
expect_rc 2 "$ortkit" reduce "$work/run.onnx" --fails "cmd:ortkit-no-such-checker {model}" --out "$work/x.onnx"
expect_msg "\-\-fails 'cmd:ortkit-no-such-checker {model}': cannot run 'ortkit-no-such-checker'"
expect_rc 2 "$ortkit" reduce "$work/run.onnx" --fails "cmd:true" --command-timeout 0 --out "$work/x.onnx"
expect_msg "\-\-command-timeout"
[ ! -e "$work/x.onnx" ] || fail "a usage error wrote $work/x.onnx"
echo "reduce: all checks passed"
