"""Unit tests of the export companion (python/ortkit_export): argument parsing, --dynamic auto, and the
folder an export writes (model.onnx, the two data sets with the framework's outputs, export.json).
Run by CTest as python.export (label python); uses a tiny real torch model and the real exporter."""

import json
import os
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from ortkit_export import ExportError, cli, parse_dynamic, parse_inputs  # noqa: E402
from ortkit_export.errors import classify_warning, specialized_axes, translate_dynamo_error, translate_torch_error  # noqa: E402
from ortkit_export.spec import second_shapes, synthesize  # noqa: E402

MODULE = """
import torch
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 3)
    def forward(self, x, mask):
        return self.linear(x) * mask[..., None]
def build():
    return Net()
def broken():
    raise RuntimeError("no weights")
class Fixed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("offset", torch.zeros(2, 8))
    def forward(self, x, mask):
        return (x + self.offset) * mask[..., None]
def fixed():
    return Fixed()
"""


class ParseInputs(unittest.TestCase):
    def test_specs_with_types_shapes_and_ranges(self):
        specs = parse_inputs(["x:float32[2,3,224,224]", "ids:int64[2,16]=0..1000 mask:int64[2,16]"])
        self.assertEqual([s.name for s in specs], ["x", "ids", "mask"])
        self.assertEqual(specs[0].shape, [2, 3, 224, 224])
        self.assertEqual((specs[1].low, specs[1].high), (0, 1000))
        self.assertEqual(specs[2].dtype, "int64")

    def test_bad_specs_name_the_text(self):
        for text, needle in [("x:float32", "NAME:TYPE"), ("x:complex[2]", "unknown element type"),
                             ("x:float32[2,0]", "positive"), ("i:int64[2]=5..5", "empty value range")]:
            with self.assertRaises(ExportError) as caught:
                parse_inputs(text)
            self.assertEqual(caught.exception.code, "export.bad-arguments")
            self.assertIn(needle, caught.exception.message)
            self.assertIn(text, caught.exception.message)

    def test_duplicate_names(self):
        with self.assertRaises(ExportError):
            parse_inputs(["x:float32[1]", "x:float32[2]"])


class Dynamic(unittest.TestCase):
    def setUp(self):
        self.specs = parse_inputs(["input_ids:int64[2,16]", "pixel:float32[2,3]", "scalar:float32[]"])

    def test_auto_marks_the_first_axis_batch(self):
        self.assertEqual(parse_dynamic("auto", self.specs),
                         {"input_ids": {0: "batch"}, "pixel": {0: "batch"}})

    def test_auto_with_a_sequence_axis(self):
        dyn = parse_dynamic(["auto"], self.specs, sequence_axis=1)
        self.assertEqual(dyn["input_ids"], {0: "batch", 1: "seq_len"})
        self.assertEqual(dyn["pixel"], {0: "batch", 1: "seq_len"})

    def test_explicit_axes_and_errors(self):
        self.assertEqual(parse_dynamic(["input_ids:0=b,1=s"], self.specs), {"input_ids": {0: "b", 1: "s"}})
        for bad in ["nope:0=batch", "input_ids:5=batch", "input_ids", "input_ids:0"]:
            with self.assertRaises(ExportError, msg=bad):
                parse_dynamic([bad], self.specs)

    def test_second_data_set_grows_every_dynamic_axis_consistently(self):
        dyn = parse_dynamic(["auto"], self.specs, sequence_axis=1)
        shapes = second_shapes(self.specs, dyn)
        self.assertEqual(shapes["input_ids"], [3, 24])
        self.assertEqual(shapes["pixel"], [3, 24])  # one symbol, one size
        self.assertEqual(shapes["scalar"], [])

    def test_synthesis_fits_each_input(self):
        specs = parse_inputs(["x:float32[2,4]", "attention_mask:int64[2,4]", "ids:int64[2,4]=5..9"])
        x, mask, ids = synthesize(specs, seed=3)
        self.assertEqual(x.dtype, np.float32)
        self.assertTrue((mask == 1).all())
        self.assertTrue(((ids >= 5) & (ids < 9)).all())
        np.testing.assert_array_equal(synthesize(specs, seed=3)[0], x)


