#!/usr/bin/env bash
# --target-ort on check, doctor and validate (~10 s): a model as PyTorch 2.x's default exporter
# stamps it (IR 10, opset 20) is refused by ONNX Runtime 1.16 in that runtime's own words and loads
# on 1.29; an opset-19 Pad in 'wrap' mode loads on 1.15 but has no kernel there; an unknown release
# is a usage error listing the known ones.
source "$2/tests/support/e2e.sh"
need_python
"$python" - "$work" <<'PY'
import sys
import onnx
from onnx import TensorProto, helper
out = sys.argv[1]
def save(name, nodes, inputs, opset, ir):
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 3])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir), f"{out}/{name}")
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])
save("gelu.onnx", [helper.make_node("Gelu", ["x"], ["y"], name="gelu_1")], [x], 20, 10)
pads = helper.make_tensor_value_info("pads", TensorProto.INT64, [4])
save("pad.onnx", [helper.make_node("Pad", ["x", "pads"], ["y"], name="pad_1", mode="wrap")], [x, pads], 19, 9)
PY

expect_rc 1 "$ortkit" check "$work/gelu.onnx" --target-ort 1.16
expect_msg "7. target runtime     FAILED"
expect_msg 'ONNX Runtime 1.16 refuses the model: "Unsupported model IR version: 10, max supported IR version: 9"'
expect_msg "torch.onnx.export(..., opset_version=19)"
expect_msg "Or deploy ONNX Runtime 1.18 or newer, the first that loads it"
expect_rc 0 "$ortkit" check "$work/gelu.onnx" --target-ort 1.29
expect_msg "7. target runtime     ok"
"$ortkit" check "$work/gelu.onnx" --target-ort 1.16.3 --format json >"$work/check.json" || true
"$python" - "$work/check.json" <<'PY'
import json, sys
layer = [l for l in json.load(open(sys.argv[1]))["layers"] if l["name"] == "target"][0]
assert layer["state"] == "failed", layer
assert [d["code"] for d in layer["diagnoses"]] == ["target.ir-version"], layer
PY
# The opset check, in the words of ONNX Runtime's model_load_utils.h.
"$python" -c "import onnx; m = onnx.load('$work/gelu.onnx'); m.ir_version = 9; onnx.save(m, '$work/gelu9.onnx')"
expect_rc 1 "$ortkit" check "$work/gelu9.onnx" --target-ort 1.16 --no-runtime
expect_msg "Opset 20 is under development and support for this is limited"
expect_msg "Current official support for domain ai.onnx is till opset 19"
expect_rc 0 "$ortkit" check "$work/gelu9.onnx" --target-ort 1.17 --no-runtime
expect_msg "warning  target.operator  ONNX Runtime 1.17 loads opset 20 but has no CPU kernel for Gelu-20"

expect_rc 1 "$ortkit" check "$work/pad.onnx" --target-ort 1.15 --no-runtime
expect_msg "no CPU kernel for Pad-19's 'wrap' mode (it came in ONNX Runtime 1.16): the session fails to load"
expect_msg "at:    node 'pad_1' (Pad)"
expect_rc 0 "$ortkit" check "$work/pad.onnx" --target-ort 1.16 --no-runtime

expect_rc 1 "$ortkit" validate "$work/gelu.onnx" --target-ort 1.16 --dim n=2
expect_msg "target runtime ONNX Runtime 1.16: FAILED"
expect_rc 1 "$ortkit" doctor "$work/gelu.onnx" --target-ort 1.16 --dim n=2 --no-sweep
expect_msg "target.ir-version"

expect_rc 2 "$ortkit" check "$work/gelu.onnx" --target-ort 2.0
expect_msg "ONNX Runtime '2.0' is not in ortkit's table; it knows 1.10, 1.11"
echo "PASS: --target-ort"
