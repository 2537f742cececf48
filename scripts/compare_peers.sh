#!/usr/bin/env bash
# A manual measurement, not part of the test suite: `ortkit fix` and `ortkit reduce` side by side with
# the peer tools that do parts of their work, on the same defective models, with wall times. It
# downloads packages from PyPI (polygraphy, onnx-graphsurgeon, colored, onnxsim, onnx, numpy,
# sympy) into a virtual environment of its own, so it is never run by scripts/test.sh or ctest. The
# results are written up in docs/peers.md.
#
# usage: scripts/compare_peers.sh [WORK_DIR]        (default /tmp/peers)
#
# WORK_DIR gets: ortkit (a copy of build/bin/ortkit, unless one is there already: it finds its
# libraries through an absolute rpath, so a rebuild of build/ does not disturb the run), venv/ (the
# peers: onnxruntime from .deps/wheels, the rest from PyPI; the project's own venv is not touched),
# models/ (the gallery's real PyTorch exports, a TorchScript export with its weights listed as inputs,
# a real third-party model with a fixed batch), api/ (the short ONNX-API scripts a user writes for each
# defect), fix/CASE/TOOL.onnx (every tool's result, its log, exit status and wall time), reduce/ (the
# 1,000-node failing models of tests/e2e/reduce.sh and each reducer's result), results-*.json, and
# the tables on stdout. Every result is judged the same way by scripts/compare_peers.py: `ortkit check`
# on it, onnxruntime in Python at the original's shape and at batch 5, and the same outputs twice.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
W="$(mkdir -p "${1:-/tmp/peers}" && cd "${1:-/tmp/peers}" && pwd)"
project_python="$root/.deps/python/bin/python"
begin=$SECONDS
export TF_CPP_MIN_LOG_LEVEL=2 PYTHONWARNINGS=ignore

# ---------------------------------------------------------------------------------------------------
# Set-up: the binary, the peers' virtual environment, the models.
[ -x "$W/ortkit" ] || cp "$root/build/bin/ortkit" "$W/ortkit" || { echo "no ortkit binary in $root/build/bin" >&2; exit 2; }
ortkit="$W/ortkit"
if [ ! -x "$W/venv/bin/polygraphy" ] || [ ! -x "$W/venv/bin/onnxsim" ]; then
  "$project_python" -m venv "$W/venv" || exit 2
  # pip is called as a module: the venv's pip launcher may carry a broken shebang.
  "$W/venv/bin/python" -m pip install -q "$root"/.deps/wheels/onnxruntime-1.29.0-*.whl \
    onnx numpy polygraphy onnx_graphsurgeon colored onnxsim sympy || exit 2
fi
py="$W/venv/bin/python"
poly="$W/venv/bin/polygraphy"
onnxsim="$W/venv/bin/onnxsim"
"$py" -m pip list --format=freeze 2>/dev/null | grep -iE '^(onnx|onnxruntime|onnxsim|onnx.graphsurgeon|polygraphy|numpy|protobuf|sympy)==' \
  > "$W/versions.txt"
{ echo "ortkit==$("$ortkit" --version | awk '{print $2}')"; echo "python==$("$py" -c 'import platform; print(platform.python_version())')";
  echo "cpus==$(nproc)"; echo "date==$(date -u +%Y-%m-%d)"; } >> "$W/versions.txt"

M="$W/models"
mkdir -p "$M"
if [ ! -f "$M/07-float64-leak/model.onnx" ]; then
  PYTHONPATH="$root/python" "$project_python" "$root/tests/gallery/build_torch.py" "$M" \
    04-static-batch 05-training-mode 06-baked-batch 07-float64-leak > "$M/torch.log" 2>&1 \
    || { cat "$M/torch.log" >&2; exit 2; }
fi
if [ ! -f "$M/weights-as-inputs/model.onnx" ]; then
  # As tests/e2e/fix.sh builds it: TorchScript with keep_initializers_as_inputs=True.
  "$project_python" "$root/tests/python/weights_as_inputs.py" "$M/weights-as-inputs" > "$M/weights.log" 2>&1 \
    || { cat "$M/weights.log" >&2; exit 2; }
fi
mkdir -p "$M/oww-alexa"
cp "$root/.deps/realmodels/oww-alexa.onnx" "$M/oww-alexa/model.onnx"
"$py" "$root/tests/python/failing_models.py" "$W/reduce"
echo "set-up done in $((SECONDS - begin)) s ($W)"

# ---------------------------------------------------------------------------------------------------
# The ONNX-API scripts a user writes, one per defect (the onnx package's own helper where it has one).
A="$W/api"
mkdir -p "$A"
cat > "$A/free_batch.py" <<'PY'
# Static batch: the onnx package's own helper names the first dimension of every input and output.
import sys
import onnx
from onnx.tools.update_model_dims import update_inputs_outputs_dims

model = onnx.load(sys.argv[1])
def batch_free(values):
    return {v.name: ["batch"] + [d.dim_value for d in v.type.tensor_type.shape.dim[1:]] for v in values}
