#!/usr/bin/env bash
# ortkit convert (~15 s): a model as PyTorch 2.x's default exporter writes it (IR 10, opset 20, both
# Gelu forms, Split with num_outputs, Shape with start, ConstantOfShape, weights in external data)
# converted for ONNX Runtime 1.16 and to opset 17: the result loads within 1.16's limits, keeps its
# external data, and onnxruntime in Python (an independent oracle) gives the original's outputs on
# it. A Pad along chosen axes is refused naming the node; a difference beyond tolerance writes
# nothing; bad flags are usage errors.
source "$2/tests/support/e2e.sh"
need_python
"$python" - "$work" <<'PY'
import sys
import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh
out = sys.argv[1]
rng = np.random.default_rng(0)
w = nh.from_array(rng.standard_normal((12, 12 * 64)).astype(np.float32), "proj.weight")
nodes = [
    h.make_node("MatMul", ["x", "proj.weight"], ["mm0"], name="proj"),
    h.make_node("Slice", ["mm0", "zero", "twelve", "last"], ["mm"], name="narrow"),
    h.make_node("Gelu", ["mm"], ["g"], name="gelu_exact"),
    h.make_node("Gelu", ["g"], ["g2"], name="gelu_tanh", approximate="tanh"),
    h.make_node("Split", ["g2"], ["s0", "s1", "s2"], name="chunk", axis=-1, num_outputs=3),
    h.make_node("Add", ["s0", "s1"], ["a"], name="add"),
    h.make_node("Shape", ["x"], ["tail"], name="shape_tail", start=-1),
    h.make_node("ConstantOfShape", ["tail"], ["ones"], name="ones", value=nh.from_array(np.array([1.0], np.float32))),
    h.make_node("Split", ["ones"], ["o0", "o1", "o2"], name="split_ones", axis=0, num_outputs=3),
    h.make_node("Mul", ["a", "s2"], ["m"], name="mul"),
    h.make_node("Add", ["m", "o0"], ["y"], name="out"),
]
graph = h.make_graph(nodes, "dynamo_like", [h.make_tensor_value_info("x", T.FLOAT, ["batch", "seq", 12])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["batch", "seq", 4])],
                     [w] + [nh.from_array(np.array([v], np.int64), n) for n, v in (("zero", 0), ("twelve", 12), ("last", -1))])
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 20)], ir_version=10)
onnx.save(model, f"{out}/model.onnx", save_as_external_data=True, location="model.onnx.data", size_threshold=1024)

pad = h.make_graph([h.make_node("Pad", ["x", "pads", "", "axes"], ["y"], name="pad_width")], "pad",
                   [h.make_tensor_value_info("x", T.FLOAT, [4, 4])], [h.make_tensor_value_info("y", T.FLOAT, [4, 6])],
                   [nh.from_array(np.array([1, 1], np.int64), "pads"), nh.from_array(np.array([1], np.int64), "axes")])
onnx.save(h.make_model(pad, opset_imports=[h.make_opsetid("", 18)], ir_version=9), f"{out}/pad.onnx")
PY

# For ONNX Runtime 1.16: its newest opset (19) and IR version (9).
expect_rc 0 "$ortkit" convert "$work/model.onnx" --target-ort 1.16 --out "$work/for116.onnx"
expect_msg "opset 20 -> 19, IR version 10 -> 9"
expect_msg "gelu_exact *Gelu *Gelu-20 (approximate='none') -> its formula with Erf"
expect_msg "gelu_tanh *Gelu *Gelu-20 (approximate='tanh') -> its formula with Tanh"
expect_msg "batch=1, seq=16"
expect_msg "batch=3, seq=32"
expect_msg "CONVERTED: wrote $work/for116.onnx and $work/for116.onnx.data"
expect_rc 0 "$ortkit" check "$work/for116.onnx" --target-ort 1.16
expect_msg "7. target runtime     ok"

# To opset 17, as JSON.
expect_rc 0 "$ortkit" convert "$work/model.onnx" --opset 17 --out "$work/opset17.onnx" --format json
cp "$work/out" "$work/convert.json"
"$python" - "$work" <<'PY'
import json, sys
import numpy as np
import onnx
import onnxruntime as ort
work = sys.argv[1]
report = json.load(open(f"{work}/convert.json"))
assert report["written"] and report["from_opset"] == 20 and report["to_opset"] == 17, report
assert report["to_ir_version"] == 8, report
assert [r["node"] for r in report["rewrites"]] == ["gelu_exact", "gelu_tanh", "chunk", "split_ones"], report["rewrites"]
assert report["proof"]["passed"] and len(report["proof"]["trials"]) == 2, report["proof"]
converted = onnx.load(f"{work}/opset17.onnx", load_external_data=False)
assert converted.ir_version == 8 and converted.opset_import[0].version == 17
assert not any(n.op_type == "Gelu" for n in converted.graph.node)
assert any(t.data_location == onnx.TensorProto.EXTERNAL for t in converted.graph.initializer), "weights left external data"
onnx.checker.check_model(f"{work}/opset17.onnx")
x = np.random.default_rng(7).standard_normal((5, 9, 12)).astype(np.float32)
want = ort.InferenceSession(f"{work}/model.onnx").run(None, {"x": x})[0]
got = ort.InferenceSession(f"{work}/opset17.onnx").run(None, {"x": x})[0]
assert got.shape == want.shape == (5, 9, 4), (got.shape, want.shape)
np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-5)
PY

# Pad-18 with an axes input has no Pad-13 form: refused, the node named, nothing written.
expect_rc 1 "$ortkit" convert "$work/pad.onnx" --opset 17 --out "$work/pad17.onnx"
expect_msg "convert.not-expressible"
expect_msg "node 'pad_width' (Pad) has no form in opset 17"
expect_msg "NOT CONVERTED: nothing written"
[ ! -e "$work/pad17.onnx" ] || fail "a refused conversion wrote $work/pad17.onnx"

# No tolerance at all: the formula's last-bit differences from the Gelu kernel are a difference.
expect_rc 1 "$ortkit" convert "$work/model.onnx" --opset 17 --atol 0 --rtol 0 --out "$work/exact.onnx"
expect_msg "convert.outputs-differ"
expect_msg "DIFFERS"
[ ! -e "$work/exact.onnx" ] || fail "a conversion whose outputs differ wrote $work/exact.onnx"

# Usage errors.
expect_rc 2 "$ortkit" convert "$work/model.onnx" --out "$work/x.onnx"
expect_msg "give --opset N or --target-ort X.Y"
expect_rc 2 "$ortkit" convert "$work/model.onnx" --opset 17 --out "$work/model.onnx"
expect_msg "which this command reads"
expect_rc 2 "$ortkit" convert "$work/model.onnx" --target-ort 1.16 --opset 20 --out "$work/x.onnx"
expect_msg "newer than ONNX Runtime 1.16 loads"
expect_rc 2 "$ortkit" convert "$work/model.onnx" --opset 17 --atol nan --out "$work/x.onnx"
echo "convert: all checks passed"