class Errors(unittest.TestCase):
    def test_unsupported_operator_names_the_opset_that_works(self):
        error = RuntimeError("Exporting the operator 'aten::triu' to ONNX opset version 13 is not supported. "
                             "Support for this operator was added in version 14, try exporting with this version.")
        translated = translate_torch_error(error, 13)
        self.assertEqual(translated.code, "export.unsupported-operator")
        self.assertIn("aten::triu", translated.message)
        self.assertIn("--opset 14", translated.fix)

    def test_unsupported_operator_probes_newer_opsets(self):
        error = RuntimeError("Exporting the operator foo to ONNX opset version 11 is not supported.")
        translated = translate_torch_error(error, 11, probe=lambda opset: opset >= 16)
        self.assertIn("opset 16 supports it", translated.message)
        nothing = translate_torch_error(error, 11, probe=lambda opset: False)
        self.assertIn("no opset", nothing.fix)

    def test_dynamo_failures_are_translated_by_step(self):
        # The texts below are the shape of what torch.onnx.export(..., dynamo=True) raises in PyTorch 2.15.
        guard = RuntimeError(
            "Failed to export the model with torch.export. \x1b[96mThis is step 1/3\x1b[0m of exporting\n\n## Exception summary\n\n"
            "<class 'torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode'>: Could not guard on "
            "data-dependent expression Eq(u0, 1) (unhinted: Eq(u0, 1)).\n\nThe following call raised this error:\n"
            '  File "/home/me/model.py", line 12, in forward\n    if x.sum() > 0:\n')
        translated = translate_dynamo_error(guard, None)
        self.assertEqual(translated.code, "export.data-dependent-guard")
        self.assertIn("/home/me/model.py:12: `if x.sum() > 0:`", translated.message)
        self.assertIn("torch.cond", translated.fix)
        missing = RuntimeError("This is step 3/3\n## Exception summary\n\n<class 'torch.onnx._internal.exporter._errors."
                               "DispatchError'>: No ONNX function found for <OpOverload(op='aten._linalg_svd', "
                               "overload='default')>. Failure message: No decompositions registered")
        translated = translate_dynamo_error(missing, None)
        self.assertEqual(translated.code, "export.unsupported-operator")
        self.assertIn("custom_translation_table={torch.ops.aten._linalg_svd.default", translated.fix)
        decomposition = RuntimeError("Failed to decompose the FX graph for ONNX compatibility. This is step 2/3\n"
                                     "## Exception summary\n\n<class 'RuntimeError'>: Cannot view a tensor with shape")
        self.assertEqual(translate_dynamo_error(decomposition, None).code, "export.decomposition-failed")
        structure = RuntimeError("## Exception summary\n\n<class 'torch._dynamo.exc.UserError'>: Detected mismatch "
                                 "between the structure of `inputs` and `dynamic_shapes`: `inputs` has 1 elements, but "
                                 "`dynamic_shapes` has 2 elements")
        translated = translate_dynamo_error(structure, None)
        self.assertEqual(translated.code, "export.dynamic-shapes-mismatch")
        self.assertIn("one named parameter per input", translated.fix)
        cache = RuntimeError("## Exception summary\n\n<class 'RuntimeError'>: Found <class 'transformers.cache_utils."
                             "DynamicCache'> in output, which is not a known type. If this type holds tensors")
        translated = translate_dynamo_error(cache, None)
        self.assertEqual(translated.code, "export.unsupported-output-type")
        self.assertIn("ortkit export hf", translated.fix)
        conflict = ValueError("- Received user-specified dim hint Dim.DYNAMIC(min=None, max=None), but tracing inferred "
                              "a static shape of 2 for dimension inputs[1].shape[0].")
        self.assertEqual(specialized_axes(conflict), [(1, 0, 2)])

    def test_warning_classes(self):
        self.assertEqual(classify_warning("TracerWarning", "Converting a tensor to a Python boolean might"),
                         "export.traced-branch")
        self.assertEqual(classify_warning("TracerWarning", "Converting a tensor to a Python float might"),
                         "export.traced-constant")
        self.assertEqual(classify_warning("TracerWarning", "Using len to get tensor shape might"), "export.traced-constant")
        self.assertIsNone(classify_warning("DeprecationWarning", "whatever"))


class PackageLayers(unittest.TestCase):
    def test_no_module_imports_one_that_imports_it_back(self):
        # Every import between the package's modules, deferred ones inside functions included, goes one way.
        import ast
        import ortkit_export

        folder = os.path.dirname(ortkit_export.__file__)
        edges = {}
        for name in os.listdir(folder):
            if not name.endswith(".py") or name == "__init__.py":
                continue
            module = name[:-3]
            tree = ast.parse(open(os.path.join(folder, name)).read())
            targets = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.level == 1:
                    targets.update([node.module] if node.module else [a.name for a in node.names])
                if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "__import__":
                    targets.add("__init__")
            edges[module] = targets - {module}

        def reaches(start, goal, seen=()):
            return any(t == goal or (t not in seen and reaches(t, goal, seen + (t,))) for t in edges.get(start, ()))

        cycles = [m for m in edges if reaches(m, m)]
        self.assertEqual(cycles, [], f"imports in a circle: {edges}")
        self.assertNotIn("__init__", set().union(*edges.values()), "a module reads the package's __init__")


