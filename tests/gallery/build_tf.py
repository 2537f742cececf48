"""Exports the TensorFlow cases of the gallery into OUT/<case>/ (one process: TensorFlow is imported once).

usage: build_tf.py OUT"""

import os
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import keras_models  # noqa: E402
from ortkit_export import ExportError, export_tf  # noqa: E402

HERE = os.path.abspath(os.path.join(os.path.dirname(__file__), "keras_models.py"))


def keras_classifier(out):
    # Through a saved .keras file, as a user would hand it over, with tf2onnx's explicit input signature.
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "classifier.keras")
        keras_models.classifier().save(path)
        return export_tf(path, "features:float32[4,16]", out, dynamic="auto", module_ref=f"{HERE}:classifier")


CASES = {"11-keras-classifier": keras_classifier}


def main():
    out = sys.argv[1]
    failed = 0
    for name, export in CASES.items():
        try:
            export(os.path.join(out, name))
            print(f"exported {name}")
        except ExportError as e:
            print(f"{name}: {e.render()}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
