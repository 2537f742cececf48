"""export.json: how a model was exported, written beside model.onnx and read by ortkit (doctor, convert, fix:
src/ortkit/model/export_record.h). docs/schema/export.schema.json describes the file; tests/python/test_export.py
holds what the companion writes to it, tests/unit/export_record_test.cpp what the C++ reader reads.

A field is either always written (null where the annotation allows None) or ABSENT until an export step sets
it: a failed export's record holds what was known when it failed, and the TensorFlow path never sets the
fields that are PyTorch's alone."""

import dataclasses
import json
import os
import platform
import sys

import onnx

from ._version import __version__

FORMAT_VERSION = 1


class Absent:
    """The value of a field not recorded: left out of export.json (None is written as null)."""

    def __repr__(self):
        return "ABSENT"

    def __reduce__(self):  # copies and pickles are ABSENT itself
        return "ABSENT"


ABSENT = Absent()

_record = dataclasses.dataclass(kw_only=True)


@_record
class TensorInfo:
    """An input as asked for (the example's shape) or an output the framework returned (data set 0's)."""

    name: str
    dtype: str  # numpy's name: float32, int64, bool, ...
    shape: list[int]


@_record
class ArrayInfo:
    """One array of a reference data set."""

    dtype: str
    shape: list[int]

    @classmethod
    def of(cls, array):
        return cls(dtype=str(array.dtype), shape=list(array.shape))


@_record
class DataSetInfo:
    """test_data_set_K: its inputs and the framework's outputs, by graph name."""

    folder: str
    inputs: dict[str, ArrayInfo]
    outputs: dict[str, ArrayInfo]


@_record
class ExportWarning:
    """A warning the exporter raised (category: its class, or log:LOGGER), or a finding of the companion's own
    about this export (category empty, with a fix)."""

    category: str
    message: str
    file: str
    line: int
    source: str  # the text of that line, when readable
    code: str | None  # export.*; null for warnings about the framework's internals
    fix: str | Absent = ABSENT
    input: str | Absent = ABSENT  # export.dim-specialized: the input, the axis and the size the graph fixed
    axis: int | Absent = ABSENT
    value: int | Absent = ABSENT


@_record
class ExportFailure:
    """Why the export failed (no model.onnx then): an ortkit diagnosis code, what failed, what to do, and the
    user's line it points at ({"file", "line", "source"}) when the framework's message or traceback shows one."""

    code: str
    message: str
    fix: str
    location: dict = ABSENT


@_record
class ExporterFallback:
    """export hf: the default exporter failed and another one wrote the file."""

    failed: str  # dynamo
    used: str  # torchscript
    step: str  # the step of the failed exporter that failed
    reason: str  # its error, translated
    dynamic_shapes: str  # what the fallback means for the dynamic axes


@_record
class HfSource:
    """What `ortkit export hf` exported: the checkpoint, the task, and how the model was wrapped."""

    checkpoint: str
    task: str
    part: str | None  # encoder, decoder, decoder-with-past; null for a task exported to one file
    model_type: str
    architecture: str
    transformers_version: str
    route: str
    # A decoder with its cache whose layers attend over a window: each layer's window (None: the whole past).
    # The cache keeps every position for every layer; the window is applied in the attention mask.
    attention_windows: list[int | None] | Absent = ABSENT
    references_past_window: bool | Absent = ABSENT  # test_data_set_1 holds more positions than the narrowest window
    # CTC speech recognition: the audio the model was trained on, and the fewest samples that give one frame.
    sampling_rate: int | Absent = ABSENT
    min_samples: int | Absent = ABSENT
    new_weights: list[str] | Absent = ABSENT  # --allow-new-weights: the weights Transformers initialised at random
    fallback: ExporterFallback | Absent = ABSENT


def axes_json(dynamic):
    """{name: {axis: symbol}} with the axes as strings, in order, as JSON keys must be."""
    return {name: {str(axis): symbol for axis, symbol in sorted(axes.items())} for name, axes in dynamic.items()}


@_record
class ExportRecord:
    """export.json, field by field (docs/schema/export.schema.json says what each holds)."""

    format_version: int = FORMAT_VERSION
    created_by: str = "ortkit_export " + __version__
    framework: str  # torch, tensorflow
    framework_version: str
    exporter: str  # "torch.onnx.export (torch.export)", "tf2onnx (keras)", ...
    exporter_version: str
    onnx_version: str = onnx.__version__
    python_version: str = dataclasses.field(default_factory=platform.python_version)
    opset: int | None  # the file's; until it is written, the one asked for (null: the exporter's default)
    inputs: list[TensorInfo]
    dynamic_axes: dict[str, dict[str, str]]
    command: list[str] | None = dataclasses.field(
        default_factory=lambda: sys.argv if sys.argv and sys.argv[0].endswith("__main__.py") else None)
    # PyTorch only:
    exporter_kind: str | Absent = ABSENT  # dynamo, torchscript
    opset_requested: int | None | Absent = ABSENT
    module: str | None = None  # FILE.py:FACTORY, the SavedModel or Keras file, the checkpoint
    module_was_training: bool | Absent = ABSENT  # PyTorch only
    training: bool
    eval_enforced: bool
    constant_folding: bool | Absent = ABSENT  # PyTorch only
    # export hf only:
    hf: HfSource | Absent = ABSENT
    dim_limits: dict[str, int] | Absent = ABSENT
    dim_sums: dict[str, list[str]] | Absent = ABSENT
    # Set as the export goes (a failed export's record stops where it failed):
    external_data: bool | Absent = ABSENT  # PyTorch only
    second_data_set_error: str | Absent = ABSENT
    output_dynamic_axes: dict[str, dict[str, str]] | Absent = ABSENT
    warnings: list[ExportWarning] | Absent = ABSENT
    data_sets: list[DataSetInfo] | Absent = ABSENT
    inputs_dropped: list[str] | Absent = ABSENT
    onnx_checker: str | Absent = ABSENT  # passed, or failed: and the checker's first line
    outputs: list[TensorInfo] | Absent = ABSENT
    error: ExportFailure | Absent = ABSENT

    @classmethod
    def start(cls, framework, framework_version, exporter, exporter_version, opset, specs, dynamic, **fields):
        """The record as an export begins: versions, the inputs asked for and their dynamic axes."""
        return cls(framework=framework, framework_version=framework_version, exporter=exporter,
                   exporter_version=exporter_version, opset=opset,
                   inputs=[TensorInfo(name=s.name, dtype=s.dtype, shape=list(s.shape)) for s in specs],
                   dynamic_axes=axes_json(dynamic), **fields)

    def update(self, fields):
        """Sets the fields named in `fields` (a dict); a name that is not a field is a TypeError."""
        names = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(fields) - names)
        if unknown:
            raise TypeError(f"export.json has no field {', '.join(unknown)}")
        for name, value in fields.items():
            setattr(self, name, value)

    def to_json(self):
        """The record as JSON values (dicts, lists, strings, numbers), ABSENT fields left out."""
        return _plain(self)

    def write(self, folder):
        """Writes folder/export.json (the folder is created) and returns its path."""
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "export.json")
        with open(path, "w") as f:
            json.dump(self.to_json(), f, indent=2, sort_keys=False)
            f.write("\n")
        return path

    def write_failure(self, folder, error):
        """Records `error` (an ExportError) and writes the record: doctor reads why there is no model."""
        self.error = ExportFailure(**error.to_json())
        return self.write(folder)


def _plain(value):
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)
                if getattr(value, f.name) is not ABSENT}
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value
