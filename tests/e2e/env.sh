#!/usr/bin/env bash
# ortkit env on real Python environments built from the pinned wheels that scripts/setup.sh keeps in
# .deps/wheels: a clean one passes; the CPU and GPU builds installed side by side are named with the exact
# fix; a GPU build without its CUDA libraries names each missing library and the CPU session it falls back
# to. ortkit's own runtime swapped for the GPU build (LD_LIBRARY_PATH) says which library it loaded and
# what CUDA needs, and every CUDA request on this machine gets a specific diagnosis, never a crash and
# never a CPU run reported as CUDA.
source "$2/tests/support/e2e.sh"
wheels="$src/.deps/wheels"
gpu_lib="$src/.deps/onnxruntime-gpu-1.29.0/lib"
[ -d "$wheels" ] && [ -d "$gpu_lib" ] || fail "no $wheels or $gpu_lib: run scripts/setup.sh"
cpu_wheel="$(ls "$wheels"/onnxruntime-1.29.0-*.whl)"
gpu_wheel="$(ls "$wheels"/onnxruntime_gpu-1.29.0-*.whl)"
# The assertions about missing CUDA libraries hold on a machine without them (this one, CI).
has_cuda=0; [ -e /proc/driver/nvidia/version ] && has_cuda=1

# venv NAME WHEEL...: a Python environment (Debian's numpy visible) with the wheels installed in that order.
venv() {
  local name="$1"; shift
  /usr/bin/python3 -m venv --system-site-packages "$work/$name"
  for wheel in "$@"; do "$work/$name/bin/python" -m pip install -q --no-index --no-deps "$wheel"; done
}
# codes FILE: the diagnosis codes of an `ortkit env --format json` report, one per line.
codes() { python3 -c 'import json,sys; print("\n".join(d["code"] for d in json.load(open(sys.argv[1]))["diagnoses"]))' "$1"; }

# 1. A clean environment with the CPU build: nothing to report about it.
venv clean "$cpu_wheel"
expect_rc 0 "$ortkit" env --python "$work/clean/bin/python"
expect_msg "onnxruntime 1.29.0"
expect_msg "CPUExecutionProvider"
"$ortkit" env --python "$work/clean/bin/python" --format json >"$work/clean.json"
python3 - "$work/clean.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
p = r["python"]
assert p["import"]["ok"] and "CPUExecutionProvider" in p["import"]["providers"], p
assert [d["name"] for d in p["distributions"]] == ["onnxruntime"], p["distributions"]
assert p["distributions"][0]["owns_package_files"] is True, p["distributions"]
assert not [d for d in r["diagnoses"] if d["severity"] == "error"], r["diagnoses"]
assert r["ortkit_runtime"]["version"] == "1.29.0" and r["ortkit_runtime"]["library"].endswith("libonnxruntime.so.1.29.0"), r
PY

# 2. The GPU build, then the CPU build over it: the CPU build's files win and CUDA disappears.
venv both "$gpu_wheel" "$cpu_wheel"
expect_rc 1 "$ortkit" env --python "$work/both/bin/python"
expect_msg "env.ort-conflict"
expect_msg "no CUDAExecutionProvider"
expect_msg "the files on disk are onnxruntime 1.29.0's"
expect_msg "pip install onnxruntime-gpu==1.29.0"
"$ortkit" env --python "$work/both/bin/python" --format json >"$work/both.json" || true
python3 - "$work/both.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
conflict = [d for d in r["diagnoses"] if d["code"] == "env.ort-conflict"]
assert len(conflict) == 1, r["diagnoses"]
fix = conflict[0]["fix"]
assert "pip uninstall -y" in fix and "onnxruntime-gpu" in fix.split("&&")[0] and " onnxruntime" in fix.split("&&")[0], fix
owners = {d["name"]: d["owns_package_files"] for d in r["python"]["distributions"]}
assert owners == {"onnxruntime": True, "onnxruntime-gpu": False}, owners
PY

