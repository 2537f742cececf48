"""ortkit_export: export PyTorch and TensorFlow models to ONNX with reference data.

Each export writes one folder that `ortkit validate --reference` and `ortkit doctor` read:

    DIR/model.onnx
    DIR/test_data_set_0/input_K.pb, output_K.pb   inputs and the framework's own outputs
    DIR/test_data_set_1/...                       the same at another batch / sequence size
    DIR/export.json                               versions, opset, dynamic axes, warnings

Use it as a command (``python -m ortkit_export torch|tf ...``, or ``ortkit export``) or as a library::

    from ortkit_export import export_torch
    export_torch(model, inputs="x:float32[2,3,64,64]", dynamic="auto", out="resnet")
"""

from ._version import __version__
from .errors import ExportError
from .spec import InputSpec, parse_dynamic, parse_inputs


def export_torch(model, inputs, out, **kwargs):
    """Exports a torch.nn.Module. See ortkit_export.torch_export.export_torch for the arguments."""
    from .torch_export import export_torch as impl

    return impl(model, inputs, out, **kwargs)


def export_tf(model, inputs, out, **kwargs):
    """Exports a Keras model, a SavedModel folder or a tf.function. See ortkit_export.tf_export.export_tf."""
    from .tf_export import export_tf as impl

    return impl(model, inputs, out, **kwargs)


__all__ = ["ExportError", "InputSpec", "export_tf", "export_torch", "parse_dynamic", "parse_inputs", "__version__"]
