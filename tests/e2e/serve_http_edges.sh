#!/usr/bin/env bash
# HTTP/1.1 edges of ortkit serve's Beast front end (~25 s), driven over raw sockets by
# tests/python/serve_http_edges.py: pipelining, HTTP/1.0, Connection: close, chunked bodies,
# Expect: 100-continue (raw and curl), 405/404/431/400/413 with the connection closed cleanly,
# the idle timeout on a client stalled mid-header, the connection limit, a slow reader, and the
# --http-workers and --http-busy-poll-us modes answering like the default one, and a drain that a
# client which never closes cannot hold up.
source "$2/tests/support/serve_e2e.sh"
command -v curl >/dev/null || skip "curl not installed"
driver() { "$python" "$src/tests/python/serve_http_edges.py" "$@" --http "$http" --reference "$work/reference.json"; }

# stop_server: SIGTERM, which must end the server with 0.
stop_server() {
  kill -TERM "$server"
  set +e; wait "$server"; local rc=$?; set -e
  server=""
  [ "$rc" = 0 ] || fail "ortkit serve exited $rc after SIGTERM, expected 0"
}

serve_bert() { start_server --model "bert=$work/bert.onnx" --http-port 0 --grpc-port -1 --intra-op-threads 1 "$@"; }

"$bin/ortkit_make_model" bert-tiny "$work/bert.onnx"
status=0

echo "== flags out of range: exit 2 naming the flag and its range"
expect_rc 2 "$ortkit" serve --model "bert=$work/bert.onnx" --http-idle-timeout-s 0
expect_msg "http-idle-timeout-s: Value 0 not in range 1 to 86400"
expect_rc 2 "$ortkit" serve --model "bert=$work/bert.onnx" --http-max-connections -3
expect_msg "http-max-connections: Value -3 not in range 1 to"
expect_rc 2 "$ortkit" serve --model "bert=$work/bert.onnx" --http-busy-poll-us -1
expect_msg "http-busy-poll-us: Value -1 not in range 0 to 1000000"
expect_rc 2 "$ortkit" serve --model "bert=$work/bert.onnx" --grpc-busy-poll-us -1
expect_msg "grpc-busy-poll-us: Value -1 not in range 0 to 1000000"

echo "== protocol (--max-body-mb 2 --http-idle-timeout-s 2)"
serve_bert --max-body-mb 2 --http-idle-timeout-s 2
driver protocol --limit-mb 2 --idle-timeout-s 2 || status=1
stop_server

echo "== limits (--http-max-connections 4)"
serve_bert --http-max-connections 4 --http-idle-timeout-s 10
driver limits --max-connections 4 || status=1
stop_server

echo "== --http-workers"
serve_bert --http-workers
driver smoke --label=--http-workers || status=1
stop_server

echo "== --http-busy-poll-us 200"
serve_bert --http-busy-poll-us 200
driver smoke "--label=--http-busy-poll-us 200" || status=1
stop_server

echo "== SIGTERM with a request half received and a client that never closes"
serve_bert
driver drain --server-pid "$server" || status=1
set +e; wait "$server"; rc=$?; set -e
server=""
[ "$rc" = 0 ] || { echo "FAIL: ortkit serve exited $rc after SIGTERM, expected 0"; status=1; }

[ "$status" = 0 ] || fail "HTTP edge checks failed (see FAIL lines above)"
echo "PASS: serve HTTP edges"
