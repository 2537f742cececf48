"""Small models for tests/e2e/optimize.sh, with random weights: a perceptron whose constant MatMul and Gemm
weights int8 can quantise (scores over 10 classes), a convolutional block (Conv, Relu, a residual Add,
pooling, a classifier Gemm) for the convolution candidates, and a decoder step (four large MatMul to
scores over 1,000 tokens, a cache passed through) for int4. Written with the onnx package; no framework.

    python optimize_models.py OUT_DIR
"""
import pathlib
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def weight(rng, name, *shape):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.1).astype(np.float32), name)


def perceptron(rng):
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"]),
        helper.make_node("Add", ["h", "b1"], ["hb"]),
        helper.make_node("Relu", ["hb"], ["r"]),
        helper.make_node("MatMul", ["r", "w2"], ["h2"]),
        helper.make_node("Add", ["h2", "b2"], ["r2"]),
        helper.make_node("Gemm", ["r2", "w3", "b3"], ["logits"], transB=1),
    ]
    graph = helper.make_graph(
        nodes, "perceptron", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 256])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 10])],
        [weight(rng, "w1", 256, 512), weight(rng, "b1", 512), weight(rng, "w2", 512, 512), weight(rng, "b2", 512),
         weight(rng, "w3", 10, 512), weight(rng, "b3", 10)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def convolutional(rng):
    nodes = [
        helper.make_node("Conv", ["x", "c1", "cb1"], ["y1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["y1"], ["r1"]),
        helper.make_node("Conv", ["r1", "c2", "cb2"], ["y2"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["y2", "r1"], ["s"]),
        helper.make_node("Relu", ["s"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["p"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "fc", "fcb"], ["logits"], transB=1),
    ]
    graph = helper.make_graph(
        nodes, "convolutional", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 32, 32])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 10])],
        [weight(rng, "c1", 32, 3, 3, 3), weight(rng, "cb1", 32), weight(rng, "c2", 32, 32, 3, 3), weight(rng, "cb2", 32),
         weight(rng, "fc", 10, 32), weight(rng, "fcb", 10)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def decoder(rng):
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h1"]),
        helper.make_node("Relu", ["h1"], ["r1"]),
        helper.make_node("MatMul", ["r1", "w2"], ["h2"]),
        helper.make_node("Relu", ["h2"], ["r2"]),
        helper.make_node("MatMul", ["r2", "w3"], ["h3"]),
        helper.make_node("MatMul", ["h3", "head"], ["logits"]),
        helper.make_node("Concat", ["past_key", "x"], ["present_key"], axis=1),
    ]
    graph = helper.make_graph(
        nodes, "decoder",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 256]),
         helper.make_tensor_value_info("past_key", TensorProto.FLOAT, ["batch", "past", 256])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "seq", 1000]),
         helper.make_tensor_value_info("present_key", TensorProto.FLOAT, ["batch", "total", 256])],
        [weight(rng, "w1", 256, 512), weight(rng, "w2", 512, 512), weight(rng, "w3", 512, 256),
         weight(rng, "head", 256, 1000)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def main(out):
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for name, model in (("perceptron", perceptron(rng)), ("convolutional", convolutional(rng)),
                        ("decoder", decoder(rng))):
        onnx.checker.check_model(model)
        onnx.save(model, out / f"{name}.onnx")


if __name__ == "__main__":
    main(sys.argv[1])
