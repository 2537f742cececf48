#!/usr/bin/env bash
# The ecosystem's own clients against the real server: tests/python/tritonclient_test.py drives
# tritonclient.http and tritonclient.grpc against `ortkit serve` on free ports (health, metadata,
# JSON and binary infer checked against onnxruntime, protocol errors), then SIGTERM ends it with 0.
set -euo pipefail
ortkit="$1"; src="$2"
bin="${ORTKIT_BIN_DIR:-$(dirname "$ortkit")}"
python="${ORTKIT_PYTHON:-$src/.deps/python/bin/python}"
if [ ! -x "$python" ]; then echo "SKIP: no Python at $python (set ORTKIT_PYTHON; scripts/setup.sh installs it)"; exit 77; fi
work="$(mktemp -d)"
server=""
cleanup() { if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$work/serve.log" ] && tail -20 "$work/serve.log" >&2; exit 1; }

"$bin/ortkit_make_model" bert-tiny "$work/bert.onnx"
"$bin/ortkit_make_model" demo-encoder "$work/encoder.onnx"

# Port 0: the server picks free ports and prints them.
"$ortkit" serve --model "bert=$work/bert.onnx" --model "encoder=$work/encoder.onnx" --http-port 0 --grpc-port 0 \
  --intra-op-threads 1 >"$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 1 300); do
  grep -q '^listening ' "$work/serve.log" && break
  kill -0 "$server" 2>/dev/null || fail "ortkit serve exited before listening"
  sleep 0.1
done
http="$(grep -o 'http=[^ ]*' "$work/serve.log" | head -1 | cut -d= -f2)"
grpc="$(grep -o 'grpc=[^ ]*' "$work/serve.log" | head -1 | cut -d= -f2)"
[ -n "$http" ] && [ -n "$grpc" ] || fail "no 'listening http=... grpc=...' line"

"$python" "$src/tests/python/tritonclient_test.py" --http "$http" --grpc "$grpc" \
  --bert "$work/bert.onnx" --encoder "$work/encoder.onnx" -v 2>&1 | tee "$work/py.log" | tail -4
grep -q '^OK' "$work/py.log" || fail "tritonclient tests failed: $(cat "$work/py.log")"

kill -TERM "$server"
set +e; wait "$server"; rc=$?; set -e
server=""
[ "$rc" = 0 ] || fail "ortkit serve exited $rc after SIGTERM, expected 0"
echo "PASS: tritonclient http+grpc against ortkit serve"
