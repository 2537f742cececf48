#!/usr/bin/env bash
# Values a request carries, over HTTP (curl) and gRPC (Python) against one ortkit serve (~5 s):
# integers outside their datatype are refused with the input, element, value and range, never
# wrapped (HTTP UINT8 256 once became 0) nor clamped (gRPC INT8 300 once became 127); FP16 beyond
# 65504 is refused; request parameters of the wrong type get the same message over both; NaN and the
# infinities come back null in JSON and exact in binary tensor data (docs/serving.md).
source "$2/tests/support/serve_e2e.sh"
command -v curl >/dev/null || skip "curl not installed"
models=()
for type in uint8 int8 uint64 int32 float16; do
  "$bin/ortkit_make_model" from-text "$work/$type.onnx" <<TXT
<ir_version: 8, opset_import: ["" : 17]>
agraph ($type[N] x) => ($type[N] y) { y = Identity(x) }
TXT
  models+=(--model "$type=$work/$type.onnx")
done
"$bin/ortkit_make_model" from-text "$work/reciprocal.onnx" <<'TXT'
<ir_version: 8, opset_import: ["" : 17]>
agraph (float[N] x) => (float[N] y) { y = Reciprocal(x) }
TXT
start_server "${models[@]}" --model "reciprocal=$work/reciprocal.onnx" --http-port 0 --grpc-port 0

# infer MODEL DATATYPE DATA [PARAMETERS]: POSTs one input 'x' of shape [len(DATA)]; the body lands in
# $work/body and the status is printed.
infer() {
  local count parameters="${4:-}"
  count="$(python3 -c 'import json,sys; print(len(json.loads(sys.argv[1])))' "$3")"
  [ -n "$parameters" ] || parameters='{}'
  curl -s -o "$work/body" -w '%{http_code}' -X POST "http://$http/v2/models/$1/infer" \
    -d "{\"parameters\": $parameters, \"inputs\": [{\"name\": \"x\", \"datatype\": \"$2\", \"shape\": [$count], \"data\": $3}]}"
}
# expect_400 MESSAGE MODEL DATATYPE DATA [PARAMETERS]
expect_400() {
  local want="$1"; shift
  local got; got="$(infer "$@")"
  [ "$got" = 400 ] || fail "$*: status $got, expected 400: $(cat "$work/body")"
  python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["error"]; assert e == sys.argv[2], e' "$work/body" "$want" \
    || fail "$*: expected the error '$want', got $(cat "$work/body")"
}

echo "== HTTP: values outside the datatype, 400"
expect_400 "input 'x': element 0 is -1, outside UINT8's range 0..255" uint8 UINT8 '[-1, 256, 300]'
expect_400 "input 'x': element 1 is 256, outside UINT8's range 0..255" uint8 UINT8 '[0, 256, 300]'
expect_400 "input 'x': element 0 is 300, outside INT8's range -128..127" int8 INT8 '[300]'
expect_400 "input 'x': element 0 is -1, outside UINT64's range 0..18446744073709551615" uint64 UINT64 '[-1]'
expect_400 "input 'x': element 0 is 1.5 but datatype INT32 needs integers" int32 INT32 '[1.5]'
expect_400 "input 'x': element 1 is 70000, outside FP16's range -65504..65504" float16 FP16 '[1, 70000]'
[ "$(infer uint8 UINT8 '[0, 255]')" = 200 ] || fail "UINT8 0 and 255: $(cat "$work/body")"
grep -q '"data":\[0,255\]' "$work/body" || fail "UINT8 0 and 255 came back as $(cat "$work/body")"
[ "$(infer uint64 UINT64 '[18446744073709551615]')" = 200 ] || fail "UINT64 max: $(cat "$work/body")"
grep -q '"data":\[18446744073709551615\]' "$work/body" || fail "UINT64 max came back as $(cat "$work/body")"
[ "$(infer float16 FP16 '[65504, -65504]')" = 200 ] || fail "FP16 +-65504: $(cat "$work/body")"

echo "== HTTP: parameters of the wrong type, 400"
expect_400 'malformed request: parameter "priority" must be an integer' uint8 UINT8 '[1]' '{"priority": "high"}'
expect_400 'malformed request: parameter "timeout" must be an integer (microseconds)' uint8 UINT8 '[1]' '{"timeout": "x"}'

echo "== gRPC: the same values and parameters, INVALID_ARGUMENT with the same messages"
"$python" - "$grpc" <<'PY' || fail "gRPC values (see above)"
import sys, grpc
from tritonclient.grpc import service_pb2 as pb, service_pb2_grpc as rpc
stub = rpc.GRPCInferenceServiceStub(grpc.insecure_channel(sys.argv[1]))

def infer(model, datatype, field, values, parameters=None):
    request = pb.ModelInferRequest(model_name=model)
    x = request.inputs.add(name="x", datatype=datatype, shape=[len(values)])
    getattr(x.contents, field).extend(values)
    for key, value in (parameters or {}).items():
        setattr(request.parameters[key], "string_param" if isinstance(value, str) else "int64_param", value)
    try:
        return grpc.StatusCode.OK, stub.ModelInfer(request, timeout=10)
    except grpc.RpcError as e:
        return e.code(), e.details()

failed = False
def expect(want, *call):
    global failed
    code, got = infer(*call)
    if code != grpc.StatusCode.INVALID_ARGUMENT or got != want:
        print(f"FAIL: {call}: {code} {got!r}, expected INVALID_ARGUMENT {want!r}")
        failed = True

expect("input 'x': element 1 is 300, outside INT8's range -128..127", "int8", "INT8", "int_contents", [1, 300])
expect("input 'x': element 0 is -129, outside INT8's range -128..127", "int8", "INT8", "int_contents", [-129])
expect("input 'x': element 2 is 256, outside UINT8's range 0..255", "uint8", "UINT8", "uint_contents", [0, 1, 256])
expect('malformed request: parameter "timeout" must be an integer (microseconds)',
       "uint8", "UINT8", "uint_contents", [1], {"timeout": "x"})
expect('malformed request: parameter "priority" must be an integer',
       "uint8", "UINT8", "uint_contents", [1], {"priority": "high"})
code, answer = infer("int8", "INT8", "int_contents", [-128, 127], {"priority": 0})
if code != grpc.StatusCode.OK or answer.raw_output_contents[0] != bytes([0x80, 0x7F]):
    print(f"FAIL: INT8 -128 and 127: {code} {answer}")
    failed = True
sys.exit(1 if failed else 0)
PY

echo "== NaN and the infinities: null in JSON, exact in binary tensor data"
[ "$(infer reciprocal FP32 '[0.0, -0.0, 2.0]')" = 200 ] || fail "reciprocal: $(cat "$work/body")"
grep -q '"data":\[null,null,0.5\]' "$work/body" || fail "JSON answer: $(cat "$work/body")"
"$python" - "$http" <<'PY' || fail "binary answer of 1/[0, -0, 2]"
import sys, numpy as np, tritonclient.http as httpclient
client = httpclient.InferenceServerClient(sys.argv[1])
x = httpclient.InferInput("x", [3], "FP32")
x.set_data_from_numpy(np.array([0.0, -0.0, 2.0], dtype=np.float32))
y = client.infer("reciprocal", [x], outputs=[httpclient.InferRequestedOutput("y", binary_data=True)]).as_numpy("y")
assert list(y) == [np.inf, -np.inf, 0.5], y
PY
kill -TERM "$server"; wait "$server"; server=""
echo "PASS: serve request values"
