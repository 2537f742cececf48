#!/usr/bin/env bash
# cases.conformance_onnx_1_23: conformance.sh over the backend test cases of ONNX 1.23.2 (node cases
# up to opset 28, the model cases, and the converted PyTorch cases: 2,027), which scripts/setup.sh
# writes into .deps/onnx-testdata-1.23.2, against tests/data/conformance_expected_onnx_1_23.txt.
#
#   conformance_onnx_1_23.sh ORTKIT SOURCE_DIR [--update]
export ORTKIT_TESTDATA="${ORTKIT_TESTDATA_1_23:-$2/.deps/onnx-testdata-1.23.2/data}"
export CONFORMANCE_EXPECTED="$2/tests/data/conformance_expected_onnx_1_23.txt"
export CONFORMANCE_MIN_CASES=2000
export CONFORMANCE_SCRIPT="$0"
export CONFORMANCE_RESULTS="${CONFORMANCE_RESULTS:-$PWD/conformance_onnx_1_23_results.txt}"
exec bash "$(dirname "$0")/conformance.sh" "$@"
