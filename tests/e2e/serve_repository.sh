#!/usr/bin/env bash
# The repository extension through tritonclient: tests/python/repository_test.py drives index, load
# (with a config override, of a new version, of a broken one), reloads while requests run, unload and
# the protocol's errors over HTTP and gRPC against `ortkit serve --model-control explicit
# --repository-api`; then a server without --repository-api refuses load and unload.
source "$2/tests/support/serve_e2e.sh"

repo="$work/repository"
"$python" "$src/tests/python/repository_test.py" --write-repository "$repo"

start_server --model-repository "$repo" --model-control explicit --load-model other --repository-api \
  --http-port 0 --grpc-port 0 --intra-op-threads 1
[ -n "$grpc" ] || fail "no 'listening ... grpc=...' line"

"$python" "$src/tests/python/repository_test.py" --http "$http" --grpc "$grpc" --repository "$repo" -v 2>&1 |
  tee "$work/py.log" | tail -4
grep -q '^OK' "$work/py.log" || fail "repository tests failed: $(cat "$work/py.log")"

# A load that warms up for a while (x @ x^T at 4000 rows of 1024) runs off the I/O thread: health probes and
# inferences over HTTP are answered meanwhile.
config='{"parameters": {"config": "{\"warmup\": {\"dims\": {\"batch\": [4000]}}}"}}'
curl -s -o "$work/slow.json" -w '%{http_code}' -X POST -d "$config" "http://$http/v2/repository/models/slow/load" \
  >"$work/slow.code" &
loader=$!
sleep 0.2
curl -sf --max-time 5 "http://$http/v2/health/live" >/dev/null || fail "no live answer while a model loads"
body='{"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 4], "data": [1, 2, 3, 4]}]}'
curl -sf --max-time 5 -d "$body" "http://$http/v2/models/other/infer" >"$work/during.json" ||
  fail "no infer answer while a model loads"
if kill -0 "$loader" 2>/dev/null; then
  echo "answered live and infer while the load of 'slow' ran"
else
  echo "note: the load of 'slow' ended before the probes (a fast machine): nothing shown about overlap"
fi
wait "$loader"
[ "$(cat "$work/slow.code")" = 200 ] || fail "the slow load answered $(cat "$work/slow.code"): $(cat "$work/slow.json")"

kill -TERM "$server"
set +e; wait "$server"; rc=$?; set -e
server=""
[ "$rc" = 0 ] || fail "ortkit serve exited $rc after SIGTERM, expected 0"

# Without --repository-api: the index answers, load and unload are refused with what to do.
start_server --model-repository "$repo" --model-control explicit --load-model other --http-port 0 --grpc-port -1 \
  --intra-op-threads 1
code="$(curl -s -o "$work/refused.json" -w '%{http_code}' -X POST "http://$http/v2/repository/models/other/load")"
[ "$code" = 403 ] || fail "load without --repository-api answered $code, expected 403"
grep -q -- '--repository-api' "$work/refused.json" || fail "the refusal does not name --repository-api: $(cat "$work/refused.json")"
code="$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://$http/v2/repository/models/other/unload")"
[ "$code" = 403 ] || fail "unload without --repository-api answered $code, expected 403"
code="$(curl -s -o "$work/index.json" -w '%{http_code}' -X POST "http://$http/v2/repository/index")"
[ "$code" = 200 ] && grep -q '"READY"' "$work/index.json" || fail "the index answered $code: $(cat "$work/index.json")"
code="$(curl -s -o /dev/null -w '%{http_code}' -X POST -d '[1' "http://$http/v2/repository/index")"
[ "$code" = 400 ] || fail "a malformed index body answered $code, expected 400"

kill -TERM "$server"; wait "$server" || true; server=""

# --repository-api-key: the index, load and unload answer only requests carrying the header (gRPC metadata).
start_server --model-repository "$repo" --model-control explicit --load-model other --repository-api \
  --repository-api-key 'X-Admin-Key=s3cret' --http-port 0 --grpc-port 0 --intra-op-threads 1
code="$(curl -s -o "$work/refused.json" -w '%{http_code}' -X POST "http://$http/v2/repository/models/other/load")"
[ "$code" = 403 ] && grep -q 'X-Admin-Key' "$work/refused.json" || fail "load without the key answered $code: $(cat "$work/refused.json")"
code="$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'X-Admin-Key: wrong' "http://$http/v2/repository/index")"
[ "$code" = 403 ] || fail "the index with a wrong key answered $code, expected 403"
code="$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'X-Admin-Key: s3cret' "http://$http/v2/repository/models/other/load")"
[ "$code" = 200 ] || fail "load with the key answered $code, expected 200"
"$python" - "$http" "$grpc" <<'PY' || fail "tritonclient with and without the key"
import sys
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException
key = {"x-admin-key": "s3cret"}  # gRPC metadata names are lower case; HTTP takes any case
for client in (httpclient.InferenceServerClient(sys.argv[1]), grpcclient.InferenceServerClient(sys.argv[2])):
    client.load_model("other", headers=key)
    client.unload_model("other", headers=key)
    client.load_model("other", headers=key)
    try:
        client.unload_model("other")
        sys.exit("unload without the key was answered")
    except InferenceServerException as e:
        assert e.status() in ("403", "StatusCode.PERMISSION_DENIED"), e.status()
PY
kill -TERM "$server"; wait "$server" || true; server=""
"$ortkit" serve --model-repository "$repo" --repository-api-key 'X=1' --http-port 0 >"$work/bad.log" 2>&1 &&
  fail "--repository-api-key without --repository-api started"
grep -q -- '--repository-api-key goes with --repository-api' "$work/bad.log" || fail "$(cat "$work/bad.log")"

# Startup errors name the flag.
"$ortkit" serve --model-repository "$repo" --load-model other --http-port 0 >"$work/bad.log" 2>&1 && fail "--load-model without explicit started"
grep -q -- '--model-control explicit' "$work/bad.log" || fail "no hint to --model-control explicit: $(cat "$work/bad.log")"
"$ortkit" serve --model-repository "$repo" --model-control explicit --load-model nowhere --http-port 0 >"$work/bad.log" 2>&1 &&
  fail "--load-model nowhere started"
grep -q "no model 'nowhere'" "$work/bad.log" || fail "unknown --load-model not named: $(cat "$work/bad.log")"
echo "PASS: repository extension through tritonclient (http+grpc) against ortkit serve"
