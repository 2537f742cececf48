"""Writes the hostile files that tests/e2e/hardening.sh points ortkit at.

  python hostile_files.py FOLDER

FOLDER/relu16.onnx          x: float32[1, 16] -> Relu
FOLDER/relu_rows.onnx       x: float32[rows, 16] -> Relu
FOLDER/huge_dim.onnx        x: float32[2147483648] -> Relu (69 bytes of model, 8 GiB of input)
FOLDER/minus5.onnx          x: float32[-5, 16] -> Relu (a dimension that is no size)
FOLDER/bomb.npz             x.npy: float32[16777216, 17] (1.1 GB) of zeros, deflated to about 1 MB
FOLDER/huge_member.npz      x.npy: float32[50331648, 16] (3 GiB) of zeros, deflated
FOLDER/reference_bad.npz    x: float32[1, 16] ones, y: the Relu of ones minus 999 (every output wrong)
FOLDER/absolute/model.onnx  a weight whose external data location is an absolute path
FOLDER/linked/model.onnx    a weight in linked/w.bin, a symbolic link to a file outside the folder
FOLDER/passwd/model.onnx    a weight whose external data location is /etc/passwd
FOLDER/outside.bin          the file linked/w.bin points at
FOLDER/deep.onnx            a model whose If branches nest 2000 graphs deep
FOLDER/twin_outputs.onnx    outputs 'a/b', 'a_b', 'a:b', '..' and a name of 300 characters: one file name for all
FOLDER/escapes.onnx         terminal escapes in every name a command prints: model, graph, node, input, output,
                            metadata (ESC[2J, an OSC 8 hyperlink, a carriage return, BEL, a C1 CSI, U+202E), and
                            a training-mode Dropout, so that check names the node in a finding
FOLDER/escapes_dir[ESC]/... the same model in a folder whose name holds ESC[2J
"""

import os
import struct
import sys
import zipfile
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper


def relu_model(shape):
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def npy_header(shape):
    text = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join(f"{d}, " for d in shape)
    text += " " * (63 - (10 + len(text)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode()


def deflated_zeros_npz(path, shape):
    """An .npz with one member 'x.npy' of zeros, streamed through zlib: never held in memory."""
    count = int(np.prod(shape)) * 4
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        with z.open("x.npy", "w", force_zip64=True) as member:
            member.write(npy_header(shape))
            block = bytes(1 << 24)
            while count > 0:
                n = min(count, len(block))
                member.write(block[:n])
                count -= n


def external_model(folder, location, data_file=None):
    os.makedirs(folder, exist_ok=True)
    weight = helper.make_tensor("w", TensorProto.FLOAT, [4], [0.0] * 4)
    weight.ClearField("float_data")
    weight.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", "0"), ("length", "16")):
        entry = weight.external_data.add()
        entry.key, entry.value = key, value
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "external",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [weight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    if data_file:
        with open(data_file, "wb") as f:
            f.write(struct.pack("<4f", 1, 2, 3, 4))


def deep_model(path, depth):
    """If nodes whose then-branch holds the next If, `depth` levels down, serialised by hand (the
    onnx package itself would refuse to build it recursively)."""
    def varint(n):
        out = b""
        while True:
            byte = n & 0x7F
            n >>= 7
            out += bytes([byte | (0x80 if n else 0)])
            if not n:
                return out

    def field(number, payload):
        return varint(number << 3 | 2) + varint(len(payload)) + payload

    graph = b""
    for _ in range(depth):
        attribute = field(1, b"then_branch") + varint(20 << 3) + varint(5) + field(6, graph)  # name, type GRAPH, g
        node = field(4, b"If") + field(5, attribute)
        graph = field(1, node)
    model = varint(1 << 3) + varint(8) + field(7, graph) + field(8, varint(2 << 3) + varint(17))
    with open(path, "wb") as f:
        f.write(model)


# What a hostile name holds: clear the screen, a hyperlink, a carriage return over the line, the bell,
# a C1 CSI (U+009B) and a right-to-left override.
ESCAPES = "\x1b[2J\x1b]8;;http://evil.example/\x07link\x1b]8;;\x07\rHEALTHY\x07\u009b31m\u202e"


def twin_outputs_model(path):
    names = ["a/b", "a_b", "a:b", "..", "n" * 300]
    nodes = [helper.make_node("Identity", ["x"], [name]) for name in names]
    graph = helper.make_graph(nodes, "twins", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in names])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)


def escapes_model(path):
    e = ESCAPES
    ratio = helper.make_tensor("ratio" + e, TensorProto.FLOAT, [], [0.5])
    training = helper.make_tensor("training" + e, TensorProto.BOOL, [], [True])
    nodes = [helper.make_node("Dropout", ["x" + e, "ratio" + e, "training" + e], ["y" + e], name="dropout" + e),
             helper.make_node("Relu", ["y" + e], ["out" + e], name="relu" + e)]
    graph = helper.make_graph(nodes, "graph" + e, [helper.make_tensor_value_info("x" + e, TensorProto.FLOAT, ["b" + e, 4])],
                              [helper.make_tensor_value_info("out" + e, TensorProto.FLOAT, ["b" + e, 4])],
                              [ratio, training])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8,
                              producer_name="producer" + e, producer_version="1" + e, doc_string="doc" + e)
    helper.set_model_props(model, {"key" + e: "value" + e})
    onnx.save(model, path)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    onnx.save(relu_model([1, 16]), os.path.join(out, "relu16.onnx"))
    onnx.save(relu_model(["rows", 16]), os.path.join(out, "relu_rows.onnx"))
    onnx.save(relu_model([2147483648]), os.path.join(out, "huge_dim.onnx"))
    onnx.save(relu_model([-5, 16]), os.path.join(out, "minus5.onnx"))
    deflated_zeros_npz(os.path.join(out, "bomb.npz"), (1 << 24, 17))
    deflated_zeros_npz(os.path.join(out, "huge_member.npz"), (50331648, 16))
    x = np.ones((1, 16), dtype=np.float32)
    np.savez(os.path.join(out, "reference_bad.npz"), x=x, y=x - 999)
    external_model(os.path.join(out, "absolute"), os.path.join(out, "outside.bin"), os.path.join(out, "outside.bin"))
    external_model(os.path.join(out, "linked"), "w.bin")
    os.symlink(os.path.join(out, "outside.bin"), os.path.join(out, "linked", "w.bin"))
    external_model(os.path.join(out, "passwd"), "/etc/passwd")
    deep_model(os.path.join(out, "deep.onnx"), 2000)
    twin_outputs_model(os.path.join(out, "twin_outputs.onnx"))
    escapes_model(os.path.join(out, "escapes.onnx"))
    os.makedirs(os.path.join(out, "escapes_dir\x1b[2J"), exist_ok=True)
    escapes_model(os.path.join(out, "escapes_dir\x1b[2J", "model.onnx"))


if __name__ == "__main__":
    main()
