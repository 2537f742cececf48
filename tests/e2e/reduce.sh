#!/usr/bin/env bash
# ortkit reduce (~30 s): four 1,000-node models, each failing one way in the middle of a chain with
# skip connections (ONNX Runtime refuses a Reshape at load; a Reshape whose shape fits another size
# fails the run; a Sqrt of negative values makes NaN; a LayerNormalization written out op by op
# rounds differently once ONNX Runtime fuses it), are reduced to a handful of nodes within the time
# limit, and the Python reproducer each writes shows the failure with onnxruntime in Python (an
# independent oracle). A model that does not fail writes nothing; a bad --fails is a usage error.
source "$2/tests/support/e2e.sh"
need_python
"$python" - "$work" <<'PY'
import sys
import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh
out = sys.argv[1]
TOTAL = 1000

def model(name, middle, width=8):
    nodes, inits, values = [], [], ["x"]
    for i in range(500):
        if i % 5 == 4:
            nodes.append(h.make_node("Add", [values[-1], values[-3]], [f"b{i}"], name=f"skip_{i}"))
        else:
            nodes.append(h.make_node("Sin" if i % 2 else "Tanh", [values[-1]], [f"b{i}"], name=f"act_{i}"))
        values.append(f"b{i}")
    mid_nodes, mid_inits = middle(values[-1])
    nodes += mid_nodes
    inits += mid_inits
    previous = "m"
    rest = TOTAL - len(nodes)
    for i in range(rest):
        output = "y" if i + 1 == rest else f"a{i}"
        nodes.append(h.make_node("Abs" if i % 2 else "Neg", [previous], [output], name=f"tail_{i}"))
        previous = output
    graph = h.make_graph(nodes, name, [h.make_tensor_value_info("x", T.FLOAT, [2, width])],
                         [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    assert len(m.graph.node) == TOTAL
    onnx.save(m, f"{out}/{name}.onnx")

def const(name, values, dtype=np.float32):
    return nh.from_array(np.array(values, dtype), name)

model("load", lambda v: ([h.make_node("Reshape", [v, "two_unknowns"], ["m"], name="bad_reshape")],
                         [const("two_unknowns", [-1, -1], np.int64)]))
model("run", lambda v: ([h.make_node("Reshape", [v, "three_by_three"], ["m"], name="bad_reshape")],
                        [const("three_by_three", [3, 3], np.int64)]))
model("nan", lambda v: ([h.make_node("Sub", [v, "two"], ["below"], name="below_zero"),
                         h.make_node("Sqrt", ["below"], ["m"], name="square_root")], [const("two", 2.0)]))
model("fine", lambda v: ([h.make_node("Identity", [v], ["m"], name="same")], []))

def layer_norm(v):
    n = lambda op, ins, out, **kw: h.make_node(op, ins, [out], name=f"ln_{out}", **kw)
    nodes = [n("Mul", [v, "tenth"], "small"), n("Add", ["small", "thousand"], "shifted"),
             n("ReduceMean", ["shifted"], "mean", axes=[-1]), n("Sub", ["shifted", "mean"], "centered"),
             n("Pow", ["centered", "two"], "squared"), n("ReduceMean", ["squared"], "variance", axes=[-1]),
             n("Add", ["variance", "epsilon"], "stabilised"), n("Sqrt", ["stabilised"], "deviation"),
             n("Div", ["centered", "deviation"], "normalised"), n("Mul", ["normalised", "gamma"], "scaled"),
             n("Add", ["scaled", "beta"], "m")]
    inits = [const("tenth", 0.1), const("thousand", 1000.0), const("two", 2.0), const("epsilon", 1e-5),
             const("gamma", np.ones(64)), const("beta", np.zeros(64))]
    return nodes, inits
model("diverge", layer_norm, width=64)
PY

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

# Usage errors name the flag.
expect_rc 2 "$ortkit" reduce "$work/run.onnx" --fails crash --out "$work/x.onnx"
expect_msg "\-\-fails 'crash'"
expect_msg "diverge=opt-levels"
expect_rc 2 "$ortkit" reduce "$work/run.onnx" --fails diverge=opt-levels=off,fast --out "$work/x.onnx"
expect_rc 2 "$ortkit" reduce "$work/run.onnx" --fails nan --message boom --out "$work/x.onnx"
expect_msg "\-\-message applies to load and run"
[ ! -e "$work/x.onnx" ] || fail "a usage error wrote $work/x.onnx"
echo "reduce: all checks passed"
