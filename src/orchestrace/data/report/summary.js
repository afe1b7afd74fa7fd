/* orchestrace report — many traces: measure distributions and the success-vs-cost Pareto plot. */
"use strict";
var OT = window.OT || (window.OT = {});
OT.PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#9c755f", "#e15759", "#ff9da7", "#edc948", "#bab0ac"];

OT.histogram = function (host, name, vals) {
  var card = OT.el("div", { class: "hist", "data-name": name }, null, host);
  OT.el("div", { class: "t", title: name }, name, card);
  var lo = Infinity, hi = -Infinity, sum = 0;
  vals.forEach(function (v) { lo = Math.min(lo, v); hi = Math.max(hi, v); sum += v; });
  var sorted = vals.slice().sort(function (a, b) { return a - b; }), med = sorted[Math.floor((sorted.length - 1) / 2)];
  OT.el("div", { class: "s" }, "n " + vals.length + " · mean " + OT.fmtNum(sum / vals.length) + " · median " + OT.fmtNum(med), card);
  var W = 210, H = 74, nb = Math.min(20, Math.max(1, Math.ceil(Math.sqrt(vals.length)) + 1));
  if (hi === lo) nb = 1;
  var bins = new Array(nb).fill(0), w = (hi - lo) / nb || 1, mx = 0;
  vals.forEach(function (v) { var b = Math.min(nb - 1, Math.floor((v - lo) / w)); bins[b]++; });
  bins.forEach(function (c) { mx = Math.max(mx, c); });
  var s = OT.svg("svg", { width: "100%", viewBox: "0 0 " + W + " " + (H + 16), preserveAspectRatio: "none" }, card);
  var bw = (W - 4) / nb;
  bins.forEach(function (c, k) {
    var h = c / mx * (H - 6);
    var r = OT.svg("rect", { x: 2 + k * bw + 0.5, y: H - h, width: Math.max(1, bw - 1), height: h, fill: "#4e79a7", rx: 1 }, s);
    OT.svg("title", {}, r).textContent = "[" + OT.fmtNum(lo + k * w) + ", " + OT.fmtNum(lo + (k + 1) * w) + "): " + c;
  });
  OT.svg("line", { x1: 0, x2: W, y1: H + 0.5, y2: H + 0.5, stroke: "#9aa1ab" }, s);
  OT.svg("text", { x: 2, y: H + 12 }, s).textContent = OT.fmtNum(lo);
  OT.svg("text", { x: W - 2, y: H + 12, "text-anchor": "end" }, s).textContent = OT.fmtNum(hi);
};

