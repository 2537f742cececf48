"""The reference folder layout ONNX's test data uses and ortkit reads (tensor/test_case.h)."""

import os

import numpy as np
import onnx
from onnx import numpy_helper


def graph_io(model_path):
    """(input names, output names) of the exported graph; initializers listed as inputs excluded."""
    model = onnx.load(model_path, load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in initializers]
    return inputs, [o.name for o in model.graph.output], model


def write_data_set(folder, named_inputs, named_outputs):
    """folder/input_K.pb and folder/output_K.pb, each TensorProto named after its tensor."""
    os.makedirs(folder, exist_ok=True)
    for prefix, tensors in (("input", named_inputs), ("output", named_outputs)):
        for k, (name, array) in enumerate(tensors):
            proto = numpy_helper.from_array(np.ascontiguousarray(array), name=name)
            with open(os.path.join(folder, f"{prefix}_{k}.pb"), "wb") as f:
                f.write(proto.SerializeToString())