model = update_inputs_outputs_dims(model, batch_free(model.graph.input), batch_free(model.graph.output))
onnx.save(model, sys.argv[2])
PY
cat > "$A/reshape_batch.py" <<'PY'
# Baked batch: Reshape shapes that start with the traced batch (argv[3], default 2) copy the input's
# first dimension instead (0 in a Reshape shape).
import sys
import onnx
from onnx import numpy_helper

model = onnx.load(sys.argv[1])
traced = int(sys.argv[3]) if len(sys.argv) > 3 else 2
initializers = {t.name: t for t in model.graph.initializer}
constants = {n.output[0]: n.attribute[0].t for n in model.graph.node if n.op_type == "Constant"}
for node in model.graph.node:
    tensor = node.op_type == "Reshape" and (initializers.get(node.input[1]) or constants.get(node.input[1]))
    if tensor:
        shape = numpy_helper.to_array(tensor).copy()
        if shape.size and shape[0] == traced:
            shape[0] = 0
            tensor.CopyFrom(numpy_helper.from_array(shape, tensor.name))
onnx.save(model, sys.argv[2])
PY
cat > "$A/inference_mode.py" <<'PY'
# Training mode: Dropout without its training_mode input (false by default), BatchNormalization with
# training_mode=0 and only its first output.
import sys
import onnx

model = onnx.load(sys.argv[1])
for node in model.graph.node:
    if node.op_type == "Dropout":
        del node.input[2:]
    if node.op_type == "BatchNormalization":
        for attribute in node.attribute:
            if attribute.name == "training_mode":
                attribute.i = 0
        del node.output[1:]
onnx.save(model, sys.argv[2])
PY
cat > "$A/float64_to_float32.py" <<'PY'
# Float64 leak: float64 initializers, Constant values, Cast targets and declared values become float32.
import sys
import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

model = onnx.load(sys.argv[1])
graph = model.graph
def to_float32(tensor):
    tensor.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(tensor).astype(np.float32), tensor.name))
for tensor in graph.initializer:
    if tensor.data_type == TensorProto.DOUBLE:
        to_float32(tensor)
for node in graph.node:
    for attribute in node.attribute:
        if node.op_type == "Cast" and attribute.name == "to" and attribute.i == TensorProto.DOUBLE:
            attribute.i = TensorProto.FLOAT
        if attribute.type == onnx.AttributeProto.TENSOR and attribute.t.data_type == TensorProto.DOUBLE:
            to_float32(attribute.t)
for value in graph.value_info:
    if value.type.tensor_type.elem_type == TensorProto.DOUBLE:
        value.type.tensor_type.elem_type = TensorProto.FLOAT
onnx.save(model, sys.argv[2])
PY
cat > "$A/remove_initializer_inputs.py" <<'PY'
# Initializers listed as graph inputs: drop them from graph.input (as onnxruntime's
# tools/python/remove_initializer_from_input.py does); IR 4 and newer allow it.
import sys
import onnx

model = onnx.load(sys.argv[1])
inputs = {i.name: i for i in model.graph.input}
for initializer in model.graph.initializer:
    if initializer.name in inputs:
        model.graph.input.remove(inputs[initializer.name])
onnx.save(model, sys.argv[2])
PY

