#!/usr/bin/env bash
# The deployment files checked without a cluster: the KServe manifests (deploy/kserve/) against KServe 0.15.2's
# own CRD schemas with kubeconform (strict; both from the Go module proxy, pinned by scripts/setup.sh), and a
# misspelt copy of each refused; docs/deployment.md quoting the Dockerfile and the manifests word for word; the
# install tree the image copies (cmake --install --component runtime) loading ONNX Runtime from beside itself;
# then the Dockerfile's ENTRYPOINT and the ServingRuntime's command run for real from that tree, the latter on
# a model repository laid out as KServe's storage initializer writes it under /mnt/models (the objects below
# the InferenceService's storageUri, their paths kept), probed on the ports the YAML names, and stopped with
# SIGTERM. tests/e2e/container.sh builds and runs the image itself. One line per check.
source "$2/tests/support/serve_e2e.sh"
src="$(cd "$src" && pwd)"
build_dir="$(cd "$(dirname "$ortkit")/.." && pwd)"
kserve="$src/.deps/kserve-0.15.2"
ok() { echo "ok    $*"; }

# facts NAME QUERY...: the array NAME holds the lines of tests/python/deployment_recipe.py's QUERY.
facts() {
  local name="$1" out; shift
  out="$("$python" "$src/tests/python/deployment_recipe.py" "$src" "$@")" || fail "deployment files: $out"
  if [ -n "$out" ]; then mapfile -t "$name" <<<"$out"; else eval "$name=()"; fi
}
# flag_value FLAG ARGV...: the word after FLAG in ARGV (empty without FLAG).
flag_value() {
  local flag="$1"; shift
  while [ $# -gt 1 ]; do [ "$1" = "$flag" ] && { echo "$2"; return; }; shift; done
}

# --- The manifests against KServe's CRD schemas --------------------------------------------------------
[ -x "$kserve/bin/kubeconform" ] && [ -f "$kserve/schemas/servingruntime_v1alpha1.json" ] \
  || fail "no kubeconform or KServe CRD schemas in $kserve: scripts/setup.sh installs them"
# kubeconform_summary FILE...: its summary line, strict, against the pinned schemas only.
kubeconform_summary() {
  "$kserve/bin/kubeconform" -strict -summary \
    -schema-location "$kserve/schemas/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json" "$@" 2>&1 | tail -1 || true
}
manifests=("$src"/deploy/kserve/*.yaml)
summary="$(kubeconform_summary "${manifests[@]}")"
[[ "$summary" == *"Valid: ${#manifests[@]}, Invalid: 0, Errors: 0, Skipped: 0"* ]] \
  || fail "kubeconform -strict against KServe 0.15.2's CRDs: $("$kserve/bin/kubeconform" -strict \
    -schema-location "$kserve/schemas/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json" "${manifests[@]}" 2>&1)"
ok "kubeconform -strict: ${manifests[*]##*/} valid against KServe 0.15.2's CRD schemas"
sed 's/protocolVersions:/protocolVersion:/' "$src/deploy/kserve/servingruntime.yaml" >"$work/misspelt-runtime.yaml"
sed 's/storageUri:/storageURI:/' "$src/deploy/kserve/inferenceservice.yaml" >"$work/misspelt-service.yaml"
for broken in misspelt-runtime misspelt-service; do
  summary="$(kubeconform_summary "$work/$broken.yaml")"
  [[ "$summary" == *"Invalid: 1"* ]] || fail "kubeconform passed $broken.yaml, a copy with a misspelt key: $summary"
done
ok "kubeconform refuses a copy of each with a misspelt key"
facts runtime_name runtime-name
facts storage storage
IFS=$'\t' read -r runtime_ref model_format storage_uri <<<"${storage[0]}"
IFS=$'\t' read -r runtime_defined runtime_format <<<"${runtime_name[0]}"
[ "$runtime_ref" = "$runtime_defined" ] && [ "$model_format" = "$runtime_format" ] \
  || fail "the InferenceService asks for runtime $runtime_ref / format $model_format, the ServingRuntime is" \
    "$runtime_defined / $runtime_format"
ok "the InferenceService names the ServingRuntime ($runtime_ref) and its model format ($model_format)"

"$python" "$src/tests/python/deployment_recipe.py" "$src" doc-quotes "$src/docs/deployment.md" >"$work/quotes" 2>&1 \
  || fail "$(cat "$work/quotes")"
ok "docs/deployment.md quotes the Dockerfile and the manifests as they are"

# --- The image's install tree ----------------------------------------------------------------------------
facts image_path path
facts image_user user
facts runtime_user runtime-user
[ "${runtime_user[0]}" = "${image_user[0]}" ] \
  || fail "the ServingRuntime runs as user ${runtime_user[0]}, the image's USER is ${image_user[0]}"
ok "the ServingRuntime's runAsUser is the image's USER (${image_user[0]})"
root="$work/image"
cmake --install "$build_dir" --prefix "$root/opt/ortkit" --component runtime >/dev/null \
  || fail "cmake --install --component runtime failed"
grep -q 'COPY ortkit/ /opt/ortkit/' "$src/Dockerfile" || fail "the Dockerfile does not COPY the install tree to /opt/ortkit"
libraries="$(ldd "$root/opt/ortkit/bin/ortkit")"
grep -q "=> $root/opt/ortkit/bin/../lib/libonnxruntime.so" <<<"$libraries" \
  || fail "the installed ortkit does not load ONNX Runtime from beside itself: $(grep onnxruntime <<<"$libraries")"
ok "the install tree the image copies loads ONNX Runtime from its own lib/ (RUNPATH \$ORIGIN/../lib)"
# in_image PROGRAM: where the image's PATH finds PROGRAM in the install tree.
in_image() {
  local dir; IFS=: read -ra dirs <<<"${image_path[0]}"
  for dir in "${dirs[@]}"; do [ -x "$root$dir/$1" ] && { echo "$root$dir/$1"; return 0; }; done
  return 1
}
image_ortkit="$(in_image ortkit)" || fail "no ortkit on the image's PATH (${image_path[0]})"

# A repository as KServe's storage initializer writes it: every object below the storageUri, its path kept.
bucket="$work/bucket"
uri_path="${storage_uri#*://}"
mkdir -p "$bucket/$uri_path/encoder/1"
"$bin/ortkit_make_model" demo-encoder "$bucket/$uri_path/encoder/1/model.onnx" >/dev/null
echo '{"instances": 1}' >"$bucket/$uri_path/encoder/config.json"
mkdir -p "$work/mnt/models"
(cd "$bucket/$uri_path" && find . -type f | while read -r key; do
  mkdir -p "$work/mnt/models/$(dirname "$key")" && cp "$key" "$work/mnt/models/$key"; done)
ok "storage initializer: $storage_uri copied to /mnt/models ($(cd "$work/mnt/models" && find . -type f | sort | tr '\n' ' '))"

# --- The ENTRYPOINT and the ServingRuntime, run for real ---------------------------------------------
# The image's ortkit: start_server runs "$ortkit" serve FLAGS.
printf '#!/bin/sh\nexec %q "$@"\n' "$image_ortkit" >"$work/in-image"
chmod +x "$work/in-image"

facts probes probes
facts prometheus prometheus
IFS=$'\t' read -r metrics_port metrics_path <<<"${prometheus[0]}"
status_of() { curl -s -o "$work/body" -w '%{http_code}' --max-time 5 "$@" || true; }

# serve_recipe WHAT ARGV...: runs ARGV (`ortkit serve ...`) with the model repository, host and ports
# made local (ports 0: the server picks them and prints them); declare -A real_port maps each port
# of ARGV to the one it got.
declare -A real_port
serve_recipe() {
  local what="$1" program="$2"; shift
  in_image "$program" >/dev/null || fail "$what runs '$program', which is not on the image's PATH (${image_path[0]})"
  [ "${2:-}" = serve ] || fail "$what runs '$program ${2:-}', not '$program serve'"
  shift 2
  local args=() flag port_flags=() ports=()
  while [ $# -gt 0 ]; do
    flag="$1"; shift
    case "$flag" in
      --model-repository)
        case "$1" in
          /models) args+=("$flag" "$work/mnt/models") ;;      # the Dockerfile's mount point
          /mnt/models) args+=("$flag" "$work/mnt/models") ;;  # KServe's
          *) fail "$what serves the repository $1, which neither the image nor KServe provides" ;;
        esac
        shift ;;
      --host) args+=("$flag" 127.0.0.1); shift ;;
      --*-port) args+=("$flag" 0); port_flags+=("$flag"); ports+=("$1"); shift ;;
      *) args+=("$flag") ;;
    esac
  done
  echo "run   $what: $program serve ${args[*]}"
  ortkit="$work/in-image" start_server "${args[@]}"
  local line; line="$(grep '^listening ' "$work/serve.log")"
  grep -q ' models=encoder$' <<<"$line" || fail "$what: the repository's model is not served: $line"
  real_port=()
  local i key
  for i in "${!ports[@]}"; do
    key="${port_flags[$i]#--}"; key="${key%-port}"
    real_port["${ports[$i]}"]="$(grep -o " $key=[^ ]*" <<<"$line" | cut -d: -f2)"
    [ -n "${real_port[${ports[$i]}]}" ] || fail "$what: ${port_flags[$i]} ${ports[$i]} opened no port: $line"
  done
  local here=(); for i in "${!ports[@]}"; do here+=("${real_port[${ports[$i]}]}"); done
  ok "$what: $program serve on ports ${ports[*]} (here ${here[*]}) serves the repository"
}
# probe WHAT PORT PATH: GET PATH on the real port of PORT answers 200.
probe() {
  local port="${real_port[$2]:-}"
  [ -n "$port" ] || fail "$1: port $2 is none of the ports the command opens (${!real_port[*]})"
  local got; got="$(status_of "http://127.0.0.1:$port$3")"
  [ "$got" = 200 ] || fail "$1: GET $3 on port $2: status $got, expected 200: $(head -c 300 "$work/body")"
}
# stop WHAT: SIGTERM drains and exits 0, as the docs promise for docker stop and pod termination.
stop() {
  kill -TERM "$server"
  local rc=0; wait "$server" || rc=$?
  server=""
  [ "$rc" = 0 ] || fail "$1: SIGTERM: exit $rc, expected 0"
  grep -q draining "$work/serve.log" || fail "$1: no draining message after SIGTERM"
  ok "$1: SIGTERM drains and exits 0"
}

