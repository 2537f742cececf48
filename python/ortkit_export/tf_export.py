"""TensorFlow → ONNX through tf2onnx, from a Keras model or a SavedModel, with an explicit input signature."""

import os

import numpy as np

from . import common, testdata
from .errors import ExportError, located, translate_tf_error
from .record import ExportRecord, TensorInfo, axes_json
from .spec import DTYPES, InputSpec, parse_dynamic, parse_inputs, second_shapes, synthesize


def _import():
    try:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        import tensorflow as tf
        import tf2onnx
    except ImportError as e:
        raise ExportError("export.framework-missing", f"TensorFlow or tf2onnx cannot be imported: {e}",
                          "install tensorflow-cpu and tf2onnx (python/requirements.txt pins versions that work together)") from e
    return tf, tf2onnx


def specs_from_keras(model):
    """Input specs from a Keras model's own inputs: None dimensions become 2 (batch) or 8, and dynamic."""
    specs, dynamic = [], {}
    for tensor in model.inputs:
        name = tensor.name.split(":")[0]
        shape = []
        for axis, dim in enumerate(tensor.shape):
            if dim is None:
                shape.append(2 if axis == 0 else 8)
                dynamic.setdefault(name, {})[axis] = "batch" if axis == 0 else f"{name}_dim{axis}"
            else:
                shape.append(int(dim))
        dtype = tensor.dtype if isinstance(tensor.dtype, str) else tensor.dtype.name  # Keras 3: a string
        specs.append(InputSpec(name, dtype if dtype in DTYPES else "float32", shape))
    return specs, dynamic


def _is_keras_model(model):
    """A Keras 3 model or a tf_keras (Keras 2) one: tf.keras is Keras 3 in TensorFlow 2.16 and newer."""
    return any(c.__name__ == "Model" and c.__module__.split(".")[0] in ("keras", "tf_keras")
               for c in type(model).__mro__)


def _keras_output_names(model):
    """The names of the layers that make a Keras model's outputs (Keras 3 names the tensors keras_tensor_N)."""
    names = []
    for i, tensor in enumerate(model.outputs):
        history = getattr(tensor, "_keras_history", None)
        names.append(getattr(history[0], "name", None) if history else None)
    if None in names or len(set(names)) != len(names):
        names = ["output"] if len(model.outputs) == 1 else [f"output_{i}" for i in range(len(model.outputs))]
    return names


def _flatten(tf, result):
    if isinstance(result, dict):
        return [(k, result[k]) for k in sorted(result)]
    if isinstance(result, (list, tuple)):
        return [(f"output_{i}", t) for i, t in enumerate(result)]
    return [("output", result)]


def _load(tf, model):
    """(source, callable): a Keras model as given, or the model a path holds (a SavedModel's serving_default
    signature, a Keras file's model)."""
    if not isinstance(model, (str, os.PathLike)):
        if not _is_keras_model(model):
            raise ExportError("export.bad-module", f"the factory returned {type(model).__name__}, not a Keras model",
                              "return a tf.keras.Model from the factory, or pass --saved-model DIR")
        return "keras", model
    path = os.fspath(model)
    if not os.path.exists(path):
        raise ExportError("export.bad-module", f"'{path}' does not exist", "pass a SavedModel folder or a Keras file")
    try:
        if os.path.isdir(path) and not os.path.exists(os.path.join(path, "keras_metadata.pb")):
            loaded = tf.saved_model.load(path)
            if "serving_default" not in loaded.signatures:
                raise ExportError("export.bad-module", f"the SavedModel '{path}' has no serving_default signature",
                                  "save it with signatures={'serving_default': f.get_concrete_function(...)}")
            return "saved_model", loaded.signatures["serving_default"]
        return "keras", tf.keras.models.load_model(path, compile=False)
    except ExportError:
        raise
    except Exception as e:
        raise ExportError("export.bad-module", f"cannot load '{path}': {type(e).__name__}: {str(e).splitlines()[0]}",
                          "pass a SavedModel folder (tf.saved_model.save) or a Keras file (model.save)") from e


def _input_specs(model, source, inputs, dynamic, sequence_axis):
    """(specs, dynamic axes): as given, or for a Keras model without --inputs its own (None dimensions dynamic)."""
    if inputs is not None:
        specs = parse_inputs(inputs)
        return specs, parse_dynamic(dynamic, specs, sequence_axis)
    if source != "keras":
        raise ExportError("export.bad-arguments", "a SavedModel needs --inputs", "e.g. --inputs x:float32[2,8]")
    specs, auto_dynamic = specs_from_keras(model)
    return specs, auto_dynamic if dynamic is None else parse_dynamic(dynamic, specs, sequence_axis)


def _example_data(specs, dyn, data_sets, seed):
    """(arrays0, shapes0, arrays1, shapes1): the data sets given, or synthesised; set 1 with every dynamic axis
    at another size than the specs'."""
    arrays0 = data_sets[0] if data_sets else synthesize(specs, seed=seed)
    shapes0 = {s.name: list(a.shape) for s, a in zip(specs, arrays0)}
    shapes1 = second_shapes(specs, dyn)
    arrays1 = data_sets[1] if data_sets and len(data_sets) > 1 else synthesize(specs, shapes1, seed=seed + 1)
    shapes1 = {s.name: list(a.shape) for s, a in zip(specs, arrays1)}
    return arrays0, shapes0, arrays1, shapes1


