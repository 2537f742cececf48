"""A model with bert-tiny's inputs and output whose Run costs ~2 us, for serve_bench.sh's protocol
floor: served and loaded like bert-tiny, it measures what the server costs per request apart
from the model.   python trivial_model.py OUT.onnx [HIDDEN=128]"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

hidden = int(sys.argv[2]) if len(sys.argv) > 2 else 128
inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq_len"])
          for n in ("input_ids", "attention_mask", "token_type_ids")]
output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq_len", hidden])
nodes = [helper.make_node("Cast", ["input_ids"], ["ids_float"], to=TensorProto.FLOAT),
         helper.make_node("Unsqueeze", ["ids_float", "last_axis"], ["column"]),
         helper.make_node("Mul", ["column", "row"], ["last_hidden_state"])]
graph = helper.make_graph(nodes, "trivial", inputs, [output],
                          [numpy_helper.from_array(np.array([-1], np.int64), "last_axis"),
                           numpy_helper.from_array(np.ones(hidden, np.float32), "row")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
