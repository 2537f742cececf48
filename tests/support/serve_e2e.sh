# Sourced by the e2e scripts that drive a real `ortkit serve` with Python clients. Expects $1 (the
# ortkit binary) and $2 (the source folder); sets ortkit, src, bin, python, work; exits 77 (skip)
# without the Python environment; stops the server and removes $work on exit.
source "$2/tests/support/e2e.sh"
need_python
server=""
cleanup() { if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$work/serve.log" ] && tail -20 "$work/serve.log" >&2; exit 1; }

# start_server FLAGS...: `ortkit serve FLAGS` in the background, logging to $work/serve.log; waits
# for its "listening" line and sets server (the pid), http and grpc (host:port, grpc empty when off).
start_server() {
  : >"$work/serve.log"  # before the background shell opens it: never read the previous server's port
  "$ortkit" serve "$@" >"$work/serve.log" 2>&1 &
  server=$!
  for _ in $(seq 1 300); do
    grep -q '^listening ' "$work/serve.log" && break
    kill -0 "$server" 2>/dev/null || fail "ortkit serve exited before listening"
    sleep 0.1
  done
  http="$(grep -o 'http=[^ ]*' "$work/serve.log" | head -1 | cut -d= -f2)"
  grpc="$(grep -o 'grpc=[^ ]*' "$work/serve.log" | head -1 | cut -d= -f2 || true)"
  [ -n "$http" ] || fail "no 'listening http=...' line"
}
