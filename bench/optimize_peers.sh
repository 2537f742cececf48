#!/usr/bin/env bash
# `ortkit optimize` with its defaults against its peers, on the same models and this CPU, in one run: latency,
# accuracy against the float original, time to optimise and peak memory of the optimising process.
#
#   nice -n 10 bench/optimize_peers.sh [WORK_DIR]      the real sizes: 15-30 minutes on two cores
#   MODELS=bert BERT_LAYERS=2 BERT_HIDDEN=128 BERT_HEADS=2 bench/optimize_peers.sh     a quick run
#
# Environment: ORTKIT (default build/bin/ortkit), ORTKIT_PYTHON (the project's environment, default
# .deps/python/bin/python: torch and transformers write the checkpoints), MODELS (bert,gpt2,resnet), THREADS (2),
# ROUNDS (5), BLOCK_S (1.0: timed runs per round, about this many seconds per file), INT4_BLOCK (32), and the
# sizes: BERT_LAYERS/HIDDEN/HEADS/SEQ (12/768/12/128), BERT_BATCHES (1,8), GPT2_LAYERS/HIDDEN/HEADS/VOCAB (12/768/
# 12/50257), GPT2_PAST (128: the cached tokens before the timed step), RESNET_DEPTHS (3,4,6,3),
# RESNET_WIDTHS (256,512,1024,2048: ResNet-50), RESNET_IMAGE (224), CALIBRATION_SAMPLES (32), EVALUATION_IMAGES (32).
# WORK_DIR keeps the checkpoints, exports, every written file, the logs, results.json and report.txt (and a
# second run in it reuses the exports); without it a scratch folder is used and removed.
#
# The models, each built from a Transformers config with random weights (bench/optimize_peers.py checkpoints)
# and exported by `ortkit export hf`: a BERT encoder (feature-extraction), timed at batch 1 and 8; a GPT-2
# decoder with its cache (text-generation-with-past), timed on one decoding step after GPT2_PAST tokens; a ResNet
# image classifier (image-classification), timed at batch 1, with CALIBRATION_SAMPLES random images as
# calibration data for the static quantisers (the same .npz files for ortkit and for quantize_static).
#
# Candidates on each model: ortkit optimize with its defaults (`--dim` for the timed sizes, and `--calibration`
# on the ResNet), and on the decoder also `--passes int8-dynamic` and `--passes int4`; ONNX Runtime 1.29.0's
# Python tools: ort-int8 (quant_pre_process, with skip_symbolic_shape=True when its default fails, then
# quantize_dynamic per channel), ort-fuse (onnxruntime.transformers.optimizer), ort-fuse+int8 (the optimizer,
# then quantize_dynamic), ort-int4 and ort-int4-acc4 (MatMulNBitsQuantizer, the matmul_4bits_quantizer of older
# releases, block INT4_BLOCK, accuracy_level unset or 4), ort-static (quant_pre_process, quantize_static in QDQ
# per channel with the calibration samples). Each optimisation runs as a process of its own whose wall time and
# peak resident memory (wait4) are kept; ortkit's includes its proofs and measurements (its report's rewrite_s,
# the rewriting alone, is what is set beside the peer's time for the same pass).
#
# Every written file is then measured the same way by one onnxruntime loop (bench/optimize_peers.py): accuracy
# on inputs of their own against the float original (the lowest cosine similarity of a row of the main output,
# and top-1 agreement for logits); latency: THREADS intra-op threads, ROUNDS interleaved rounds in rotating order,
# the median of each round's timed runs, then the median over rounds. It prints one table, the ratio best
# peer latency / ortkit latency per model and batch, and whether ortkit meets issue 37's targets.
#
# Hugging Face Optimum (ORTOptimizer O1-O4, ORTQuantizer presets) is not measured: it cannot be installed beside
# the project's transformers 5.24 and onnxruntime 1.29.0 (pip 26.3, 2026-12-06). Its ONNX Runtime part lives in
# optimum-onnx, whose newest release (0.1.0) requires transformers<4.58: `pip install optimum-onnx[onnxruntime]
# transformers==5.24.*` stops with ResolutionImpossible. Asked for optimum[onnxruntime], pip backtracks to
# optimum 1.17.1, which declares no upper bound, but `import optimum.onnxruntime` fails there ("cannot import
# name 'is_tf_available' from 'transformers.utils'"); optimum-onnx 0.1.0 forced in without its dependencies fails
# likewise ("cannot import name '_CAN_RECORD_REGISTRY' from 'transformers.utils.generic'"). Optimum's presets call
# the same onnxruntime.transformers optimizer and onnxruntime.quantization that are measured here.
#
# The peers' environment: .deps/optimize-peers, a venv made from bench/optimize_peers_requirements.txt (every
# package pinned by hash, at the versions of python/requirements.txt) over the project's .deps/python, which it
# sees through a .pth file: what the project's environment already holds at the pinned version is used from there
# (on a machine set up by scripts/setup.sh, all of it: nothing is downloaded), anything else is installed into the
# venv. Over rather than beside: onnxruntime.transformers.optimizer imports torch (for its version), and a venv of
# its own would need the 4 GB wheel. The checkpoints are written by .deps/python itself (torch, transformers).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ortkit="${ORTKIT:-$root/build/bin/ortkit}"
project_python="${ORTKIT_PYTHON:-$root/.deps/python/bin/python}"
deps="$root/.deps"
venv="$deps/optimize-peers"
requirements="$root/bench/optimize_peers_requirements.txt"

[ -x "$ortkit" ] ||
  { echo "optimize_peers: no ortkit at $ortkit (build it with scripts/build.sh, or set ORTKIT)" >&2; exit 2; }
"$project_python" -c 'import torch, transformers' 2>/dev/null ||
  { echo "optimize_peers: $project_python cannot import torch and transformers" \
         "(run scripts/setup.sh, or set ORTKIT_PYTHON)" >&2; exit 2; }

# The peers' environment: a venv that sees the project's environment through a .pth file (after its own
# site-packages), with the peers' packages installed from the pinned list: those .deps/python holds at the same
# version are used from there, the others land in the venv.
project_site="$("$project_python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
if ! [ -x "$venv/bin/python" ] || ! cmp -s "$requirements" "$venv/requirements.txt" ||
   [ "$(cat "$venv/project-site.txt" 2>/dev/null)" != "$project_site" ]; then
  echo "optimize_peers: making the peers' environment in $venv"
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
  venv_site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  echo "$project_site" >"$venv_site/zz-project.pth"
  links=()
  [ -d "$deps/wheels" ] && links=(--find-links "$deps/wheels")   # setup.sh keeps the onnxruntime wheel there
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --only-binary :all: --require-hashes \
    "${links[@]}" -r "$requirements"
  cp "$requirements" "$venv/requirements.txt"
  echo "$project_site" >"$venv/project-site.txt"
fi

if [ $# -ge 1 ]; then
  work="$1"
  mkdir -p "$work"
  work="$(cd "$work" && pwd)"
else
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi
exec_args=("$root/bench/optimize_peers.py" run "$work" --ortkit "$ortkit" --project-python "$project_python")
"$venv/bin/python" "${exec_args[@]}"
