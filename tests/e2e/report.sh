#!/usr/bin/env bash
# --report FILE.html end to end: check, doctor, validate --localize and bench --profile write one self-contained page, headless Chromium opens it
# from disk, and the rendered DOM holds the finding, its node highlighted in the graph around it, and the
# model outline its script built; the page references nothing outside itself.
source "$2/tests/support/e2e.sh"
chromium="$(command -v chromium || true)"
[ -n "$chromium" ] || skip "no chromium (scripts/setup.sh installs Debian's chromium package)"

"$bin/ortkit_make_model" demo-encoder "$work/baked.onnx" --baked-batch 2

# render PAGE DOM: the DOM after the page's script ran, from a headless Chromium with no network use.
render() {
  timeout 120 "$chromium" --headless --disable-gpu --no-sandbox --no-first-run --user-data-dir="$work/profile" \
    --dump-dom "file://$1" >"$2" 2>"$work/chromium.log" || { cat "$work/chromium.log" >&2; fail "chromium could not open $1"; }
}

# self_contained PAGE: no attribute or style that loads anything, and a policy that forbids every fetch.
self_contained() {
  python3 - "$1" <<'PY'
import html.parser, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
assert "default-src 'none'" in page, "no content security policy"
class Tags(html.parser.HTMLParser):  # script and style bodies are raw text to it: only real attributes are seen
    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            assert name not in ("src", "srcset", "action", "formaction", "poster", "data", "background"), \
                f"<{tag} {name}={value!r}> loads something"
            assert name != "href" or (value or "").startswith("#"), f"<{tag} {name}={value!r}> leaves the page"
            assert not (value or "").lower().startswith(("http:", "https:", "//", "javascript:")), f"<{tag} {name}={value!r}>"
Tags().feed(page)
assert not re.findall(r"url\((?!#)", page), "a style loads something"
assert "@import" not in page and "fetch(" not in page and "XMLHttpRequest" not in page and "import(" not in page
PY
}

expect_rc 0 "$ortkit" check "$work/baked.onnx" --report "$work/check.html"
expect_msg "graph.baked-batch-reshape"
self_contained "$work/check.html" || fail "check's page references something outside itself"
render "$work/check.html" "$work/check.dom"
grep -q 'class="node focus" data-node="context"' "$work/check.dom" || fail "the Reshape 'context' is not highlighted"
grep -q '<code>graph.baked-batch-reshape</code>' "$work/check.dom" || fail "the finding's code is not on the page"
grep -q 'looks like the batch size of the traced example' "$work/check.dom" || fail "the finding's message is not on the page"
grep -q 'so the batch size follows the input' "$work/check.dom" || fail "the finding's fix is not on the page"
grep -q 'float32\[batch,seq_len,4,16\]' "$work/check.dom" || fail "edges carry no inferred types"
grep -q 'id="verdict" class="verdict warning">PASS<' "$work/check.dom" || fail "the verdict is not the text report's"
grep -q 'nodes at the top level' "$work/check.dom" || fail "the page's script did not build the model outline"

# doctor: the same facts as its text report, and a screenshot that is not blank.
expect_rc 1 "$ortkit" doctor "$work/baked.onnx" --no-sweep --runs 0 --report "$work/doctor.html"
self_contained "$work/doctor.html" || fail "doctor's page references something outside itself"
render "$work/doctor.html" "$work/doctor.dom"
verdict="$(grep -o 'verdict: [A-Z]*' "$work/out" | head -1 | cut -d' ' -f2)"
[ -n "$verdict" ] || { cat "$work/out" >&2; fail "no verdict line in doctor's text report"; }
grep -q "class=\"verdict [a-z]*\">$verdict<" "$work/doctor.dom" || fail "the page's verdict is not '$verdict'"
grep -q 'class="node focus" data-node="context"' "$work/doctor.dom" || fail "doctor's page does not highlight 'context'"
grep -q 'class="node focus" data-node="residual1"' "$work/doctor.dom" || fail "the runtime error's node is not highlighted"
timeout 120 "$chromium" --headless --disable-gpu --no-sandbox --no-first-run --user-data-dir="$work/profile" \
  --window-size=1200,1600 --screenshot="$work/doctor.png" "file://$work/doctor.html" 2>"$work/chromium.log" ||
  fail "no screenshot"
[ "$(stat -c %s "$work/doctor.png")" -gt 20000 ] || fail "the screenshot is blank ($(stat -c %s "$work/doctor.png") bytes)"