# 3. The GPU build alone, on a machine without CUDA 13: each missing library is named, and the session
# asked for CUDA is seen running on the CPU.
venv gpu "$gpu_wheel"
if [ "$has_cuda" = 0 ]; then
  expect_rc 1 "$ortkit" env --python "$work/gpu/bin/python"
  expect_msg "env.cuda-library-missing"
  expect_msg "libcublasLt.so.13"
  expect_msg "libcudnn.so.9"
  expect_msg "env.cuda-fallback"
  expect_msg "runs on CPUExecutionProvider"
  expect_msg "env.no-gpu"
  "$ortkit" env --python "$work/gpu/bin/python" --format json >"$work/gpu.json" || true
  codes "$work/gpu.json" >"$work/gpu.codes"  # not piped into grep -q: under pipefail its early exit fails the pipe
  grep -qx "env.cuda-library-missing" "$work/gpu.codes" || fail "gpu: no env.cuda-library-missing"
  python3 - "$work/gpu.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cuda = r["python"]["cuda"]
assert cuda["cuda_major"] == 13 and cuda["cudnn_major"] == 9, cuda
assert cuda["source"].startswith("read from ") and cuda["source"].endswith("libonnxruntime_providers_cuda.so"), cuda
missing = {l["soname"] for l in cuda["libraries"] if not l["found"]}
assert {"libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13", "libcudnn.so.9"} <= missing, missing
assert r["python"]["import"]["cuda_version"] == "13.0", r["python"]["import"]
assert r["python"]["cuda_session"]["providers"] == ["CPUExecutionProvider"], r["python"]["cuda_session"]
PY
fi

# 4. An interpreter that is not there.
expect_rc 1 "$ortkit" env --python "$work/none/bin/python"
expect_msg "env.python-unavailable"

# 5. ortkit's own runtime, the CPU build: CUDA asked for is "not built", said as such.
expect_rc 1 "$ortkit" env --no-python --provider cuda
expect_msg "env.provider-not-built"
"$bin/ortkit_make_model" from-text "$work/m.onnx" <<'TXT'
<ir_version: 8, opset_import: ["" : 17]>
m (float[batch, 4] x) => (float[batch, 4] y) {
  y = Relu (x)
}
TXT
# The machine's fault, not the model's: exit 2, as run, validate and bench give.
expect_rc 2 "$ortkit" check "$work/m.onnx" --provider cuda
expect_msg "runtime.provider-unavailable"
expect_msg "is not in this ONNX Runtime build"
expect_rc 2 "$ortkit" doctor "$work/m.onnx" --provider cuda
expect_msg "env.provider-not-built"

# 6. ortkit's own runtime swapped for the GPU build: the loaded library, the CUDA it needs, and for every
# command asked for CUDA the missing library by name.
if [ "$has_cuda" = 0 ]; then
  export LD_LIBRARY_PATH="$gpu_lib"
  expect_rc 1 "$ortkit" env --no-python
  expect_msg "$gpu_lib/libonnxruntime.so.1.29.0"
  expect_msg "CUDAExecutionProvider"
  expect_msg "libcublasLt.so.13"
  expect_msg "env.cuda-library-missing"
  expect_rc 2 "$ortkit" check "$work/m.onnx" --provider cuda
  expect_msg "env.cuda-library-missing"
  expect_msg "needs libcublasLt.so.13"
  expect_rc 2 "$ortkit" run "$work/m.onnx" --provider cuda
  expect_msg "env.cuda-library-missing"
  expect_rc 2 "$ortkit" doctor "$work/m.onnx" --provider cuda
  expect_msg "env.cuda-library-missing"
  expect_rc 2 "$ortkit" bench "$work/m.onnx" --provider cuda --iterations 3
  expect_msg "libcublasLt.so.13"
  expect_rc 2 "$ortkit" validate "$work/m.onnx" --compare providers=cpu,cuda
  expect_msg "libcublasLt.so.13"
  expect_rc 2 "$ortkit" serve --model "m=$work/m.onnx" --provider cuda --http-port 0 --grpc-port -1
  expect_msg "libcublasLt.so.13"
  expect_rc 0 "$ortkit" check "$work/m.onnx"  # the CPU provider of the GPU build still works
  unset LD_LIBRARY_PATH
fi
echo "env: ok"
