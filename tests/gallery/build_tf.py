"""Exports the TensorFlow cases of the gallery into OUT/<case>/ (one process: TensorFlow is imported once).

usage: build_tf.py OUT"""

import os
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import keras_models  # noqa: E402
from gallery_common import export_cases  # noqa: E402
from ortkit_export import export_tf  # noqa: E402

HERE = os.path.abspath(os.path.join(os.path.dirname(__file__), "keras_models.py"))


def keras_classifier(out):
    # Through a saved .keras file, as a user would hand it over, with tf2onnx's explicit input signature.
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "classifier.keras")
        keras_models.classifier().save(path)
        return export_tf(path, "features:float32[4,16]", out, dynamic="auto", module_ref=f"{HERE}:classifier")


def captured_constant(out):
    """tf2onnx.convert.from_function on a function that closes over a tf.constant, as a user writes it: the
    constant becomes a graph input named MatMul/b:0."""
    import numpy as np
    import tensorflow as tf
    import tf2onnx

    weights = tf.constant(np.random.default_rng(27).standard_normal((8, 4)).astype(np.float32))
    signature = [tf.TensorSpec([None, 8], tf.float32, name="x")]

    @tf.function(input_signature=signature)
    def project(x):
        return tf.matmul(x, weights)

    os.makedirs(out, exist_ok=True)
    tf2onnx.convert.from_function(project, input_signature=signature, output_path=os.path.join(out, "model.onnx"))


CASES = {
    "11-keras-classifier": keras_classifier,
    "26-keras3-sequential": lambda out: export_tf(keras_models.sequential(), None, out, module_ref=f"{HERE}:sequential"),
    "27-tf-captured-constant": captured_constant,
    "29-tf-keras2-sequential": lambda out: export_tf(keras_models.legacy_sequential(), None, out,
                                                     module_ref=f"{HERE}:legacy_sequential"),
}


def main():
    return export_cases(CASES, sys.argv[1])


if __name__ == "__main__":
    sys.exit(main())