# The ENTRYPOINT: its ports are the EXPOSE'd ones.
facts entrypoint entrypoint
facts expose expose
ports_in_argv=()
for i in "${!entrypoint[@]}"; do
  [[ "${entrypoint[$i]}" == --*-port ]] && ports_in_argv+=("${entrypoint[$((i + 1))]}")
done
[ "$(printf '%s\n' "${expose[@]}" | sort -u)" = "$(printf '%s\n' "${ports_in_argv[@]}" | sort -u)" ] \
  || fail "EXPOSE ${expose[*]}, but the ENTRYPOINT listens on ${ports_in_argv[*]}"
ok "ENTRYPOINT: listens on the EXPOSE'd ports ${expose[*]}"
serve_recipe ENTRYPOINT "${entrypoint[@]}"
entry_http="$(flag_value --http-port "${entrypoint[@]}")"
entry_metrics="$(flag_value --metrics-port "${entrypoint[@]}")"
for entry in "${probes[@]}"; do
  IFS=$'\t' read -r kind path _ <<<"$entry"
  probe "ENTRYPOINT" "$entry_http" "$path"
done
probe "ENTRYPOINT" "${entry_metrics:-$entry_http}" "$metrics_path"
ok "ENTRYPOINT: the probes' paths on --http-port $entry_http and $metrics_path on port" \
  "${entry_metrics:-$entry_http} answer 200"
