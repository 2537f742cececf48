#!/usr/bin/env bash
# The serving image of the repository's Dockerfile, built and run for real with podman: scripts/container.sh
# packages this build (no debug information) over the base that scripts/setup.sh made with debootstrap (so
# nothing is downloaded here); the container runs as its non-root user with a read-only root file system and
# the model repository mounted read-only; tritonclient infers over HTTP and gRPC (tests/python/container_client.py),
# /metrics is read; a new version written into the mounted repository is loaded through the repository API
# and served; SIGTERM (podman stop) drains and exits 0.
# Cost: about 15 s to build the image from the cached base, 10 s to run.
source "$2/tests/support/e2e.sh"
need_python
for tool in podman runc; do command -v "$tool" >/dev/null || fail "$tool is not installed: scripts/setup.sh installs it"; done
build_dir="$(cd "$(dirname "$ortkit")/.." && pwd)"
image="localhost/ortkit-e2e:$$"
name="ortkit-e2e-$$"
podman=(podman --runtime runc)
cleanup() {
  "${podman[@]}" rm -f "$name" >/dev/null 2>&1 || true
  "${podman[@]}" rmi -f "$image" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
ok() { echo "ok    $*"; }
logs() { "${podman[@]}" logs "$name" 2>&1 | tail -20 >&2 || true; }
fail() { echo "FAIL: $*" >&2; echo "--- the container's log:" >&2; logs; exit 1; }

started=$SECONDS
BUILD_DIR="$build_dir" ORTKIT_IMAGE="$image" ORTKIT_CONTAINER_OFFLINE=1 "$src/scripts/container.sh" image \
  >"$work/build.log" 2>&1 || { tail -30 "$work/build.log" >&2; fail "scripts/container.sh image failed"; }
read -r _ image_bytes < <(ORTKIT_IMAGE="$image" "$src/scripts/container.sh" size | grep '^image ')
read -r _ binary_bytes < <(ORTKIT_IMAGE="$image" "$src/scripts/container.sh" size | grep '^ortkit ')
ok "image built in $((SECONDS - started)) s: $((image_bytes / 1000000)) MB, ortkit $((binary_bytes / 1000000)) MB (stripped)"
"${podman[@]}" run --rm --entrypoint sh "$image" -c '! dpkg -s libonnx1 >/dev/null 2>&1' \
  || fail "the image installs Debian's libonnx1, which ortkit does not load"

# The repository as the container sees it: world-readable (the image's user is not this one), mounted read-only.
mkdir -p "$work/models/encoder/1"
"$bin/ortkit_make_model" demo-encoder "$work/models/encoder/1/model.onnx" >/dev/null
chmod -R a+rX "$work/models"
"${podman[@]}" run -d --name "$name" --read-only -v "$work/models:/models:ro" \
  -p 127.0.0.1::8000 -p 127.0.0.1::8001 -p 127.0.0.1::8002 "$image" \
  --model-control explicit --load-model '*' --repository-api >/dev/null
port() { "${podman[@]}" port "$name" "$1/tcp" | head -1 | sed 's/.*://'; }
http="127.0.0.1:$(port 8000)"; grpc="127.0.0.1:$(port 8001)"; metrics="127.0.0.1:$(port 8002)"
for _ in $(seq 1 300); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "http://$http/v2/health/ready" || true)" = 200 ] && break
  [ "$("${podman[@]}" inspect -f '{{.State.Running}}' "$name")" = true ] || { fail "the container exited before ready"; }
  sleep 0.1
done
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://$http/v2/health/ready")" = 200 ] || { fail "not ready after 30 s"; }
ok "container ready: http $http, grpc $grpc, metrics $metrics"

[ "$("${podman[@]}" exec "$name" id -u)" = 65532 ] || fail "the server runs as $("${podman[@]}" exec "$name" id -u), not 65532"
! "${podman[@]}" exec "$name" sh -c 'touch /models/written 2>/dev/null' || fail "the model repository is writable"
! "${podman[@]}" exec "$name" sh -c 'touch /opt/ortkit/written 2>/dev/null' || fail "the root file system is writable"
ok "runs as user 65532; the repository and the root file system are read-only"

"$python" "$src/tests/python/container_client.py" --http "$http" --grpc "$grpc" --metrics "$metrics" \
  --model "$work/models/encoder/1/model.onnx" >"$work/client.log" 2>&1 \
  || { cat "$work/client.log" >&2; fail "tritonclient against the container failed"; }
cat "$work/client.log"

# A reload through the repository API: version 2 lands in the repository (read-only inside, written outside),
# the load answers once it serves, version 1 is retired by the policy (latest 1).
mkdir -p "$work/models/encoder/2"
"$bin/ortkit_make_model" demo-encoder "$work/models/encoder/2/model.onnx" >/dev/null
chmod -R a+rX "$work/models"
code="$(curl -s -o "$work/load.json" -w '%{http_code}' -X POST "http://$http/v2/repository/models/encoder/load")"
[ "$code" = 200 ] || fail "the load of version 2 answered $code: $(cat "$work/load.json")"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://$http/v2/models/encoder/versions/2/ready")" = 200 ] ||
  fail "version 2 is not ready after its load"
curl -s -X POST "http://$http/v2/repository/index" | grep -q '"state":"READY","version":"2"' ||
  fail "the index does not show version 2 READY: $(curl -s -X POST "http://$http/v2/repository/index")"
ok "version 2 loaded through the repository API and served"

"${podman[@]}" stop -t 40 "$name" >/dev/null
rc="$("${podman[@]}" inspect -f '{{.State.ExitCode}}' "$name")"
[ "$rc" = 0 ] || { fail "podman stop (SIGTERM): exit $rc, expected 0"; }
# The whole log first: grep -q would close the pipe early, and pipefail would count podman's SIGPIPE.
log="$("${podman[@]}" logs "$name" 2>&1)"
grep -q 'SIGTERM: draining' <<<"$log" || fail "no 'SIGTERM: draining' in the log"
ok "podman stop: SIGTERM drains and the server exits 0"
echo "container: ok ($((SECONDS - started)) s)"
