#include "ortkit/report/page_assets.h"

namespace ortkit {

std::string_view PageStyle() {
  return R"CSS(
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:1em 2em;color:#222;background:#fff}
h1{font-size:1.4em;margin:.2em 0}h2{border-bottom:1px solid #ddd;margin-top:1.6em}h3{font-size:1.05em;margin:.3em 0}
.model{font-family:monospace;color:#555;word-break:break-all}
.verdict{display:inline-block;font-weight:bold;font-size:1.2em;padding:.2em .8em;border-radius:4px;color:#fff}
.verdict.info{background:#2e7d32}.verdict.warning{background:#b26a00}.verdict.error{background:#c62828}
.counts{display:inline-block;margin-left:1em;color:#555}
.finding{border-left:5px solid #999;padding:.4em 1em;margin:1em 0;background:#fafafa}
.finding.error{border-color:#c62828}.finding.warning{border-color:#e09000}.finding.info{border-color:#1565c0}
.severity{text-transform:uppercase;font-size:.8em;color:#555}
.finding dl{display:grid;grid-template-columns:5em 1fr;gap:.2em .8em;margin:.5em 0}.finding dt{color:#666}.finding dd{margin:0}
.message,dd,pre,.scope-name{word-break:break-word;white-space:pre-wrap}
figure{margin:.5em 0;overflow:auto;max-height:640px;border:1px solid #e4e4e4;background:#fff}
figcaption,.note,.count{color:#666;font-size:.9em}
.graph text{font:11px monospace;text-anchor:middle;fill:#222}.graph .op{font-weight:bold}
.graph rect{fill:#eef3fb;stroke:#6b88b5}.graph .value rect{fill:#f1f1f1;stroke:#999}
.graph polyline{fill:none;stroke:#8a8a8a;stroke-width:1.2}.graph .edge text{text-anchor:start;fill:#555;font-size:10px}
.graph .node.focus rect{fill:#ffe3e0;stroke:#d32f2f;stroke-width:3}.graph .edge.focus polyline{stroke:#d32f2f;stroke-width:2.5}
.graph .node.hit rect{fill:#fff4c2;stroke:#e09000;stroke-width:3}
details{margin:.15em 0 .15em 1.2em}summary{cursor:pointer}.chunk-graph{overflow:auto;max-height:600px}
#search{width:100%;max-width:40em;padding:.4em;font-size:1em}#search-results{max-height:16em;overflow:auto}
.strip-figure{max-height:none;overflow-x:auto}.strip rect[data-node]{cursor:pointer}.strip rect[data-node]:hover{stroke:#222}
.strip .baseline{fill:#999}.strip .mark{fill:#d32f2f;stroke:#d32f2f}
.figures table{border-collapse:collapse;font-size:.92em}.figures th,.figures td{padding:.15em .8em;border-bottom:1px solid #eee;text-align:left}
.figures .num{text-align:right;font-variant-numeric:tabular-nums}
.grid{border-collapse:collapse;font-size:.92em}.grid th,.grid td{border:1px solid #ddd;padding:.2em .7em;text-align:center}
.grid td.pass{background:#e3f2e1}.grid td.fail{background:#fbd9d5}.grid td.nan{background:#f6c4f0}.grid td.skipped{background:#eee;color:#777}
.grid a{color:inherit}.cell-details{font-size:.9em}
#search-results button{font:12px monospace;border:none;background:none;color:#1565c0;cursor:pointer;text-align:left}
)CSS";
}

std::string_view PageSvgDefinitions() {
  return R"(<svg width="0" height="0" style="position:absolute"><defs><marker id="ortkit-arrow" viewBox="0 0 10 10" )"
         R"(refX="10" refY="5" markerUnits="userSpaceOnUse" markerWidth="8" markerHeight="8" orient="auto"><path d="M0,0L10,5L0,10z" fill="#8a8a8a"/>)"
         "</marker></defs></svg>\n";
}

std::string_view PageScript() {
  return R"JS(
(function () {
  "use strict";
  var source = document.getElementById("model-data");
  if (!source) return;
  var data = JSON.parse(source.textContent), nodes = data.nodes, scopes = data.scopes;
  var overlaySource = document.getElementById("overlay-data"), overlay = {};
  if (overlaySource) {
    var o = JSON.parse(overlaySource.textContent);
    o.nodes.forEach(function (v) { overlay[v[0]] = {value: v[1], fraction: v[2], title: o.title, unit: o.unit}; });
  }
  function shade(f) {
    function mix(a, b) { return Math.round(a + (b - a) * f); }
    return "rgb(" + mix(253, 183) + "," + mix(240, 28) + "," + mix(200, 28) + ")";
  }
  var SVG = "http://www.w3.org/2000/svg", BOX = 36;
  var outline = document.getElementById("outline");
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function svg(tag, attrs) {
    var e = document.createElementNS(SVG, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  }
  function shorten(text, n) { return text.length > n ? text.slice(0, n) + "\u2026" : text; }
  function drawChunk(chunk) {
    var pic = svg("svg", {"class": "graph", width: chunk.width, height: chunk.height,
                          viewBox: "0 0 " + chunk.width + " " + chunk.height});
    chunk.edges.forEach(function (e) {
      var points = [];
      for (var k = 2; k + 1 < e.length; k += 2) points.push(e[k] + "," + e[k + 1]);
      pic.appendChild(svg("polyline", {points: points.join(" "), "marker-end": "url(#ortkit-arrow)"}));
    });
    chunk.nodes.forEach(function (id) {
      var n = nodes[id], g = svg("g", {"class": "node", id: "node-" + id});
      g.setAttribute("data-node", n[0]);
      var title = svg("title", {}), measured = overlay[id];
      title.textContent = n[2] + (measured ? "\n" + measured.title + ": " + measured.value.toPrecision(3) + (measured.unit ? " " + measured.unit : "") : "");
      g.appendChild(title);
      var box = svg("rect", {x: n[5], y: n[6], width: n[7], height: BOX, rx: 5});
      if (measured) { box.style.fill = shade(measured.fraction); g.classList.add("measured"); }
      g.appendChild(box);
      var op = svg("text", {x: n[5] + n[7] / 2, y: n[6] + 14, "class": "op"}); op.textContent = n[1]; g.appendChild(op);
      var name = svg("text", {x: n[5] + n[7] / 2, y: n[6] + 28}); name.textContent = shorten(n[0], 24); g.appendChild(name);
      pic.appendChild(g);
    });
    var wrap = el("div", "chunk-graph"); wrap.appendChild(pic); return wrap;
  }
  function openChunk(d, chunk) {
    if (d.dataset.filled) return;
    d.dataset.filled = "1"; d.appendChild(drawChunk(chunk));
  }
  function fill(container, i) {
    if (container.dataset.filled) return;
    container.dataset.filled = "1";
    var s = scopes[i];
    s.children.forEach(function (c) { container.appendChild(scopeDetails(c)); });
    s.chunks.forEach(function (chunk, k) {
      var d = el("details", "chunk"); d.dataset.chunk = k;
      var label = chunk.nodes.length + " node" + (chunk.nodes.length === 1 ? "" : "s") + (i === 0 ? " at the top level" : " of this scope");
      if (s.chunks.length > 1) label += " (part " + (k + 1) + " of " + s.chunks.length + ")";
      d.appendChild(el("summary", null, label));
      d.addEventListener("toggle", function () { if (d.open) openChunk(d, chunk); });
      container.appendChild(d);
    });
  }
  function scopeDetails(i) {
    var s = scopes[i], d = el("details", "scope"), summary = el("summary");
    d.dataset.scope = i;
    summary.appendChild(el("span", "scope-name", s.name));
    summary.appendChild(el("span", "count", " " + s.count + " node" + (s.count === 1 ? "" : "s")));
    d.appendChild(summary);
    d.addEventListener("toggle", function () { if (d.open) fill(d, i); });
    return d;
  }
  function child(container, key, value) {
    for (var c = container.firstElementChild; c; c = c.nextElementSibling)
      if (c.dataset && c.dataset[key] === String(value)) return c;
    return null;
  }
  function reveal(id) {
    var n = nodes[id], chain = [], container = outline;
    for (var s = n[3]; s > 0; s = scopes[s].parent) chain.unshift(s);
    chain.forEach(function (s) { container = child(container, "scope", s); container.open = true; fill(container, s); });
    var d = child(container, "chunk", n[4]);
    d.open = true; openChunk(d, scopes[n[3]].chunks[n[4]]);
    document.querySelectorAll(".node.hit").forEach(function (h) { h.classList.remove("hit"); });
    var g = document.getElementById("node-" + id);
    g.classList.add("hit"); g.scrollIntoView({block: "center"});
  }
  fill(outline, 0);
  document.querySelectorAll(".strip rect[data-node]").forEach(function (r) {
    var id = Number(r.getAttribute("data-node"));
    if (id < nodes.length) r.addEventListener("click", reveal.bind(null, id));
  });
  var search = document.getElementById("search"), results = document.getElementById("search-results");
  search.addEventListener("input", function () {
    var q = search.value.toLowerCase(), shown = 0;
    results.textContent = "";
    if (!q) return;
    for (var i = 0; i < nodes.length && shown < 50; i++) {
      if (nodes[i][0].toLowerCase().indexOf(q) < 0 && nodes[i][1].toLowerCase() !== q) continue;
      var li = el("li"), b = el("button", null, nodes[i][0] + " (" + nodes[i][1] + ")");
      b.type = "button"; b.addEventListener("click", reveal.bind(null, i));
      li.appendChild(b); results.appendChild(li); shown++;
    }
    if (!shown) results.appendChild(el("li", "note", "no node matches"));
  });
})();
)JS";
}

}  // namespace ortkit
