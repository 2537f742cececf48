"""TensorFlow → ONNX through tf2onnx, from a Keras model or a SavedModel, with an explicit input signature."""

import os

import numpy as np

from . import common, testdata
from .errors import ExportError, translate_tf_error
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


def export_tf(model, inputs, out, dynamic=None, opset=17, sequence_axis=None, data_sets=None, seed=0, module_ref=None):
    """Exports a Keras model object, a Keras file (.keras / .h5) or a SavedModel folder (a path) to
    `out`/model.onnx with references and export.json.

    inputs: input specs as for export_torch; None for a Keras model takes its own input shapes
      (None dimensions dynamic). A SavedModel's serving_default signature is called with the inputs by name.
    Returns the export.json record; raises ExportError when the export fails.
    """
    tf, tf2onnx = _import()
    source = "keras"
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        if not os.path.exists(path):
            raise ExportError("export.bad-module", f"'{path}' does not exist", "pass a SavedModel folder or a Keras file")
        try:
            if os.path.isdir(path) and not os.path.exists(os.path.join(path, "keras_metadata.pb")):
                source, loaded = "saved_model", tf.saved_model.load(path)
                if "serving_default" not in loaded.signatures:
                    raise ExportError("export.bad-module", f"the SavedModel '{path}' has no serving_default signature",
                                      "save it with signatures={'serving_default': f.get_concrete_function(...)}")
                model = loaded.signatures["serving_default"]
            else:
                model = tf.keras.models.load_model(path, compile=False)
        except ExportError:
            raise
        except Exception as e:
            raise ExportError("export.bad-module", f"cannot load '{path}': {type(e).__name__}: {str(e).splitlines()[0]}",
                              "pass a SavedModel folder (tf.saved_model.save) or a Keras file (model.save)") from e
    elif not _is_keras_model(model):
        raise ExportError("export.bad-module", f"the factory returned {type(model).__name__}, not a Keras model",
                          "return a tf.keras.Model from the factory, or pass --saved-model DIR")
    if inputs is None:
        if source != "keras":
            raise ExportError("export.bad-arguments", "a SavedModel needs --inputs", "e.g. --inputs x:float32[2,8]")
        specs, auto_dynamic = specs_from_keras(model)
        dyn = auto_dynamic if dynamic is None else parse_dynamic(dynamic, specs, sequence_axis)
    else:
        specs = parse_inputs(inputs)
        dyn = parse_dynamic(dynamic, specs, sequence_axis)
    record = common.base_record("tensorflow", tf.__version__, f"tf2onnx ({source})", tf2onnx.__version__, opset, specs, dyn)
    record["module"] = module_ref
    record["eval_enforced"] = True  # Keras layers run with training=False; a SavedModel signature is inference only
    record["training"] = False
    os.makedirs(out, exist_ok=True)
    try:
        arrays0 = data_sets[0] if data_sets else synthesize(specs, seed=seed)
        shapes0 = {s.name: list(a.shape) for s, a in zip(specs, arrays0)}
        shapes1 = second_shapes(specs, dyn)
        arrays1 = data_sets[1] if data_sets and len(data_sets) > 1 else synthesize(specs, shapes1, seed=seed + 1)
        shapes1 = {s.name: list(a.shape) for s, a in zip(specs, arrays1)}

        # A Keras model is called in a tf.function and converted from it, for Keras 3 and tf_keras alike:
        # tf2onnx's from_keras fails on Keras 3 Sequential models (KeyError: 'keras_tensor_N'). The outputs
        # come back as a dict named after their layers, which names the graph's outputs too.
        def keras_call(*args):
            result = model(list(args) if len(args) > 1 else args[0], training=False)
            if isinstance(result, dict):
                return result
            return dict(zip(_keras_output_names(model), result if isinstance(result, (list, tuple)) else [result]))

        def run(arrays):
            if source == "keras":
                result = keras_call(*[tf.constant(a) for a in arrays])
            else:
                result = model(**{s.name: tf.constant(a) for s, a in zip(specs, arrays)})
            return [(n, np.asarray(t)) for n, t in _flatten(tf, result)]

        try:
            outputs0, outputs1 = run(arrays0), run(arrays1)
        except Exception as e:
            raise ExportError("export.bad-inputs", f"the model does not run on the given inputs "
                              f"({', '.join(s.describe() for s in specs)}): {type(e).__name__}: {str(e).splitlines()[0]}",
                              "make --inputs match the model's inputs: names, element types and shapes") from e
        signature = []
        for s in specs:
            shape = [None if axis in dyn.get(s.name, {}) else d for axis, d in enumerate(s.shape)]
            signature.append(tf.TensorSpec(shape, tf.as_dtype(DTYPES[s.dtype]), name=s.name))
        model_path = os.path.join(out, "model.onnx")
        with common.recorded_warnings(loggers=("tf2onnx",)) as records:
            try:
                if source == "keras":
                    serving = tf.function(keras_call, input_signature=signature)
                    tf2onnx.convert.from_function(serving, input_signature=signature, opset=opset, output_path=model_path)
                else:
                    names = [s.name for s in specs]

                    @tf.function(input_signature=signature)
                    def serving(*args):
                        return model(**dict(zip(names, args)))

                    tf2onnx.convert.from_function(serving, input_signature=signature, opset=opset, output_path=model_path)
            except Exception as e:
                raise translate_tf_error(e, opset) from e
        graph_outputs = testdata.graph_io(model_path)[1]
        out_axes = common.output_axes([(g, a) for g, (_, a) in zip(graph_outputs, outputs0)],
                                      [(g, a) for g, (_, a) in zip(graph_outputs, outputs1)], dyn, shapes0, shapes1) if dyn else {}
        record["output_dynamic_axes"] = {k: {str(a): s for a, s in v.items()} for k, v in out_axes.items()}
        common.name_dynamic_dims(model_path, dyn, out_axes)
        record["warnings"] = [w for w in common.finish_warnings(records) if not w["category"].startswith("log:") or
                              "unsupported" in w["message"].lower()]
        record["data_sets"], record["inputs_dropped"], onnx_model, graph_outputs = common.write_data_sets(
            out, model_path, specs, [(arrays0, outputs0), (arrays1, outputs1)])
        record["onnx_checker"] = common.check_model(onnx_model)
        record["outputs"] = [{"name": g, **testdata.describe(a)} for g, (_, a) in zip(graph_outputs, outputs0)]
    except ExportError as error:
        common.write_error_record(out, record, error)
        raise
    testdata.write_export_json(out, record)
    return record
