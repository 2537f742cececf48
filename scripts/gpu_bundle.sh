#!/usr/bin/env bash
# Packs ortkit and its GPU runtime into one archive for a GPU machine that has a driver and CUDA's libraries
# but no build tools and no network: the ortkit and ortkit_make_model programs (stripped), every shared
# library they need beyond the C library and the C++ runtime, ONNX Runtime's GPU build with its CUDA provider
# trimmed to the kernels of one GPU architecture (scripts/trim_cuda_kernels.py: 230 MB become about 38 MB
# compressed), scripts/gpu_check.sh and run.sh, which sets the library path and runs the check.
#
#   scripts/gpu_bundle.sh [--arch 90] [OUT.tar.xz]       default out/ortkit-gpu.tar.xz; sm_90 is H100/H200
#
# There: tar -xJf ortkit-gpu.tar.xz -C /tmp && /tmp/ortkit-gpu/run.sh [MODEL.onnx]
# run.sh puts the CUDA libraries of NVIDIA's Python wheels (python3's site-packages/nvidia/*/lib) on the
# library path when the loader does not find libcudart.so.13 itself, and leaves the reports in $REPORTS
# (default /tmp/ortkit-gpu-reports), the figures in gpu_check.log there.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
gpu_lib="${ORTKIT_GPU_LIB:-$root/.deps/onnxruntime-gpu-1.29.0/lib}"
arch=90
out="$root/out/ortkit-gpu.tar.xz"
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) arch="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) out="$1"; shift ;;
  esac
done
for f in "$build/bin/ortkit" "$build/bin/ortkit_make_model" "$gpu_lib/libonnxruntime_providers_cuda.so"; do
  [ -e "$f" ] || { echo "missing $f: scripts/setup.sh and scripts/build.sh first" >&2; exit 2; }
done
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
dir="$stage/ortkit-gpu"
mkdir -p "$dir/bin" "$dir/lib"

strip -o "$dir/bin/ortkit" "$build/bin/ortkit"
strip -o "$dir/bin/ortkit_make_model" "$build/bin/ortkit_make_model"
# The libraries the programs load, but not the C library, the C++ runtime or ONNX Runtime (the GPU build
# below replaces it): those the GPU machine has in newer, compatible versions.
ldd "$build/bin/ortkit" "$build/bin/ortkit_make_model" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
  grep -Ev '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|libonnxruntime)\.so' |
  while read -r lib; do cp -L "$lib" "$dir/lib/"; done
cp -a "$gpu_lib"/libonnxruntime.so* "$gpu_lib/libonnxruntime_providers_shared.so" "$dir/lib/"
python3 "$root/scripts/trim_cuda_kernels.py" "$gpu_lib/libonnxruntime_providers_cuda.so" \
  "$dir/lib/libonnxruntime_providers_cuda.so" --arch "$arch"
cp "$root/scripts/gpu_check.sh" "$dir/"
cat >"$dir/run.sh" <<'RUN'
#!/usr/bin/env bash
# Runs gpu_check.sh with this bundle's programs and libraries; reports in $REPORTS.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
reports="${REPORTS:-/tmp/ortkit-gpu-reports}"
mkdir -p "$reports"
libs="$here/lib"
if ! ldconfig -p 2>/dev/null | grep -q 'libcudart\.so\.13'; then
  wheels="$(python3 - <<'PY' 2>/dev/null || true
import glob, os, site
roots = site.getsitepackages() + [site.getusersitepackages()]
dirs = {d for r in roots for d in glob.glob(os.path.join(r, "nvidia", "**", "lib"), recursive=True)
        if glob.glob(os.path.join(d, "lib*.so*"))}
print(":".join(sorted(dirs)))
PY
)"
  [ -n "$wheels" ] && libs="$libs:$wheels"
fi
export LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export BUILD_DIR="$here" ORTKIT_GPU_LIB="$here/lib" OUT="$reports"
"$here/gpu_check.sh" "$@" 2>&1 | tee "$reports/gpu_check.log"
RUN
chmod +x "$dir/run.sh" "$dir/gpu_check.sh"
mkdir -p "$(dirname "$out")"
tar -C "$stage" -cf - ortkit-gpu | xz -9 -T0 >"$out"
echo "wrote $out ($(( $(stat -c %s "$out") / 1048576 )) MiB; unpacked $(du -sm "$dir" | cut -f1) MiB)"
