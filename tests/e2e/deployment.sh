#!/usr/bin/env bash
# The deployment recipe (docs/deployment.md) checked as far as it can be without Docker or Kubernetes:
# the build stage's variables, CMake options, target and COPY sources against this tree; the run
# stage's packages against every library the executable loads (Debian's archive metadata: dpkg -S,
# apt-cache); then the ENTRYPOINT and the KServe ServingRuntime's command run for real in the image's
# layout (the COPY'd files under a scratch root, its ENV), probed on the ports the YAML names, and
# stopped with SIGTERM. ORTKIT_DEPLOYMENT_DOC=FILE checks another markdown file instead (a broken copy
# shows each check failing). One line per check.
source "$2/tests/support/serve_e2e.sh"
for tool in curl ldd dpkg apt-cache; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed (the package checks need Debian)"; exit 77; }
done
# Absolute paths: the image's files are symbolic links to them.
src="$(cd "$src" && pwd)"
ortkit="$(cd "$(dirname "$ortkit")" && pwd)/$(basename "$ortkit")"
doc="${ORTKIT_DEPLOYMENT_DOC:-$src/docs/deployment.md}"
ok() { echo "ok    $*"; }

# facts NAME QUERY: the array NAME holds the lines of tests/python/deployment_recipe.py's QUERY.
facts() {
  local out
  out="$("$python" "$src/tests/python/deployment_recipe.py" "$doc" "$2")" || fail "cannot read the recipe in $doc"
  if [ -n "$out" ]; then mapfile -t "$1" <<<"$out"; else eval "$1=()"; fi
}
# in_list WORD LIST...: WORD is one of LIST.
in_list() { local word="$1" item; shift; for item in "$@"; do [ "$item" = "$word" ] && return 0; done; return 1; }
# flag_value FLAG ARGV...: the word after FLAG in ARGV (empty without FLAG).
flag_value() {
  local flag="$1"; shift
  while [ $# -gt 1 ]; do [ "$1" = "$flag" ] && { echo "$2"; return; }; shift; done
}

facts stages stages
facts copies copies
facts cmake_dirs cmake-dirs
[ ${#cmake_dirs[@]} = 1 ] || fail "the build stage should run cmake -B once, found ${#cmake_dirs[@]}"
IFS=$'\t' read -r recipe_source recipe_build <<<"${cmake_dirs[0]}"
build_stage="${stages[0]%%$'\t'*}"
context_dest=""
for copy in "${copies[@]}"; do
  IFS=$'\t' read -r stage from source dest <<<"$copy"
  [ "$stage" = "$build_stage" ] && [ "$from" = - ] && [ "$source" = . ] && context_dest="${dest%/}"
done
[ -n "$context_dest" ] || fail "the build stage does not COPY the source tree (COPY . DIR)"
ok "recipe: a ${#stages[@]}-stage Dockerfile and a ServingRuntime read from $doc"

# The tree the ortkit binary was built in stands for the recipe's cmake -B folder.
real_build="$(dirname "$ortkit")"
while [ "$real_build" != / ] && [ ! -f "$real_build/CMakeCache.txt" ]; do real_build="$(dirname "$real_build")"; done
[ -f "$real_build/CMakeCache.txt" ] || fail "no CMake build folder above $ortkit"
# host_path PATH: where a path of the build stage is here (its build folder, or the copied source tree).
host_path() {
  case "$1" in
    "$recipe_build" | "$recipe_build"/*) echo "$real_build${1#"$recipe_build"}" ;;
    "$context_dest" | "$context_dest"/*) echo "$src${1#"$context_dest"}" ;;
    *) return 1 ;;
  esac
}

# --- Build stage ------------------------------------------------------------------------------------
facts build_env build-env
for entry in "${build_env[@]}"; do
  IFS=$'\t' read -r var script <<<"$entry"
  file="$(host_path "$context_dest/$script")" && [ -f "$file" ] \
    || fail "build stage: '$var=... $script': no $script in the source tree"
  grep -qE "\\\$\{?$var\b" "$file" || fail "build stage: $script never reads $var (set by the recipe)"
  ok "build stage: $script reads $var"
done

facts programs build-programs
for program in "${programs[@]}"; do
  path="$(command -v "$program")" || fail "build stage runs $program, which is not installed here"
  package="$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -1 | cut -d: -f1)" || true
  [ -n "$package" ] || fail "build stage: no Debian package ships $path"
  sed -n '/^debian_packages=(/,/^)/p' "$src/scripts/setup.sh" | tr -s ' ()' '\n' | grep -qxF -- "$package" \
    || fail "build stage runs $program (Debian $package), which scripts/setup.sh does not install:" \
      "add $package to its debian_packages"
  ok "build stage: $program comes from $package, which scripts/setup.sh installs"
done

facts options cmake-options
for entry in "${options[@]}"; do
  IFS=$'\t' read -r name value <<<"$entry"
  grep -rqE --include=CMakeLists.txt --include='*.cmake' --exclude-dir='build*' --exclude-dir=.deps \
    "option\($name[[:space:]]|set\($name .*CACHE" "$src" \
    || fail "build stage: -D$name=$value is no option of the project's CMake files (misspelt?)"
  ok "build stage: -D$name=$value is a CMake option"
done

[ "$recipe_source" = "$context_dest" ] \
  || fail "build stage: cmake -S $recipe_source, but the source tree is copied to $context_dest"
case "$recipe_build/" in
  "$context_dest"/*)
    rel="${recipe_build#"$context_dest"/}"
    ignored=false
    if [ -f "$src/.dockerignore" ]; then
      while read -r pattern; do
        pattern="${pattern#/}"; pattern="${pattern%/}"
        # shellcheck disable=SC2053  # the pattern is a glob
        [ -n "$pattern" ] && [[ "$rel" == $pattern ]] && ignored=true
      done <"$src/.dockerignore"
    fi
    if [ -f "$src/$rel/CMakeCache.txt" ] && [ "$ignored" = false ]; then
      fail "build stage: cmake -B $recipe_build, but 'COPY . $context_dest' brings $src/$rel, whose CMakeCache.txt" \
        "was made for $src: cmake stops ('CMakeCache.txt directory ... is different');" \
        "build outside the copied tree (cmake -B /build)"
    fi ;;
esac
ok "build stage: cmake -S $recipe_source -B $recipe_build configures afresh (no stale CMakeCache.txt copied in)"

facts targets ninja-targets
[ ${#targets[@]} -gt 0 ] || fail "build stage: ninja builds no named target"
if [ -f "$real_build/build.ninja" ]; then
  target_outputs=()
  for target in "${targets[@]}"; do
    query="$(ninja -C "$real_build" -t query "$target" 2>&1)" \
      || fail "build stage: ninja target '$target' does not exist: $query"
    mapfile -t -O "${#target_outputs[@]}" target_outputs < <(sed -n 's/^    //p' <<<"$query")
  done
  ok "build stage: ninja target(s) ${targets[*]} exist and build ${target_outputs[*]}"
else
  target_outputs=()
  echo "skip  build stage: $real_build is not a Ninja build, its targets cannot be queried"
fi

# --- Run stage: the image's files under a scratch root ---------------------------------------------
root="$work/image"
run_stage="${stages[-1]%%$'\t'*}"
ort_version="$(sed -n 's/^ort_version="\(.*\)"$/\1/p' "$src/scripts/setup.sh")"
for copy in "${copies[@]}"; do
  IFS=$'\t' read -r stage from source dest <<<"$copy"
  [ "$stage" = "$run_stage" ] || continue
  if [ "$from" = - ]; then
    [ -e "$src/$source" ] || fail "run stage: 'COPY $source $dest': no $source in the build context $src," \
      "so docker build stops; mount it at run time instead (docker run -v)"
    continue
  fi
  host="$(host_path "${source%/}")" \
    || fail "run stage: 'COPY --from=$from $source': $source is neither in $recipe_build nor in $context_dest"
  [ -e "$host" ] || fail "run stage: 'COPY --from=$from $source $dest': the build stage has no $source (here: no $host)"
  if [[ "$source" == */.deps/onnxruntime-* ]] && [[ "$source" != */onnxruntime-"$ort_version"/* ]]; then
    fail "run stage: copies $source, but scripts/setup.sh installs ONNX Runtime $ort_version"
  fi
  if [ "${source#"$recipe_build"/}" != "$source" ] && [ ${#target_outputs[@]} -gt 0 ]; then
    in_list "${source#"$recipe_build"/}" "${target_outputs[@]}" \
      || fail "run stage: copies $source, which ninja ${targets[*]} does not build (it builds ${target_outputs[*]})"
  fi
  if [ -d "$host" ]; then
    mkdir -p "$root$dest" && cp -rs "$host/." "$root$dest/"
  else
    [[ "$dest" == */ ]] && dest="$dest$(basename "$source")"
    mkdir -p "$(dirname "$root$dest")" && ln -s "$host" "$root$dest"
  fi
  ok "run stage: COPY --from=$from $source (here $host) -> $dest"
done

# The image's ENV with its paths under the scratch root; Docker's default PATH unless it sets one.
facts env env
image_env=()
image_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
for entry in "${env[@]}"; do
  IFS=$'\t' read -r name value <<<"$entry"
  [ "$name" = PATH ] && image_path="$value"
  image_env+=("$name=$(sed "s#\(^\|:\)/#\1$root/#g" <<<"$value")")
done
# in_image PROGRAM: where the image's PATH finds PROGRAM under the scratch root.
in_image() {
  local dir; IFS=: read -ra dirs <<<"$image_path"
  for dir in "${dirs[@]}"; do [ -x "$root$dir/$1" ] && { echo "$root$dir/$1"; return 0; }; done
  return 1
}

facts entrypoint entrypoint
image_ortkit="$(in_image "${entrypoint[0]}")" \
  || fail "ENTRYPOINT runs '${entrypoint[0]}', which no COPY puts on the image's PATH ($image_path)"
ldd_out="$(env "${image_env[@]}" ldd "$image_ortkit")" || fail "ldd $image_ortkit failed"
! grep -q 'not found' <<<"$ldd_out" \
  || fail "in the image (${image_env[*]}) libraries are missing: $(grep 'not found' <<<"$ldd_out")"
libraries=(); copied=()
while read -r name arrow path _; do
  [ "$arrow" = "=>" ] || path="$name"      # the loader line: /lib64/ld-linux-x86-64.so.2 (0x...)
  [[ "$path" == /* ]] || continue          # linux-vdso.so.1
  case "$path" in "$root"/*) copied+=("${path#"$root"}") ;; *) libraries+=("$path") ;; esac
done <<<"$ldd_out"
[ ${#copied[@]} -gt 0 ] || fail "in the image ONNX Runtime is not loaded from what the recipe copies" \
  "(${image_env[*]}): $(grep onnxruntime <<<"$ldd_out")"
ok "run stage: with ${image_env[*]} the image's ortkit loads ${copied[*]}"

# --- Run stage packages ----------------------------------------------------------------------------
facts packages run-packages
# One apt-cache per question: each reads the whole archive index (about half a second).
known="$({ apt-cache show "${packages[@]}" 2>/dev/null || true; } | sed -n 's/^Package: //p')"
for package in "${packages[@]}"; do
  grep -qxF -- "$package" <<<"$known" \
    || fail "run stage: apt-get install $package: no such package in Debian (apt-cache show)"
done
ok "run stage: the ${#packages[@]} packages of apt-get install exist (${packages[*]})"

# dpkg -S knows the path a package ships: the name the loader found or the file it points to, in
# /lib or /usr/lib (one folder on merged-/usr systems).
candidates=()
for library in "${libraries[@]}"; do
  for path in "$library" "$(readlink -f "$library")"; do
    case "$path" in /usr/*) candidates+=("$path" "${path#/usr}") ;; *) candidates+=("$path" "/usr$path") ;; esac
  done
done
declare -A owner=()
while IFS= read -r line; do
  [[ "$line" == diversion* ]] && continue
  packages_of="${line%%: /*}"; path="/${line#*: /}"
  owner["$path"]="${packages_of%%[:,]*}"
done < <(dpkg -S "${candidates[@]}" 2>/dev/null || true)

closure() {
  apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
    --no-enhances "$@" | grep -v '^[ <]' | sort -u
}
closure "${packages[@]}" >"$work/pulled" &
pulled_job=$!
# debian:bookworm-slim is debootstrap's minbase: the Priority required packages, apt, and what they need.
mapfile -t required < <(apt-cache dumpavail | awk '/^Package:/ { p = $2 } /^Priority: required/ { print p }' | sort -u)
closure apt "${required[@]}" >"$work/slim"
wait "$pulled_job"
mapfile -t pulled <"$work/pulled"
mapfile -t slim <"$work/slim"
[ ${#pulled[@]} -gt 0 ] && [ ${#slim[@]} -gt 50 ] \
  || fail "apt-cache depends gave no dependency closure (${#pulled[@]} / ${#slim[@]} packages)"
declare -A missing=()  # package -> the libraries it would provide
listed=0; via_dependency=0; in_slim=0
for library in "${libraries[@]}"; do
  package=""
  real="$(readlink -f "$library")"
  for path in "$library" "${library#/usr}" "/usr$library" "$real" "${real#/usr}" "/usr$real"; do
    [ -n "${owner[$path]:-}" ] && { package="${owner[$path]}"; break; }
  done
  [ -n "$package" ] || fail "run stage: no Debian package ships $library (dpkg -S), so the image cannot install it"
  if in_list "$package" "${packages[@]}"; then listed=$((listed + 1))
  elif in_list "$package" "${pulled[@]}"; then via_dependency=$((via_dependency + 1))
  elif in_list "$package" "${slim[@]}"; then in_slim=$((in_slim + 1))
  else missing["$package"]+="${missing[$package]:+ }$(basename "$library")"
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  # To add: the missing packages that no other missing package pulls in.
  what=(); add=()
  declare -A pulls=()
  for package in "${!missing[@]}"; do pulls["$package"]="$(closure "$package")"; done
  for package in "${!missing[@]}"; do
    read -ra libs <<<"${missing[$package]}"
    more=""; [ ${#libs[@]} = 1 ] || more=" and $((${#libs[@]} - 1)) more"
    what+=("${libs[0]}$more from $package")
    needed=true
    for other in "${!missing[@]}"; do
      if [ "$other" != "$package" ] && grep -qxF -- "$package" <<<"${pulls[$other]}"; then needed=false; fi
    done
    if [ "$needed" = true ]; then add+=("$package"); fi
  done
  fail "run stage: ortkit loads $(IFS=';'; echo "${what[*]}" | sed 's/;/, /g')," \
    "which neither the apt-get install line (with what it pulls in) nor debian:bookworm-slim provides:" \
    "add ${add[*]} to the run stage's apt-get install"
fi
ok "run stage: the ${#libraries[@]} system libraries ortkit loads come from listed packages ($listed)," \
  "their dependencies ($via_dependency) or bookworm-slim ($in_slim)"

# --- The ENTRYPOINT and the ServingRuntime, run for real ---------------------------------------------
mkdir -p "$work/models/encoder"
"$bin/ortkit_make_model" demo-encoder "$work/models/encoder/model.onnx" >/dev/null
# The image's ENV around the image's ortkit: start_server runs "$ortkit" serve FLAGS.
printf '#!/bin/sh\nexec env %s %q "$@"\n' "$(printf '%q ' "${image_env[@]}")" "$image_ortkit" >"$work/in-image"
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
  in_image "$program" >/dev/null || fail "$what runs '$program', which is not on the image's PATH ($image_path)"
  [ "${2:-}" = serve ] || fail "$what runs '$program ${2:-}', not '$program serve'"
  shift 2
  local args=() flag port_flags=() ports=()
  while [ $# -gt 0 ]; do
    flag="$1"; shift
    case "$flag" in
      --model-repository) args+=("$flag" "$work/models"); shift ;;
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

# The ENTRYPOINT: its ports are the EXPOSE'd ones and those of the docker run example.
facts expose expose
facts published docker-run-ports
ports_in_argv=()
for i in "${!entrypoint[@]}"; do
  [[ "${entrypoint[$i]}" == --*-port ]] && ports_in_argv+=("${entrypoint[$((i + 1))]}")
done
[ "$(printf '%s\n' "${expose[@]}" | sort -u)" = "$(printf '%s\n' "${ports_in_argv[@]}" | sort -u)" ] \
  || fail "EXPOSE ${expose[*]}, but the ENTRYPOINT listens on ${ports_in_argv[*]}"
for entry in "${published[@]}"; do
  in_list "${entry#*$'\t'}" "${expose[@]}" \
    || fail "the docker run example publishes port ${entry#*$'\t'}, which the image does not EXPOSE (${expose[*]})"
done
ok "ENTRYPOINT: listens on the EXPOSE'd ports ${expose[*]}, which docker run publishes"
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
