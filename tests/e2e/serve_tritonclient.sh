#!/usr/bin/env bash
# The ecosystem's own clients against the real server: tests/python/tritonclient_test.py drives
# tritonclient.http and tritonclient.grpc against `ortkit serve` on free ports (health, metadata,
# JSON and binary infer checked against onnxruntime, protocol errors), then SIGTERM ends it with 0.
source "$2/tests/support/serve_e2e.sh"

"$bin/ortkit_make_model" bert-tiny "$work/bert.onnx"
"$bin/ortkit_make_model" demo-encoder "$work/encoder.onnx"

# Port 0: the server picks free ports and prints them.
start_server --model "bert=$work/bert.onnx" --model "encoder=$work/encoder.onnx" --http-port 0 --grpc-port 0 \
  --intra-op-threads 1
[ -n "$http" ] && [ -n "$grpc" ] || fail "no 'listening http=... grpc=...' line"

"$python" "$src/tests/python/tritonclient_test.py" --http "$http" --grpc "$grpc" \
  --bert "$work/bert.onnx" --encoder "$work/encoder.onnx" -v 2>&1 | tee "$work/py.log" | tail -4
grep -q '^OK' "$work/py.log" || fail "tritonclient tests failed: $(cat "$work/py.log")"

kill -TERM "$server"
set +e; wait "$server"; rc=$?; set -e
server=""
[ "$rc" = 0 ] || fail "ortkit serve exited $rc after SIGTERM, expected 0"
echo "PASS: tritonclient http+grpc against ortkit serve"