class Command(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.module = os.path.join(self.tmp.name, "net.py")
        with open(self.module, "w") as f:
            f.write(MODULE)

    def tearDown(self):
        self.tmp.cleanup()

    def test_export_writes_model_references_and_record(self):
        out = os.path.join(self.tmp.name, "out")
        rc = cli.main(["torch", "--module", f"{self.module}:build", "--inputs", "x:float32[2,8]", "mask:float32[2]",
                       "--dynamic", "auto", "--outputs", "y", "--out", out])
        self.assertEqual(rc, 0)
        for path in ["model.onnx", "test_data_set_0/input_0.pb", "test_data_set_0/input_1.pb", "test_data_set_0/output_0.pb",
                     "test_data_set_1/output_0.pb", "export.json"]:
            self.assertTrue(os.path.isfile(os.path.join(out, path)), path)
        with open(os.path.join(out, "export.json")) as f:
            record = json.load(f)
        self.assertEqual(record["framework"], "torch")
        # The installed PyTorch's default exporter (torch.export-based from 2.9) at its own opset, weights inline.
        self.assertEqual(record["exporter_kind"], "dynamo")
        self.assertGreaterEqual(record["opset"], 18)
        self.assertFalse(os.path.exists(os.path.join(out, "model.onnx.data")))
        self.assertTrue(record["eval_enforced"])
        self.assertTrue(record["module_was_training"])
        self.assertEqual(record["dynamic_axes"], {"x": {"0": "batch"}, "mask": {"0": "batch"}})
        self.assertEqual(record["output_dynamic_axes"], {"y": {"0": "batch"}})
        self.assertEqual([d["inputs"]["x"]["shape"] for d in record["data_sets"]], [[2, 8], [3, 8]])
        self.assertEqual(record["warnings"], [])

        import onnx
        import onnxruntime
        from onnx import numpy_helper

        # The references are the framework's outputs: ONNX Runtime reproduces them on both data sets.
        session = onnxruntime.InferenceSession(os.path.join(out, "model.onnx"), providers=["CPUExecutionProvider"])
        for k in range(2):
            def load(name):
                t = onnx.TensorProto()
                t.ParseFromString(open(os.path.join(out, f"test_data_set_{k}", name), "rb").read())
                return t.name, numpy_helper.to_array(t)
            feeds = dict([load("input_0.pb"), load("input_1.pb")])
            name, expected = load("output_0.pb")
            self.assertEqual(name, "y")
            np.testing.assert_allclose(session.run(None, feeds)[0], expected, rtol=1e-5, atol=1e-6)

    def test_torchscript_keeps_the_opset_asked_for(self):
        out = os.path.join(self.tmp.name, "ts")
        rc = cli.main(["torch", "--module", f"{self.module}:build", "--inputs", "x:float32[2,8]", "mask:float32[2]",
                       "--dynamic", "auto", "--exporter", "torchscript", "--opset", "17", "--out", out])
        self.assertEqual(rc, 0)
        with open(os.path.join(out, "export.json")) as f:
            record = json.load(f)
        self.assertEqual((record["exporter_kind"], record["opset"], record["opset_requested"]), ("torchscript", 17, 17))
        self.assertEqual([w for w in record["warnings"] if w.get("code")], [])

    def test_an_axis_the_trace_fixed_is_reported_and_the_export_still_written(self):
        out = os.path.join(self.tmp.name, "fixed")
        rc = cli.main(["torch", "--module", f"{self.module}:fixed", "--inputs", "x:float32[2,8]", "mask:float32[2]",
                       "--dynamic", "auto", "--out", out])
        self.assertEqual(rc, 0)
        with open(os.path.join(out, "export.json")) as f:
            record = json.load(f)
        found = [w for w in record["warnings"] if w.get("code") == "export.dim-specialized"]
        self.assertEqual(sorted((w["input"], w["axis"], w["value"]) for w in found), [("mask", 0, 2), ("x", 0, 2)])
        self.assertTrue(all(w["fix"] and "fixes it to 2" in w["message"] for w in found), found)
        self.assertEqual(record["dynamic_axes"], {})

    def test_failures_exit_with_a_code(self):
        out = os.path.join(self.tmp.name, "bad")
        cases = [
            (["torch", "--module", f"{self.module}:missing", "--inputs", "x:float32[2,8]", "--out", out], 2, "export.bad-module"),
            (["torch", "--module", f"{self.module}:broken", "--inputs", "x:float32[2,8]", "--out", out], 2, "export.bad-module"),
            (["torch", "--module", f"{self.module}:build", "--inputs", "x:float32[2,5]", "mask:float32[2]", "--out", out],
             1, "export.bad-inputs"),
            (["torch", "--module", f"{self.module}:build", "--inputs", "x:float32[2,8]", "--opset", "99", "--out", out],
             2, "export.bad-arguments"),
            (["torch", "--inputs", "x:float32[2,8]", "--out", out], 2, "export.bad-arguments"),
        ]
        for argv, want_rc, code in cases:
            import contextlib
            import io

            stdout = io.StringIO()
            with contextlib.redirect_stdout(stdout):
                rc = cli.main(["--format", "json"] + argv)
            self.assertEqual(rc, want_rc, argv)
            self.assertEqual(json.loads(stdout.getvalue())["error"]["code"], code, argv)


if __name__ == "__main__":
    unittest.main()