def _keras_call(model):
    """The function a Keras model is called and converted through: inputs by position, outputs as a dict.

    A Keras model is called in a tf.function and converted from it, for Keras 3 and tf_keras alike: tf2onnx's
    from_keras fails on Keras 3 Sequential models (KeyError: 'keras_tensor_N'). The outputs come back as a dict
    named after their layers, which names the graph's outputs too."""

    def keras_call(*args):
        result = model(list(args) if len(args) > 1 else args[0], training=False)
        if isinstance(result, dict):
            return result
        return dict(zip(_keras_output_names(model), result if isinstance(result, (list, tuple)) else [result]))

    return keras_call


def _run(tf, model, source, specs, arrays):
    """[(output name, array)]: the framework's outputs on one data set."""
    if source == "keras":
        result = _keras_call(model)(*[tf.constant(a) for a in arrays])
    else:
        result = model(**{s.name: tf.constant(a) for s, a in zip(specs, arrays)})
    return [(n, np.asarray(t)) for n, t in _flatten(tf, result)]


def _run_both(tf, model, source, specs, arrays0, arrays1):
    """The references: the outputs on data sets 0 and 1."""
    try:
        return _run(tf, model, source, specs, arrays0), _run(tf, model, source, specs, arrays1)
    except Exception as e:
        raise ExportError("export.bad-inputs", f"the model does not run on the given inputs "
                          f"({', '.join(s.describe() for s in specs)}): {type(e).__name__}: {str(e).splitlines()[0]}",
                          "make --inputs match the model's inputs: names, element types and shapes") from e


def _signature(tf, specs, dyn):
    """The input signature tf2onnx converts with: dynamic axes as None dimensions."""
    return [tf.TensorSpec([None if axis in dyn.get(s.name, {}) else d for axis, d in enumerate(s.shape)],
                          tf.as_dtype(DTYPES[s.dtype]), name=s.name) for s in specs]


def _serving_function(tf, model, source, specs, signature):
    """The tf.function tf2onnx converts: the Keras model called as in _run, or the signature with inputs by name."""
    if source == "keras":
        return tf.function(_keras_call(model), input_signature=signature)
    names = [s.name for s in specs]

    @tf.function(input_signature=signature)
    def serving(*args):
        return model(**dict(zip(names, args)))

    return serving


def _convert(tf, tf2onnx, model, source, specs, dyn, opset, model_path):
    """Writes model_path with tf2onnx; returns the warnings it raised and logged."""
    signature = _signature(tf, specs, dyn)
    with common.recorded_warnings(loggers=("tf2onnx",)) as captured:
        try:
            serving = _serving_function(tf, model, source, specs, signature)
            tf2onnx.convert.from_function(serving, input_signature=signature, opset=opset, output_path=model_path)
        except Exception as e:
            raise located(translate_tf_error(e, opset), e) from e
    return captured


def _record_outputs(record, out, model_path, specs, dyn, examples, outputs0, outputs1, captured):
    """Output axes named in the file, the warnings worth keeping, test_data_set_K, the checker's verdict."""
    arrays0, shapes0, arrays1, shapes1 = examples
    graph_outputs = testdata.graph_io(model_path)[1]
    out_axes = common.output_axes([(g, a) for g, (_, a) in zip(graph_outputs, outputs0)],
                                  [(g, a) for g, (_, a) in zip(graph_outputs, outputs1)], dyn, shapes0, shapes1) if dyn else {}
    record.output_dynamic_axes = axes_json(out_axes)
    common.name_dynamic_dims(model_path, dyn, out_axes)
    record.warnings = [w for w in common.finish_warnings(captured)
                       if not w.category.startswith("log:") or "unsupported" in w.message.lower()]
    record.data_sets, record.inputs_dropped, onnx_model, graph_outputs = common.write_data_sets(
        out, model_path, specs, [(arrays0, outputs0), (arrays1, outputs1)])
    record.onnx_checker = common.check_model(onnx_model)
    record.outputs = [TensorInfo(name=g, dtype=str(a.dtype), shape=list(a.shape))
                      for g, (_, a) in zip(graph_outputs, outputs0)]


def export_tf(model, inputs, out, dynamic=None, opset=17, sequence_axis=None, data_sets=None, seed=0, module_ref=None):
    """Exports a Keras model object, a Keras file (.keras / .h5) or a SavedModel folder (a path) to
    `out`/model.onnx with references and export.json.

    inputs: input specs as for export_torch; None for a Keras model takes its own input shapes
      (None dimensions dynamic). A SavedModel's serving_default signature is called with the inputs by name.
    Returns the export.json record (ExportRecord.to_json()); raises ExportError when the export fails, after
    writing export.json with the error.
    """
    tf, tf2onnx = _import()
    source, model = _load(tf, model)
    specs, dyn = _input_specs(model, source, inputs, dynamic, sequence_axis)
    # Keras layers run with training=False; a SavedModel signature is inference only.
    record = ExportRecord.start("tensorflow", tf.__version__, f"tf2onnx ({source})", tf2onnx.__version__, opset, specs,
                                dyn, module=module_ref, training=False, eval_enforced=True)
    os.makedirs(out, exist_ok=True)
    try:
        examples = _example_data(specs, dyn, data_sets, seed)
        outputs0, outputs1 = _run_both(tf, model, source, specs, examples[0], examples[2])
        model_path = os.path.join(out, "model.onnx")
        captured = _convert(tf, tf2onnx, model, source, specs, dyn, opset, model_path)
        _record_outputs(record, out, model_path, specs, dyn, examples, outputs0, outputs1, captured)
    except ExportError as error:
        record.write_failure(out, error)
        raise
    record.write(out)
    return record.to_json()