# validate --localize --report: a model whose every Mul drifts a little further from the reference's. The error
# rises along the graph until it leaves the tolerance; the page draws it node by node and marks where.
chain() {  # chain FACTOR_STEP [OUTPUTS]: y = x * 3^8, the k-th factor 3 * (1 + k * FACTOR_STEP), an initializer
  local inits="" body="  v0 = Identity(x)" outputs="float[batch, 8] y"
  for k in 1 2 3 4 5 6 7 8; do
    inits+="${inits:+, }float[1] c$k = {$(python3 -c "print(3 * (1 + $k * $1))")}"
    body+="
  v$k = Mul(v$((k - 1)), c$k)"
    [ -n "${2:-}" ] && outputs+=", float[batch, 8] v$k"
  done
  printf '<ir_version: 8, opset_import: ["" : 17]>\nchain (float[batch, 8] x) => (%s) <%s> {\n%s\n  y = Identity(v8)\n}\n' \
    "$outputs" "$inits" "$body"
}
# The reference: a data set of x and y from the exact chain, and beside them every intermediate value as
# NAME.pb, from the same chain with its values as outputs (y, v1, ..., v8) run on the same x.
chain 0 | "$bin/ortkit_make_model" from-text "$work/exact.onnx" || fail "the chain does not parse"
chain 0 expose | "$bin/ortkit_make_model" from-text "$work/exposed.onnx" || fail "the exposed chain does not parse"
chain 0.0002 | "$bin/ortkit_make_model" from-text "$work/drift.onnx" || fail "the drifting chain does not parse"
"$ortkit" run "$work/exact.onnx" --dim batch=2 --output-dir "$work/ref" --save-format pb >/dev/null ||
  fail "ortkit run could not write the reference"
"$ortkit" run "$work/exposed.onnx" --input "$work/ref/test_data_set_0" --output-dir "$work/values" --save-format pb \
  >/dev/null || fail "ortkit run could not write the intermediate values"
for k in 1 2 3 4 5 6 7 8; do cp "$work/values/test_data_set_0/output_$k.pb" "$work/ref/test_data_set_0/v$k.pb"; done
expect_rc 1 "$ortkit" validate "$work/drift.onnx" --reference "$work/ref/test_data_set_0" --localize \
  --report "$work/validate.html"
self_contained "$work/validate.html" || fail "validate's page references something outside itself"
render "$work/validate.html" "$work/validate.dom"
grep -q '<code>validate.diverges-at-node</code>' "$work/validate.dom" || fail "the localisation's finding is not on the page"
grep -q 'id="overlay"' "$work/validate.dom" || fail "no error along the graph"
grep -q 'class="mark" d="[^"]*"><title>the first diverging node: #3 Mul<' "$work/validate.dom" || fail "the first diverging node is not marked"
python3 - "$work/validate.html" <<'PY' || fail "the error does not rise along the graph"
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
data = json.loads(re.search(r'id="overlay-data">(.*?)</script>', page).group(1))
errors = [node[1] for node in data["nodes"]]
assert len(errors) >= 3, errors
assert all(a < b for a, b in zip(errors, errors[1:])), errors  # rising, node after node
PY

# The sweep as a grid: the model with a baked batch runs at batch 2 alone (without the check that splits the
# batch into rows, which fails there too); each other cell links to why.
expect_rc 1 "$ortkit" validate "$work/baked.onnx" --sweep batch=1,2,4 --no-batch-check --report "$work/grid.html"
render "$work/grid.html" "$work/grid.dom"
grep -q '<h2>The dynamic-shape sweep</h2>' "$work/grid.dom" || fail "no sweep grid on validate's page"
[ "$(grep -o '<td class="pass">' "$work/grid.dom" | wc -l)" = 1 ] || fail "the grid does not hold one passing cell"
[ "$(grep -o '<td class="fail"><a href="#cell-' "$work/grid.dom" | wc -l)" = 2 ] ||
  fail "the grid does not hold two failing cells linked to why"
grep -q '<li id="cell-0-0"><b>batch = 1</b>: runtime.shape-mismatch: ' "$work/grid.dom" ||
  fail "a failing cell's reason is not listed under the grid"

# bench --profile --report: the time of each node over the graph, and by operator type.
"$ortkit" bench "$work/baked.onnx" --batch 2 --iterations 20 --profile --profile-runs 5 \
  --profile-prefix "$work/trace" --report "$work/bench.html" >"$work/bench.out" 2>&1 ||
  { cat "$work/bench.out" >&2; fail "bench --profile --report"; }
self_contained "$work/bench.html" || fail "bench's page references something outside itself"
render "$work/bench.html" "$work/bench.dom"
grep -q 'Time per node: ' "$work/bench.dom" || fail "no time per node on bench's page"
grep -q '<h2>Time by operator type</h2>' "$work/bench.dom" || fail "no table by operator type"
grep -q '<rect x="[0-9.]*" y="[0-9.]*" width="[0-9.]*" height="[0-9.]*" fill="#[0-9a-f]*" data-node=' \
  "$work/bench.dom" || fail "the strip has no measured node"
grep -q 'ui.perfetto.dev' "$work/bench.dom" || fail "the profiler's trace is not named for Perfetto"

# A page that cannot be written is refused before the work starts.
mkdir "$work/folder.html"
expect_rc 2 "$ortkit" check "$work/baked.onnx" --report "$work/folder.html"
expect_msg "--report"
echo "e2e report: ok"
