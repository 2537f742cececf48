"""Unit tests of the export companion (python/ortkit_export): argument parsing, --dynamic auto, the folder an
export writes (model.onnx, the two data sets with the framework's outputs, export.json), and export.json against
its schema (docs/schema/export.schema.json; tests/unit/export_record_test.cpp holds the C++ reader to the same
schema). Run by CTest as python.export (label python); uses tiny real torch and Keras models and the real
exporters."""

import contextlib
import dataclasses
import io
import json
import os
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

from ortkit_export import ExportError, cli, parse_dynamic, parse_inputs  # noqa: E402
from ortkit_export import record as export_record  # noqa: E402
from ortkit_export.errors import (classify_warning, located, specialized_axes, translate_dynamo_error,  # noqa: E402
                                  translate_torch_error, user_frame)
from ortkit_export.spec import second_shapes, synthesize  # noqa: E402

SCHEMA_PATH = os.path.join(HERE, "..", "..", "docs", "schema", "export.schema.json")

# The JSON Schema keywords schema_errors() checks; the schema may use no others (annotations aside), so that
# nothing it says goes unchecked. jsonschema is not among the pinned packages.
CHECKED_KEYWORDS = {"type", "enum", "const", "minimum", "required", "properties", "additionalProperties", "items",
                    "$ref", "allOf", "if", "then", "else"}
ANNOTATIONS = {"$schema", "$id", "$defs", "title", "description"}


def _has_type(value, name):
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, {"string": str, "boolean": bool, "null": type(None), "array": list, "object": dict}[name])