/* Groups by policy: mean cost (± 95% CI) and success rate (Wilson 95% interval). */
OT.paretoGroups = function (rows, costKey) {
  var groups = {}, order = [];
  rows.forEach(function (r) {
    var key = r.policy !== null && r.policy !== undefined ? r.policy : "(no policy)";
    var c = r.measures[costKey], s = r.success === null || r.success === undefined ? r.measures["e1/task_success"] : (r.success ? 1 : 0);
    if (c === undefined || s === undefined || s === null) return;
    if (!groups[key]) { groups[key] = { name: key, c: [], s: [] }; order.push(key); }
    groups[key].c.push(c); groups[key].s.push(s);
  });
  return order.map(function (k) {
    var g = groups[k], n = g.c.length, mc = g.c.reduce(function (a, b) { return a + b; }, 0) / n;
    var ps = g.s.reduce(function (a, b) { return a + b; }, 0) / n, vc = 0;
    g.c.forEach(function (v) { vc += (v - mc) * (v - mc); });
    var se = n > 1 ? Math.sqrt(vc / (n - 1) / n) : 0, z = 1.96, den = 1 + z * z / n;
    var cen = (ps + z * z / (2 * n)) / den, half = z * Math.sqrt(ps * (1 - ps) / n + z * z / (4 * n * n)) / den;
    return { name: g.name, n: n, cost: mc, costLo: mc - z * se, costHi: mc + z * se, succ: ps, sLo: Math.max(0, cen - half), sHi: Math.min(1, cen + half) };
  });
};
OT.paretoFront = function (pts) {
  var s = pts.slice().sort(function (a, b) { return a.cost - b.cost || b.succ - a.succ; }), best = -Infinity, front = [];
  s.forEach(function (p) { if (p.succ > best) { front.push(p); best = p.succ; } });
  return front;
};
OT.paretoPlot = function (host, rows) {
  var keys = {}; rows.forEach(function (r) { for (var k in r.measures) keys[k] = 1; });
  var costKey = ["cost/tokens", "e2/critical_steps", "cost/wall_clock_s", "cost/events"].filter(function (k) { return keys[k]; })[0];
  if (!costKey) costKey = Object.keys(keys).filter(function (k) { return k.indexOf("cost") === 0; })[0];
  if (!costKey) { OT.el("div", { class: "empty" }, "no cost measure to plot", host); return 0; }
  var pts = OT.paretoGroups(rows, costKey);
  if (!pts.length) { OT.el("div", { class: "empty" }, "no trace has both a success value and " + costKey, host); return 0; }
  var front = OT.paretoFront(pts), onFront = {}; front.forEach(function (p) { onFront[p.name] = 1; });
  var W = 620, H = 330, m = { l: 56, r: 150, t: 14, b: 42 }, pw = W - m.l - m.r, ph = H - m.t - m.b;
  var cmin = Infinity, cmax = -Infinity;
  pts.forEach(function (p) { cmin = Math.min(cmin, p.costLo, p.cost); cmax = Math.max(cmax, p.costHi, p.cost); });
  var pad = (cmax - cmin) * 0.08 || Math.abs(cmax) * 0.1 || 1; cmin -= pad; cmax += pad;
  function X(c) { return m.l + (c - cmin) / (cmax - cmin) * pw; }
  function Y(s) { return m.t + (1 - s) * ph; }
  var box = OT.el("div", { class: "pareto" }, null, host);
  var s = OT.svg("svg", { width: "100%", viewBox: "0 0 " + W + " " + H, id: "pareto", style: "max-width:" + W * 1.25 + "px" }, box);
  var step = OT.niceStep(cmax - cmin, 5);
  for (var t = Math.ceil(cmin / step) * step; t <= cmax; t += step) {
    OT.svg("line", { x1: X(t), x2: X(t), y1: m.t, y2: m.t + ph, stroke: "#eceef2" }, s);
    OT.svg("text", { x: X(t), y: m.t + ph + 14, "text-anchor": "middle" }, s).textContent = OT.fmtNum(t);
  }
  [0, 0.25, 0.5, 0.75, 1].forEach(function (v) {
    OT.svg("line", { x1: m.l, x2: m.l + pw, y1: Y(v), y2: Y(v), stroke: "#eceef2" }, s);
    OT.svg("text", { x: m.l - 6, y: Y(v) + 3.5, "text-anchor": "end" }, s).textContent = Math.round(v * 100) + "%";
  });
  OT.svg("rect", { x: m.l, y: m.t, width: pw, height: ph, fill: "none", stroke: "#c3c8d0" }, s);
  OT.svg("text", { x: m.l + pw / 2, y: H - 6, "text-anchor": "middle", style: "font-size:11px;fill:#1d2330" }, s).textContent = costKey + " (mean, 95% CI) →";
  OT.svg("text", { x: 14, y: m.t + ph / 2, transform: "rotate(-90 14 " + (m.t + ph / 2) + ")", "text-anchor": "middle", style: "font-size:11px;fill:#1d2330" }, s).textContent = "success rate (Wilson 95%) →";
  var d = front.map(function (p, k) { return (k ? "L" : "M") + X(p.cost) + "," + Y(p.succ); }).join(" ");
  if (front.length > 1) OT.svg("path", { d: d, fill: "none", stroke: "#1d2330", "stroke-width": 1.4, "stroke-dasharray": "5 3" }, s);
  pts.forEach(function (p, k) {
    var col = OT.PALETTE[k % OT.PALETTE.length], g = OT.svg("g", { class: "pt" }, s);
    OT.svg("line", { x1: X(p.costLo), x2: X(p.costHi), y1: Y(p.succ), y2: Y(p.succ), stroke: col, "stroke-width": 1.3 }, g);
    OT.svg("line", { x1: X(p.cost), x2: X(p.cost), y1: Y(p.sLo), y2: Y(p.sHi), stroke: col, "stroke-width": 1.3 }, g);
    OT.svg("circle", { cx: X(p.cost), cy: Y(p.succ), r: onFront[p.name] ? 6 : 4.5, fill: col, stroke: onFront[p.name] ? "#1d2330" : "#fff", "stroke-width": 1.5 }, g);
    OT.svg("title", {}, g).textContent = p.name + ": n=" + p.n + ", success " + (100 * p.succ).toFixed(1) + "%, " + costKey + " " + OT.fmtNum(p.cost);
    var ly = m.t + 10 + k * 17;
    if (k < 16) {
      OT.svg("circle", { cx: W - m.r + 16, cy: ly - 3.5, r: 4.5, fill: col }, s);
      OT.svg("text", { x: W - m.r + 26, y: ly, style: "fill:#1d2330" }, s).textContent = p.name + (onFront[p.name] ? " ★" : "");
    }
  });
  OT.el("div", { class: "hint" }, "★ on the Pareto front (no other policy is both cheaper and more successful); dashed: the front.", host);
  return pts.length;
};

