"""Input specifications ("x:float32[2,3,224,224]"), dynamic axes ("x:0=batch", "auto") and the
inputs synthesised from them."""

import dataclasses
import re

import numpy as np

from .errors import ExportError

DTYPES = {
    "float32": np.float32, "float": np.float32, "float16": np.float16, "float64": np.float64, "double": np.float64,
    "int64": np.int64, "int32": np.int32, "int8": np.int8, "uint8": np.uint8, "bool": np.bool_,
}

_SPEC = re.compile(r"^\s*([^:\s]+)\s*:\s*(\w+)\s*\[\s*([0-9,\s]*)\]\s*(?:=\s*(-?\d+)\s*\.\.\s*(-?\d+))?\s*$")


@dataclasses.dataclass
class InputSpec:
    """One model input: its name, element type, the shape of data set 0, and for integer inputs the
    range [low, high) values are drawn from (masks default to ones, other integers to [0, 10))."""

    name: str
    dtype: str
    shape: list
    low: int = None
    high: int = None

    def describe(self):
        text = f"{self.name}:{self.dtype}[{','.join(str(d) for d in self.shape)}]"
        if self.low is not None:
            text += f"={self.low}..{self.high}"
        return text


def parse_input(text):
    match = _SPEC.match(text)
    if not match:
        raise ExportError("export.bad-arguments", f"--inputs '{text}': expected NAME:TYPE[D0,D1,...] "
                          "(e.g. x:float32[2,3,224,224], or input_ids:int64[2,16]=0..1000 for a value range)",
                          "write each input as NAME:TYPE[D0,D1,...]; several inputs are separated by spaces or ';'")
    name, dtype, dims, low, high = match.groups()
    if dtype not in DTYPES:
        raise ExportError("export.bad-arguments", f"--inputs '{text}': unknown element type '{dtype}'",
                          "use one of " + ", ".join(sorted(DTYPES)))
    shape = [int(d) for d in dims.replace(" ", "").split(",") if d]
    if any(d <= 0 for d in shape):
        raise ExportError("export.bad-arguments", f"--inputs '{text}': dimensions must be positive",
                          "give the concrete sizes of the example input; mark dynamic ones with --dynamic")
    spec = InputSpec(name, "float32" if dtype == "float" else "float64" if dtype == "double" else dtype, shape)
    if low is not None:
        spec.low, spec.high = int(low), int(high)
        if spec.high <= spec.low:
            raise ExportError("export.bad-arguments", f"--inputs '{text}': empty value range {low}..{high}",
                              "the range is LOW..HIGH with HIGH > LOW (HIGH excluded)")
    return spec


def parse_inputs(items):
    """InputSpecs from strings (each may hold several specs separated by ';' or whitespace), or
    InputSpec objects, or a dict name -> shape (float32)."""
    if isinstance(items, dict):
        return [InputSpec(name, "float32", list(shape)) for name, shape in items.items()]
    if isinstance(items, (str, InputSpec)):
        items = [items]
    specs = []
    for item in items:
        if isinstance(item, InputSpec):
            specs.append(item)
            continue
        for part in re.split(r"[;\s]+(?![^\[]*\])", item.strip()):
            if part:
                specs.append(parse_input(part))
    names = [s.name for s in specs]
    if not specs:
        raise ExportError("export.bad-arguments", "no inputs given", "pass --inputs NAME:TYPE[D0,D1,...] per input")
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise ExportError("export.bad-arguments", f"--inputs names {sorted(duplicates)} more than once",
                          "give each input once")
    return specs


def parse_dynamic(items, specs, sequence_axis=None):
    """Dynamic axes as {input name: {axis: symbol}} from "x:0=batch,1=seq_len" strings or "auto".

    "auto" names axis 0 of every input "batch" and, when `sequence_axis` is given, that axis of every
    input of higher rank "seq_len". An explicit entry overrides auto for its input.
    """
    if isinstance(items, dict):
        return {name: {int(axis): str(sym) for axis, sym in axes.items()} for name, axes in items.items()}
    if isinstance(items, str):
        items = [items]
    by_name = {s.name: s for s in specs}
    dynamic = {}
    for item in items or []:
        if item.strip() == "auto":
            for spec in specs:
                axes = dynamic.setdefault(spec.name, {})
                if spec.shape:
                    axes.setdefault(0, "batch")
                if sequence_axis is not None and len(spec.shape) > sequence_axis:
                    axes.setdefault(sequence_axis, "seq_len")
            continue
        name, sep, rest = item.partition(":")
        if not sep or not rest:
            raise ExportError("export.bad-arguments", f"--dynamic '{item}': expected NAME:AXIS=SYMBOL[,AXIS=SYMBOL] or auto",
                              "e.g. --dynamic x:0=batch,1=seq_len")
        if name not in by_name:
            raise ExportError("export.bad-arguments", f"--dynamic '{item}': no input named '{name}'",
                              "inputs are: " + ", ".join(by_name))
        for entry in rest.split(","):
            axis, eq, symbol = entry.partition("=")
            try:
                axis = int(axis)
            except ValueError:
                axis = -1
            if not eq or not symbol or not 0 <= axis < len(by_name[name].shape):
                raise ExportError("export.bad-arguments",
                                  f"--dynamic '{item}': '{entry}' is not AXIS=SYMBOL with AXIS in 0..{len(by_name[name].shape) - 1}",
                                  "e.g. --dynamic x:0=batch")
            dynamic.setdefault(name, {})[axis] = symbol
    return {name: axes for name, axes in dynamic.items() if axes}


def _is_batch(symbol):
    return symbol.lower() in ("batch", "batch_size", "n", "b", "bs")


def second_shapes(specs, dynamic):
    """Shapes of data set 1: every dynamic axis at another size (batch + 1; others half again as large)."""
    shapes = {}
    for spec in specs:
        shape = list(spec.shape)
        for axis, symbol in dynamic.get(spec.name, {}).items():
            shape[axis] = shape[axis] + 1 if _is_batch(symbol) else shape[axis] + max(1, shape[axis] // 2)
        shapes[spec.name] = shape
    # One symbol has one size across inputs: take the first input's choice.
    sizes = {}
    for spec in specs:
        for axis, symbol in dynamic.get(spec.name, {}).items():
            sizes.setdefault(symbol, shapes[spec.name][axis])
            shapes[spec.name][axis] = sizes[symbol]
    return shapes


def synthesize(specs, shapes=None, seed=0):
    """Inputs as numpy arrays, in spec order: floats from a seeded normal, masks of ones, other
    integers uniform in [low, high) (default [0, 10)), bools at random."""
    rng = np.random.default_rng(seed)
    arrays = []
    for spec in specs:
        shape = (shapes or {}).get(spec.name, spec.shape)
        dtype = DTYPES[spec.dtype]
        if np.issubdtype(dtype, np.floating):
            arrays.append(rng.standard_normal(shape).astype(dtype))
        elif dtype == np.bool_:
            arrays.append(rng.integers(0, 2, shape).astype(np.bool_))
        elif spec.low is None and "mask" in spec.name.lower():
            arrays.append(np.ones(shape, dtype=dtype))
        else:
            low, high = (spec.low, spec.high) if spec.low is not None else (0, 10)
            arrays.append(rng.integers(low, high, shape).astype(dtype))
    return arrays
