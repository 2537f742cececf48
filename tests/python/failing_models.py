#!/usr/bin/env python3
"""Writes the 1,000-node failing models `ortkit reduce` is tested and measured on, into OUT_DIR:
load.onnx (ONNX Runtime refuses a Reshape at load), run.onnx (a Reshape whose shape fits another
size fails the run), nan.onnx (a Sqrt of negative values), diverge.onnx (a LayerNormalization written
out op by op, which rounds differently once ONNX Runtime fuses it) and fine.onnx (nothing fails); each
failure sits in the middle of a chain with skip connections.

usage: failing_models.py OUT_DIR   (tests/e2e/reduce.sh, scripts/compare_peers.sh)
"""
import os
import sys
import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
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