OT.renderMany = function (root, P, check) {
  var head = OT.el("div", null, null, root);
  OT.el("h1", null, "orchestrace · " + P.meta.n_traces + " traces", head);
  var policies = {}; P.rows.forEach(function (r) { if (r.policy) policies[r.policy] = 1; });
  var ok = P.rows.filter(function (r) { return r.success === true; }).length;
  OT.el("div", { class: "sub" }, P.meta.source + " · " + Object.keys(policies).length + " policies · " + ok + "/" + P.rows.length + " successful", head);
  var c1 = OT.el("div", { class: "card" }, null, root); OT.el("h2", null, "Success versus cost, by policy", c1);
  check.pareto_points = OT.paretoPlot(c1, P.rows);
  var c2 = OT.el("div", { class: "card" }, null, root); OT.el("h2", null, "Distribution of each measure", c2);
  var grid = OT.el("div", { class: "hgrid", id: "hists" }, null, c2), keys = [], seen = {};
  P.rows.forEach(function (r) { for (var k in r.measures) if (!seen[k]) { seen[k] = 1; keys.push(k); } });
  keys.forEach(function (k) {
    var vals = P.rows.map(function (r) { return r.measures[k]; }).filter(function (v) { return typeof v === "number" && isFinite(v); });
    if (vals.length) OT.histogram(grid, k, vals);
  });
  check.histograms = grid.children.length;
  var c3 = OT.el("div", { class: "card" }, null, root); OT.el("h2", null, "Traces", c3);
  var byId = {}; (P.traces || []).forEach(function (t) { byId[t.meta.trace_id] = t; });
  if (P.traces && P.traces.length) OT.el("div", { class: "hint", style: "margin-bottom:6px" }, "click a row to open its timeline below", c3);
  var shown = ["cost/tokens", "e2/critical_steps", "e2/efficiency", "waste/share"].filter(function (k) { return seen[k]; });
  var tb = OT.el("table", { id: "traces" }, null, c3), hr = OT.el("tr", null, null, OT.el("thead", null, null, tb));
  ["trace", "policy", "success", "events"].concat(shown).forEach(function (h, k) { OT.el("th", { class: k >= 3 ? "num" : "" }, h, hr); });
  var body = OT.el("tbody", null, null, tb), detail = OT.el("div", { id: "detail" }, null, root);
  P.rows.slice(0, 500).forEach(function (r) {
    var tr = OT.el("tr", { class: byId[r.trace_id] ? "click" : "" }, null, body);
    OT.el("td", { class: "code" }, r.trace_id, tr); OT.el("td", null, r.policy || "–", tr);
    OT.el("td", null, r.success === null || r.success === undefined ? "–" : r.success ? "✓" : "✗", tr);
    OT.el("td", { class: "num" }, OT.fmtNum(r.events), tr);
    shown.forEach(function (k) { OT.el("td", { class: "num" }, OT.fmtNum(r.measures[k]), tr); });
    if (byId[r.trace_id]) tr.addEventListener("click", function () {
      Array.prototype.forEach.call(body.children, function (x) { x.classList.remove("sel"); });
      tr.classList.add("sel"); detail.innerHTML = ""; OT.renderTrace(detail, byId[r.trace_id], {});
      detail.scrollIntoView({ behavior: "smooth" });
    });
  });
  if (P.rows.length > 500) OT.el("div", { class: "hint" }, "… " + (P.rows.length - 500) + " more traces not listed", c3);
  check.rows = body.children.length;
};