stop ENTRYPOINT

# The ServingRuntime: containerPort is --http-port; the probes and the Prometheus annotation hit the
# ports they name.
facts runtime_argv runtime-argv
facts container_ports container-ports
runtime_http="$(flag_value --http-port "${runtime_argv[@]}")"
[ ${#container_ports[@]} -gt 0 ] || fail "ServingRuntime: the container declares no containerPort"
IFS=$'\t' read -r container_port _ <<<"${container_ports[0]}"
[ "$container_port" = "$runtime_http" ] \
  || fail "ServingRuntime: containerPort $container_port, but the args say --http-port $runtime_http"
ok "ServingRuntime: containerPort $container_port is --http-port"
serve_recipe ServingRuntime "${runtime_argv[@]}"
# Knative speaks HTTP/2 cleartext (prior knowledge) to a port named h2c, HTTP/1.1 to any other.
for entry in "${container_ports[@]}"; do
  IFS=$'\t' read -r port name <<<"$entry"
  want=1.1; version_flag=--http1.1
  [ "$name" = h2c ] && { want=2; version_flag=--http2-prior-knowledge; }
  got="$(curl -s -o /dev/null -w '%{http_version}' "$version_flag" --max-time 5 \
    "http://127.0.0.1:${real_port[$port]:-0}/v2/health/live" || true)"
  [ "$got" = "$want" ] || fail "ServingRuntime: containerPort $port (name $name) gets HTTP/$want from Knative," \
    "but ortkit does not answer it there (curl got '$got'): name a REST port http1 or nothing, h2c only a gRPC one"
  ok "ServingRuntime: containerPort $port (name $name) answers HTTP/$want, as Knative will speak to it"
done
for entry in "${probes[@]}"; do
  IFS=$'\t' read -r kind path port <<<"$entry"
  probe "ServingRuntime $kind" "$port" "$path"
  ok "ServingRuntime: $kind GET $path on port $port answers 200"
done
probe "ServingRuntime prometheus" "$metrics_port" "$metrics_path"
grep -q '^# TYPE ortkit_' "$work/body" \
  || fail "ServingRuntime: $metrics_path on port $metrics_port holds no ortkit metrics"
ok "ServingRuntime: prometheus.kserve.io $metrics_path on port $metrics_port answers Prometheus text"
stop ServingRuntime
echo "deployment: ok"
