#!/usr/bin/env bash
# What stops ortkit serve at start with exit 2 and a message saying what to change (~10 s): port flags
# outside 0..65535; a gRPC, HTTP or metrics port another server holds (gRPC's default SO_REUSEPORT
# once let a second server share a gRPC port and take half its connections); two flags on one port;
# a string-tensor model; a warm-up too large to synthesise; bucketing.multiple_of 0.
source "$2/tests/support/serve_e2e.sh"
make_model() {  # make_model NAME: a model in ONNX text from stdin, written to $work/NAME.onnx
  "$bin/ortkit_make_model" from-text "$work/$1.onnx"
}
make_model relu <<'TXT'
<ir_version: 8, opset_import: ["" : 17]>
agraph (float[N] x) => (float[N] y) { y = Relu(x) }
TXT
make_model strings <<'TXT'
<ir_version: 8, opset_import: ["" : 17]>
agraph (string[N] x) => (float[N] y) { y = Cast<to = 1>(x) }
TXT
model=(--model "relu=$work/relu.onnx")
# A server that should have refused to start would otherwise wait for a signal: time-outs turn that into
# a failure (exit 124) instead of a hang.
serve() { timeout 60 "$ortkit" serve "$@"; }

echo "== port flags outside 0..65535: exit 2 naming the flag and the range"
for value in -1 65536 99999; do
  expect_rc 2 serve "${model[@]}" --http-port "$value"
  expect_msg "^ortkit serve: --http-port: $value is not a port: give 0 to 65535 (0: a free one) (ortkit serve --help"
done
for value in -5 65536 99999; do
  expect_rc 2 serve "${model[@]}" --grpc-port "$value"
  expect_msg "^ortkit serve: --grpc-port: $value is not a port: give 0 to 65535 (0: a free one) or -1 (no gRPC) (ortkit"
done
for value in -2 65537; do
  expect_rc 2 serve "${model[@]}" --metrics-port "$value"
  expect_msg "^ortkit serve: --metrics-port: $value is not a port: give 0 to 65535 (0: a free one) or -1 (/metrics on the HTTP port only) (ortkit"
done
expect_rc 2 serve "${model[@]}" --http-port 18000 --grpc-port 18000
expect_msg "--http-port and --grpc-port are both 18000: give each its own port"
expect_rc 2 serve "${model[@]}" --http-port 18000 --grpc-port -1 --metrics-port 18000
expect_msg "--metrics-port 18000 is also --http-port"

echo "== ports another server holds: exit 2 naming the port"
start_server "${model[@]}" --http-port 0 --grpc-port 0 --metrics-port 0
http_port="${http##*:}"; grpc_port="${grpc##*:}"
metrics_port="$(grep -o 'metrics=[^ ]*' "$work/serve.log" | head -1 | sed 's/.*://')"
[ -n "$metrics_port" ] || fail "no metrics= in the listening line"
expect_rc 2 serve "${model[@]}" --http-port 0 --grpc-port "$grpc_port"
expect_msg "ortkit serve: cannot listen for gRPC on 127.0.0.1:$grpc_port: port $grpc_port is in use (another process listens on it)"
grep -q "^listening" "$work/out" && fail "the second server said it was listening on gRPC port $grpc_port"
expect_rc 2 serve "${model[@]}" --http-port "$http_port" --grpc-port -1
expect_msg "cannot listen for HTTP on 127.0.0.1:$http_port: port $http_port is in use"
expect_rc 2 serve "${model[@]}" --http-port 0 --grpc-port -1 --metrics-port "$metrics_port"
expect_msg "cannot listen for metrics on 127.0.0.1:$metrics_port: port $metrics_port is in use"
expect_rc 2 serve "${model[@]}" --http-port 0 --grpc-port "$http_port"
expect_msg "cannot listen for gRPC on 127.0.0.1:$http_port: port $http_port is in use"
# The first server still holds its gRPC port alone: every call of a fresh channel reaches it.
"$python" - "$grpc" <<'PY' || fail "the first server does not answer every gRPC call"
import sys, grpc
from tritonclient.grpc import service_pb2 as pb, service_pb2_grpc as rpc
for _ in range(20):
    with grpc.insecure_channel(sys.argv[1]) as channel:
        assert rpc.GRPCInferenceServiceStub(channel).ServerLive(pb.ServerLiveRequest(), timeout=10).live
PY
kill -TERM "$server"; wait "$server"; server=""

echo "== models and configurations serve cannot take: the message says what to do"
expect_rc 2 serve --model "strings=$work/strings.onnx" --http-port 0 --grpc-port -1
expect_msg "model 'strings': input 'x' is a string tensor (string\[N\]), and ortkit serve handles numeric and boolean tensors only: tokenise or encode the text before the model"
echo '{"warmup": {"dims": {"N": [1000000000]}}}' >"$work/warmup.json"
expect_rc 2 serve "${model[@]}" --config "$work/warmup.json" --http-port 0 --grpc-port -1
expect_msg "model 'relu': warm-up inputs for N=1000000000 would take 3.7 GiB"
expect_msg "give smaller sizes in the configuration's warmup.dims"
grep -q -- "--dim\|--shape\|--input" "$work/out" && fail "the warm-up advice names flags serve does not have: $(cat "$work/out")"
echo '{"bucketing": {"dim": "N", "multiple_of": 0}}' >"$work/bucketing.json"
expect_rc 2 serve "${model[@]}" --config "$work/bucketing.json" --http-port 0 --grpc-port -1
expect_msg "bucketing.multiple_of: expected a positive integer (lengths pad up to a multiple of it), got 0"
echo "PASS: serve start-up errors"