# ---------------------------------------------------------------------------------------------------
# fix: every tool on every model. timed DIR NAME CMD...: runs CMD, keeps its log, exit status and wall
# time (/usr/bin/time: the whole process, interpreter start-up included) as DIR/NAME.{log,rc,time}.
timed() {
  local dir="$1" name="$2"; shift 2
  mkdir -p "$dir"
  /usr/bin/time -f %e -o "$dir/$name.time" "$@" > "$dir/$name.log" 2>&1
  echo $? > "$dir/$name.rc"
}
F="$W/fix"
rm -rf "$F"
run_fix_case() {
  local case="$1" api="$2" poly_shapes="$3" sim_shape="$4"
  local in="$M/$case/model.onnx" d="$F/$case"
  mkdir -p "$d"
  timed "$d" api "$py" "$A/$api" "$in" "$d/api.onnx"
  if [ -n "$poly_shapes" ]; then
    timed "$d" polygraphy "$poly" surgeon sanitize "$in" -o "$d/polygraphy.onnx" --fold-constants --cleanup \
      --override-input-shapes "$poly_shapes"
  else
    timed "$d" polygraphy "$poly" surgeon sanitize "$in" -o "$d/polygraphy.onnx" --fold-constants --cleanup
  fi
  if [ "$case" = 04-static-batch ]; then
    # Polygraphy uses onnxruntime's symbolic shape inference when sympy is installed (as here); without
    # it, ONNX's own. The same override with ONNX's.
    timed "$d" polygraphy-onnx-si "$poly" surgeon sanitize "$in" -o "$d/polygraphy-onnx-si.onnx" --fold-constants \
      --cleanup --override-input-shapes "$poly_shapes" --no-onnxruntime-shape-inference
  fi
  timed "$d" onnxsim "$onnxsim" "$in" "$d/onnxsim.onnx"
  if [ -n "$sim_shape" ]; then
    timed "$d" onnxsim-batch5 "$onnxsim" "$in" "$d/onnxsim-batch5.onnx" --overwrite-input-shape "$sim_shape"
  fi
  timed "$d" ortkit "$ortkit" fix "$in" --out "$d/ortkit.onnx" --format json
  if [ "$case" = weights-as-inputs ]; then
    # Folding is off by default in ortkit fix and on in the peers: the same model with it on.
    timed "$d" ortkit-fold "$ortkit" fix "$in" --out "$d/ortkit-fold.onnx" --fold-constants --format json
  fi
}
echo "fix: running the tools"
# What a Python tool pays before it does anything: the interpreter and `import onnx, numpy`.
timed "$F/_baseline" python-import-onnx "$py" -c "import onnx, numpy"
run_fix_case 04-static-batch   free_batch.py                "x:[batch,16,64]"                "x:5,16,64"
run_fix_case 05-training-mode  inference_mode.py            ""                               ""
run_fix_case 06-baked-batch    reshape_batch.py             ""                               ""
run_fix_case 07-float64-leak   float64_to_float32.py        ""                               ""
run_fix_case weights-as-inputs remove_initializer_inputs.py ""                               ""
run_fix_case oww-alexa         free_batch.py                "onnx::Flatten_0:[batch,16,96]"  "onnx::Flatten_0:5,16,96"
# What ortkit fix plans for the traced model, and what it leaves (its report when it writes nothing
# lists no changes).
"$ortkit" fix "$M/06-baked-batch/model.onnx" --dry-run > "$F/06-baked-batch/ortkit-dry-run.txt" 2>&1
# The static batch whose Reshapes also bake it: the helper alone, then with the Reshape patch as well.
timed "$F/04-static-batch" api-reshape "$py" "$A/reshape_batch.py" "$F/04-static-batch/api.onnx" \
  "$F/04-static-batch/api-reshape.onnx" 2
"$py" "$root/scripts/compare_peers.py" judge-fix "$W"

# ---------------------------------------------------------------------------------------------------
# reduce: ortkit reduce and polygraphy debug reduce on the four 1,000-node failing models. Polygraphy's
# check command is `polygraphy run` with onnxruntime, as its docs show; a failure counts only when the
# check's output matches --fail-regex (else any non-zero exit would, a missing file included). For the
# NaN and the divergence its documented workflow for intermediate values is followed: the original's
# layerwise outputs (optimisations off) saved once and fed to every candidate; the divergence compares
# the default level (all optimisations) against them. Each polygraphy run is capped at 10 minutes.
R="$W/reduce"
cap=600
rm -rf "$R"/ortkit-* "$R"/polygraphy-*
reduce_ortkit() {
  local kind="$1"; shift
  timed "$R" "ortkit-$kind" "$ortkit" reduce "$R/$kind.onnx" --out "$R/ortkit-$kind/min.onnx" --format json "$@"
}
reduce_polygraphy() {
  local kind="$1" regex="$2"; shift 2
  local d="$R/polygraphy-$kind"
  mkdir -p "$d"
  (cd "$d" && /usr/bin/time -f %e -o "$d/reduce.time" timeout "$cap" "$poly" debug reduce "$R/$kind.onnx" -o "$d/min.onnx" \
      "$@" --fail-regex "$regex" --check "$poly" run polygraphy_debug.onnx --onnxrt "${check_args[@]}" \
      > "$d/reduce.log" 2>&1; echo $? > "$d/reduce.rc")
}
layerwise() {
  local kind="$1" d="$R/polygraphy-$1"
  mkdir -p "$d"
  (cd "$d" && /usr/bin/time -f %e -o "$d/prepare.time" bash -c "'$poly' run '$R/$kind.onnx' --onnxrt \
      --graph-optimization-level ORT_DISABLE_ALL --save-inputs inputs.json --onnx-outputs mark all \
      --save-outputs layerwise.json && '$poly' data merge inputs.json layerwise.json -o layerwise_inputs.json" \
      > "$d/prepare.log" 2>&1)
}
echo "reduce: running the reducers"
reduce_ortkit load --fails load
reduce_ortkit run --fails run
reduce_ortkit nan --fails nan
reduce_ortkit diverge --fails diverge=opt-levels --atol 1e-5 --rtol 1e-4
check_args=()
reduce_polygraphy load "Target shape may not have multiple -1 dimensions"
reduce_polygraphy run "cannot be reshaped to the requested shape"
layerwise nan
check_args=(--load-inputs layerwise_inputs.json --validate)
reduce_polygraphy nan "NaN Detected|Inf Detected" --load-inputs layerwise_inputs.json
layerwise diverge
check_args=(--load-inputs layerwise_inputs.json --load-outputs layerwise.json --atol 1e-5 --rtol 1e-4)
reduce_polygraphy diverge "Difference exceeds tolerance" --load-inputs layerwise_inputs.json
"$py" "$root/scripts/compare_peers.py" judge-reduce "$W"

echo
cat "$W/versions.txt"
echo "total: $((SECONDS - begin)) s"