def schema_errors(value, schema, root=None, where="$"):
    """What in `value` the schema refuses, one line each (empty: valid), for the keywords in CHECKED_KEYWORDS."""
    root = schema if root is None else root
    if isinstance(schema, bool):
        return [] if schema else [f"{where} is not allowed here"]
    errors = []
    if "$ref" in schema:
        errors += schema_errors(value, root["$defs"][schema["$ref"].removeprefix("#/$defs/")], root, where)
    for part in schema.get("allOf", []):
        errors += schema_errors(value, part, root, where)
    if "if" in schema:
        branch = schema.get("else" if schema_errors(value, schema["if"], root, where) else "then", True)
        errors += schema_errors(value, branch, root, where)
    types = schema.get("type", [])
    if types and not any(_has_type(value, t) for t in ([types] if isinstance(types, str) else types)):
        errors.append(f"{where} = {value!r} is not of type {types}")
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{where} = {value!r} is not one of {schema['enum']}")
    if "const" in schema and (value != schema["const"] or type(value) is not type(schema["const"])):
        errors.append(f"{where} = {value!r} is not {schema['const']!r}")
    if "minimum" in schema and _has_type(value, "number") and value < schema["minimum"]:
        errors.append(f"{where} = {value!r} is below {schema['minimum']}")
    if isinstance(value, dict):
        errors += [f"{where} lacks '{key}'" for key in schema.get("required", []) if key not in value]
        for key, item in value.items():
            if key in schema.get("properties", {}):
                errors += schema_errors(item, schema["properties"][key], root, f"{where}.{key}")
            elif "additionalProperties" in schema:
                errors += schema_errors(item, schema["additionalProperties"], root, f"{where}.{key}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            errors += schema_errors(item, schema["items"], root, f"{where}[{i}]")
    return errors


def load_schema():
    with open(SCHEMA_PATH) as f:
        return json.load(f)

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

    def test_failures_are_located_at_the_users_line(self):
        # The message's own frame (torch.export quotes the call that raised), its graph dump's annotations,
        # and, for a framework that shows neither, the innermost frame of user code in the traceback.
        quoted = RuntimeError('The following call raised this error:\n  File "/home/me/model.py", line 12, in forward\n'
                              '    if x.sum() > 0:\n')
        self.assertEqual(user_frame(quoted), {"file": "/home/me/model.py", "line": 12, "source": "if x.sum() > 0:"})
        annotated = RuntimeError("graph():\n    # File: /home/me/net.py:7 in forward, code: return x.view(2, -1)\n")
        self.assertEqual(user_frame(annotated)["line"], 7)
        library = RuntimeError('  File "/usr/lib/python3/site-packages/torch/x.py", line 3, in f\n    raise\n')
        self.assertIsNone(user_frame(library))

        def users_forward():
            raise ValueError("shapes do not match")  # the line a traceback shows

        try:
            users_forward()
        except ValueError as e:
            translated = located(translate_torch_error(e, 17), e)
        self.assertEqual(translated.location["file"], os.path.abspath(__file__))
        self.assertIn("raise ValueError", translated.location["source"])
        self.assertEqual(translated.to_json()["location"], translated.location)
        self.assertIn("at:", translated.render())

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


def schema_keywords(schema):
    """Every keyword `schema` uses, in its subschemas too (property names are not keywords)."""
    if not isinstance(schema, dict):
        return set()
    found = set(schema)
    for key in ("additionalProperties", "items", "if", "then", "else"):
        found |= schema_keywords(schema.get(key))
    for sub in list(schema.get("properties", {}).values()) + list(schema.get("$defs", {}).values()) + \
            schema.get("allOf", []):
        found |= schema_keywords(sub)
    return found


def finished_record():
    """A record of a finished `export hf` built in memory, every field set: what each dataclass writes."""
    from ortkit_export.record import (ArrayInfo, DataSetInfo, ExportRecord, ExportWarning, HfSource, TensorInfo)

    specs = parse_inputs(["input_ids:int64[2,16]=0..100", "attention_mask:int64[2,16]"])
    record = ExportRecord.start("torch", "2.15.0", "torch.onnx.export (torch.export)", "2.15.0", None, specs,
                                {"input_ids": {0: "batch", 1: "seq_len"}}, exporter_kind="dynamo",
                                opset_requested=None, module="/ckpt", module_was_training=False, training=False,
                                eval_enforced=True, constant_folding=True)
    record.update({"hf": HfSource(checkpoint="/ckpt", task="feature-extraction", part=None, model_type="bert",
                                  architecture="BertModel", transformers_version="5.24.0", route="ortkit wrapper"),
                   "dim_limits": {"seq_len": 64}, "dim_sums": {"total_len": ["past_len", "seq_len"]}})
    record.external_data = False
    record.second_data_set_error = "RuntimeError at {'x': [3, 24]}: shape mismatch"
    record.output_dynamic_axes = {"last_hidden_state": {"0": "batch"}}
    record.warnings = [
        ExportWarning(category="TracerWarning", message="Converting a tensor to a Python boolean", file="m.py", line=3,
                      source="if x:", code="export.traced-branch"),
        ExportWarning(category="", message="fixed", file="m.py", line=1, source="", code="export.dim-specialized",
                      fix="use -1", input="input_ids", axis=0, value=2)]
    array = ArrayInfo(dtype="int64", shape=[2, 16])
    record.data_sets = [DataSetInfo(folder="test_data_set_0", inputs={"input_ids": array}, outputs={"y": array})]
    record.inputs_dropped = ["attention_mask"]
    record.onnx_checker = "passed"
    record.opset = 20
    record.outputs = [TensorInfo(name="last_hidden_state", dtype="float32", shape=[2, 16, 8])]
    return record


class RecordSchema(unittest.TestCase):
    """export.json is what docs/schema/export.schema.json says, field for field with the dataclasses that write it."""

    def setUp(self):
        self.schema = load_schema()

    def test_the_schema_uses_only_keywords_the_check_checks(self):
        self.assertEqual(schema_keywords(self.schema) - CHECKED_KEYWORDS - ANNOTATIONS, set())

    def test_each_dataclass_writes_the_fields_its_schema_names(self):
        r = export_record
        defs = self.schema["$defs"]
        for cls, schema in [(r.ExportRecord, self.schema), (r.ExportWarning, defs["warning"]),
                            (r.ExportFailure, defs["error"]), (r.HfSource, defs["hf"]), (r.TensorInfo, defs["tensor"]),
                            (r.ArrayInfo, defs["array"]), (r.DataSetInfo, defs["data_set"])]:
            fields = dataclasses.fields(cls)
            self.assertEqual([f.name for f in fields], list(schema["properties"]), cls.__name__)
            # Always written: the fields that are never ABSENT; the schema requires exactly those.
            always = [f.name for f in fields if f.default is not r.ABSENT]
            self.assertEqual(sorted(always), sorted(schema["required"]), cls.__name__)
            self.assertIs(schema["additionalProperties"], False, cls.__name__)

    def test_a_record_with_every_field_set_is_valid(self):
        record = finished_record()
        self.assertEqual(schema_errors(record.to_json(), self.schema), [])
        self.assertEqual(set(record.to_json()), set(self.schema["properties"]) - {"error"})

    def test_absent_fields_are_left_out_and_none_is_null(self):
        from ortkit_export.record import ExportRecord

        record = ExportRecord.start("tensorflow", "2.21.0", "tf2onnx (keras)", "1.17.0", 17, parse_inputs("x:float32[2]"),
                                    {}, module=None, training=False, eval_enforced=True)
        written = record.to_json()
        self.assertIsNone(written["module"])
        self.assertNotIn("warnings", written)
        self.assertNotIn("opset_requested", written)
        # Unfinished and without an error it is not a record the companion writes; with the error it is.
        self.assertIn("$ lacks 'outputs'", schema_errors(written, self.schema))
        record.error = export_record.ExportFailure(code="export.bad-inputs", message="m", fix="f")
        self.assertEqual(schema_errors(record.to_json(), self.schema), [])
        with self.assertRaises(TypeError):
            record.update({"opset_wanted": 17})

    def test_the_check_refuses_what_the_schema_refuses(self):
        good = finished_record().to_json()
        breakages = {
            "an unknown field": lambda r: r.update(opset_wanted=17),
            "a required field missing": lambda r: r.pop("framework_version"),
            "a field of another type": lambda r: r.update(opset="17"),
            "an unknown framework": lambda r: r.update(framework="jax"),
            "a PyTorch field in a TensorFlow record": lambda r: r.update(framework="tensorflow"),
            "a PyTorch record without its exporter": lambda r: r.pop("exporter_kind"),
            "a warning with an unknown field": lambda r: r["warnings"][0].update(severity="warning"),
            "a warning without its code": lambda r: r["warnings"][1].pop("code"),
            "a data set's array without a shape": lambda r: r["data_sets"][0]["inputs"]["input_ids"].pop("shape"),
            "a negative dimension": lambda r: r["outputs"][0]["shape"].append(-1),
            "an error without its fix": lambda r: r.update(error={"code": "export.failed", "message": "m"}),
            "an hf record without its part": lambda r: r["hf"].pop("part"),
        }
        for name, breakage in breakages.items():
            broken = json.loads(json.dumps(good))
            breakage(broken)
            self.assertNotEqual(schema_errors(broken, self.schema), [], name)


class Command(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.module = os.path.join(self.tmp.name, "net.py")
        with open(self.module, "w") as f:
            f.write(MODULE)

    def tearDown(self):
        self.tmp.cleanup()

    def read_record(self, folder):
        """folder/export.json, checked against the schema."""
        with open(os.path.join(folder, "export.json")) as f:
            record = json.load(f)
        self.assertEqual(schema_errors(record, load_schema()), [], folder)
        return record

    def test_export_writes_model_references_and_record(self):
        out = os.path.join(self.tmp.name, "out")
        rc = cli.main(["torch", "--module", f"{self.module}:build", "--inputs", "x:float32[2,8]", "mask:float32[2]",
                       "--dynamic", "auto", "--outputs", "y", "--out", out])
        self.assertEqual(rc, 0)
        for path in ["model.onnx", "test_data_set_0/input_0.pb", "test_data_set_0/input_1.pb", "test_data_set_0/output_0.pb",
                     "test_data_set_1/output_0.pb", "export.json"]:
            self.assertTrue(os.path.isfile(os.path.join(out, path)), path)
        record = self.read_record(out)
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
        record = self.read_record(out)
        self.assertEqual((record["exporter_kind"], record["opset"], record["opset_requested"]), ("torchscript", 17, 17))
        self.assertEqual([w for w in record["warnings"] if w.get("code")], [])

    def test_an_axis_the_trace_fixed_is_reported_and_the_export_still_written(self):
        out = os.path.join(self.tmp.name, "fixed")
        rc = cli.main(["torch", "--module", f"{self.module}:fixed", "--inputs", "x:float32[2,8]", "mask:float32[2]",
                       "--dynamic", "auto", "--out", out])
        self.assertEqual(rc, 0)
        record = self.read_record(out)
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
            if code == "export.bad-inputs":  # failed once the record was begun: written with the error
                self.assertEqual(self.read_record(out)["error"]["code"], code)

    def test_keras_export_record(self):
        import keras

        from ortkit_export import export_tf

        features = keras.Input((8,), name="features")
        model = keras.Model(features, keras.layers.Dense(3, name="scores")(features))
        out = os.path.join(self.tmp.name, "keras")
        returned = export_tf(model, None, out, module_ref="inline")
        record = self.read_record(out)
        self.assertEqual(returned, record)
        self.assertEqual((record["framework"], record["exporter"], record["module"]), ("tensorflow", "tf2onnx (keras)", "inline"))
        self.assertEqual(record["dynamic_axes"], {"features": {"0": "batch"}})
        self.assertNotIn("exporter_kind", record)

    def test_hf_export_record(self):
        import transformers

        from ortkit_export.hf_export import export_hf

        checkpoint = os.path.join(self.tmp.name, "bert")
        config = transformers.BertConfig(vocab_size=100, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                         intermediate_size=16, max_position_embeddings=64)
        transformers.BertModel(config).save_pretrained(checkpoint)
        out = os.path.join(self.tmp.name, "hf")
        returned = export_hf(checkpoint, "feature-extraction", out)
        record = self.read_record(out)
        self.assertEqual(returned, record)
        self.assertEqual((record["hf"]["task"], record["hf"]["part"], record["dim_limits"]),
                         ("feature-extraction", None, {"seq_len": 64}))


class HfArchitectures(unittest.TestCase):
    """What `export hf` reads from a checkpoint before exporting, and what it refuses: tiny configurations and
    checkpoints written here (tests/e2e/export_hf_survey.sh exports the architectures end to end)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def save(self, name, model):
        folder = os.path.join(self.tmp.name, name)
        model.save_pretrained(folder)
        return folder

    def refusal(self, checkpoint, task, flags=()):
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout):
            rc = cli.main(["--format", "json", "hf", checkpoint, "--task", task, "--out",
                           os.path.join(self.tmp.name, "out")] + list(flags))
        return rc, json.loads(stdout.getvalue())["error"] if rc else None

    def test_positions_from_every_spelling(self):
        import transformers as t

        from ortkit_export.hf_export import _positions

        bart = t.BartConfig(max_position_embeddings=64)
        self.assertEqual((_positions(bart, None, "encoder"), _positions(bart, None, "decoder")), (64, 64))
        whisper = t.WhisperConfig(max_source_positions=32, max_target_positions=48)
        self.assertEqual((_positions(whisper, None, "encoder"), _positions(whisper, None, "decoder")), (32, 48))
        self.assertEqual(_positions(t.GPT2Config(n_positions=128), None), 128)
        clip = t.CLIPConfig(text_config={"max_position_embeddings": 16})
        self.assertEqual(_positions(clip, None), 16)  # the nested text configuration's
        self.assertIsNone(_positions(t.T5Config(), None))  # relative positions: no limit
        roberta = t.RobertaModel(t.RobertaConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1,
                                                 num_attention_heads=2, intermediate_size=16,
                                                 max_position_embeddings=130, pad_token_id=1))
        self.assertEqual(_positions(roberta.config, roberta), 128)  # positions start after padding_idx 1

    def test_attention_windows_and_references_past_them(self):
        import transformers as t

        from ortkit_export.hf_export import _attention_windows, _past_for_window

        common = dict(num_hidden_layers=2, sliding_window=8)
        self.assertEqual(_attention_windows(t.Gemma2Config(**common)), [8, None])
        self.assertEqual(_attention_windows(t.MistralConfig(**common)), [8, 8])
        self.assertEqual(_attention_windows(t.MistralConfig(num_hidden_layers=2, sliding_window=None)), [None, None])
        self.assertEqual(_attention_windows(t.Qwen2Config(num_hidden_layers=3, use_sliding_window=True,
                                                          sliding_window=8, max_window_layers=1)), [None, 8, 8])
        # test_data_set_1's past reaches the narrowest window, unless that cache is too large or too long
        self.assertEqual(_past_for_window([8, None], 2, 2, 16, 2, 7, 6, 256), 8)
        self.assertEqual(_past_for_window([None, None], 2, 2, 16, 2, 7, 6, 256), 7)
        self.assertEqual(_past_for_window([4096] * 32, 32, 8, 128, 2, 7, 6, 32768), 7)
        self.assertEqual(_past_for_window([8], 2, 2, 16, 2, 7, 6, 10), 7)

    def test_chunked_attention_is_refused_naming_the_layer_and_window(self):
        import transformers as t

        from ortkit_export.hf_export import _attention_windows

        config = t.Llama4TextConfig(num_hidden_layers=2, attention_chunk_size=8)
        with self.assertRaises(ExportError) as caught:
            _attention_windows(config)
        self.assertEqual(caught.exception.code, "export.unsupported-architecture")
        self.assertIn("decoder layer 0 is a 'chunked_attention' layer (window 8)", caught.exception.message)
        self.assertIn("--task text-generation", caught.exception.fix)

    def test_unsupported_class_names_the_tasks_it_has_and_export_torch(self):
        import transformers as t

        bert = self.save("bert", t.BertModel(t.BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1,
                                                          num_attention_heads=2, intermediate_size=16)))
        rc, error = self.refusal(bert, "automatic-speech-recognition")
        self.assertEqual((rc, error["code"]), (2, "export.unsupported-architecture"))
        self.assertIn("--task feature-extraction", error["fix"])
        self.assertIn("ortkit export torch --module", error["fix"])
        self.assertNotIn("--inputs match", error["fix"])

    def test_a_head_not_in_the_checkpoint_is_refused_unless_asked_for(self):
        import transformers as t

        config = t.CLIPConfig(text_config=dict(vocab_size=50, hidden_size=16, intermediate_size=16,
                                               num_hidden_layers=1, num_attention_heads=2,
                                               max_position_embeddings=16),
                              vision_config=dict(image_size=16, patch_size=8, hidden_size=16, intermediate_size=16,
                                                 num_hidden_layers=1, num_attention_heads=2), projection_dim=8)
        clip = self.save("clip", t.CLIPModel(config))
        rc, error = self.refusal(clip, "image-classification")
        self.assertEqual((rc, error["code"]), (2, "export.new-weights"))
        self.assertIn("CLIPForImageClassification", error["message"])
        self.assertIn("classifier.weight", error["message"])
        self.assertIn("--allow-new-weights", error["fix"])
        self.assertIn("--task zero-shot-image-classification", error["fix"])
        out = os.path.join(self.tmp.name, "head")
        from ortkit_export.hf_export import export_hf

        record = export_hf(clip, "image-classification", out, allow_new_weights=True)
        self.assertEqual(record["hf"]["new_weights"], ["classifier.bias", "classifier.weight"])
        with open(os.path.join(out, "export.json")) as f:
            self.assertEqual(schema_errors(json.load(f), load_schema()), [])

    def test_ctc_facts(self):
        import transformers as t

        from ortkit_export.hf_export import _min_samples

        self.assertEqual(_min_samples(t.Wav2Vec2Config()), 400)  # 25 ms at 16 kHz
        self.assertEqual(_min_samples(t.HubertConfig(conv_dim=(8, 8), conv_kernel=(4, 2), conv_stride=(2, 2))), 6)
        self.assertIsNone(_min_samples(t.WhisperConfig()))

    def test_fallback_is_recorded_with_the_step_and_what_it_means(self):
        from ortkit_export.hf_export import _export_choosing_exporter
        from ortkit_export.record import HfSource

        tried = []

        def export(exporter):
            tried.append(exporter)
            if exporter is None:
                raise ExportError("export.decomposition-failed", "failed to decompose (step 2/3): view", "fix")
            return {"exporter": exporter}

        source = HfSource(checkpoint="c", task="image-classification", part=None, model_type="swin",
                          architecture="SwinForImageClassification", transformers_version="5", route="r")
        self.assertEqual(_export_choosing_exporter(export, source, "swin", None), {"exporter": "torchscript"})
        self.assertEqual(tried, [None, "torchscript"])
        self.assertEqual((source.fallback.failed, source.fallback.used), ("dynamo", "torchscript"))
        self.assertIn("step 2/3", source.fallback.step)
        self.assertIn("dynamic", source.fallback.dynamic_shapes)
        lines = cli.summary({"framework": "torch", "framework_version": "2", "exporter": "e", "opset": 18, "inputs": [],
                             "dynamic_axes": {}, "hf": export_record._plain(source)}, "out")
        self.assertIn("the dynamo exporter failed while decomposing the captured graph (step 2/3)", lines)


if __name__ == "__main__":
    unittest.main()
