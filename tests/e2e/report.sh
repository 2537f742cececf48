#!/usr/bin/env bash
# --report FILE.html end to end: check and doctor write one self-contained page, headless Chromium opens it
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
            assert name not in ("src", "href", "srcset", "action", "formaction", "poster", "data", "background"), \
                f"<{tag} {name}={value!r}> loads something"
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

# A page that cannot be written is refused before the work starts.
mkdir "$work/folder.html"
expect_rc 2 "$ortkit" check "$work/baked.onnx" --report "$work/folder.html"
expect_msg "--report"
echo "e2e report: ok"
