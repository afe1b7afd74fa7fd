/* orchestrace report — tables, event graph / spawn tree (SVG), credit, many-trace summary. */
"use strict";
var OT = window.OT || (window.OT = {});
OT.SVGNS = "http://www.w3.org/2000/svg";
OT.el = function (tag, attrs, text, parent) {
  var e = document.createElement(tag);
  if (attrs) for (var k in attrs) { if (k === "class") e.className = attrs[k]; else e.setAttribute(k, attrs[k]); }
  if (text !== undefined && text !== null) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
};
OT.svg = function (tag, attrs, parent) {
  var e = document.createElementNS(OT.SVGNS, tag);
  for (var k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
};

OT.legend = function (host, P) {
  var used = {}, ev = P.ev;
  for (var i = 0; i < ev.type.length; i++) used[ev.type[i]] = 1;
  var box = OT.el("div", { class: "legend" }, null, host);
  P.types.forEach(function (t, k) {
    if (!used[k]) return;
    var s = OT.el("span", null, null, box);
    OT.el("span", { class: "sw", style: "background:" + OT.COLORS[t] }, null, s);
    s.appendChild(document.createTextNode(t.replace("orchestrator_", "").replace("_", " ")));
  });
  [["sw crit", "critical path"], ["sw waste", "wasted work"], ["sw stop", "stop decision"]].forEach(function (p) {
    var s = OT.el("span", null, null, box); OT.el("span", { class: p[0] }, null, s); s.appendChild(document.createTextNode(p[1]));
  });
  var s = OT.el("span", null, null, box);
  OT.el("span", { class: "sw", style: "background:#111;height:2px;border-radius:0" }, null, s);
  s.appendChild(document.createTextNode("error"));
  return box;
};

/* Measures: grouped by namespace ("e2/speedup" → group "e2"). */
OT.GROUPS = {
  e1: "E1 · task success", e2: "E2 · parallelism & critical path", e3: "E3 · protocol overhead",
  e4: "E4 · error amplification", waste: "wasted work", safety: "safety", spawn: "spawn tree", cost: "cost"
};
OT.measuresTable = function (host, P) {
  var rows = P.measures || [];
  if (!rows.length) { OT.el("div", { class: "empty" }, "no measures", host); return 0; }
  var groups = {}, order = [];
  rows.forEach(function (r) {
    var name = r[0], cut = name.indexOf("/"), g = cut > 0 ? name.slice(0, cut) : "other";
    if (!groups[g]) { groups[g] = []; order.push(g); }
    groups[g].push([cut > 0 ? name.slice(cut + 1) : name, r[1], name]);
  });
  var cols = OT.el("div", { class: "mcols", id: "measures" }, null, host), n = 0;
  order.forEach(function (g) {
    var blk = OT.el("div", { class: "mgrp" }, null, cols);
    var tb = OT.el("table", null, null, blk), body = OT.el("tbody", null, null, tb);
    var tr = OT.el("tr", { class: "grp" }, null, body); OT.el("td", { colspan: 2 }, OT.GROUPS[g] || g, tr);
    groups[g].forEach(function (r) {
      var row = OT.el("tr", { class: "m", "data-name": r[2] }, null, body);
      OT.el("td", { class: "mname", title: r[2] }, r[0].replace(/_/g, " "), row);
      var td = OT.el("td", { class: "num" }, r[1] === null ? "unknown" : OT.fmtNum(r[1]), row);
      if (r[1] === null) td.style.color = "#8a93a3";
      n++;
    });
  });
  if (P.assumptions && P.assumptions.length) {
    OT.el("div", { class: "hint", style: "margin-top:10px;font-weight:600" }, "Assumptions", host);
    var ul = OT.el("ul", { class: "hint", style: "margin:2px 0 0;padding-left:18px" }, null, host);
    P.assumptions.forEach(function (a) { OT.el("li", null, a, ul); });
  }
  return n;
};

OT.chip = function (P, i) {
  var ty = P.types[P.ev.type[i]];
  var c = OT.el("span", { class: "chip", style: "background:" + OT.COLORS[ty], title: ty + " · " + P.lanes[P.ev.lane[i]].name }, P.ev.id[i]);
  return c;
};
OT.flowsList = function (host, P) {
  var flows = P.flows || [];
  if (!flows.length) { OT.el("div", { class: "empty" }, "no flow from untrusted content into a privileged call or the final output", host); return 0; }
  var more = null, total = Math.max(P.flows_total || 0, flows.length), shown = Math.min(flows.length, 50);
  flows.slice(0, 50).forEach(function (path, fi) {
    if (fi === 8) { more = OT.el("details", null, null, host); OT.el("summary", { class: "hint" }, (shown - 8) + " more flow(s) listed" + (total > shown ? " (of " + (total - 8).toLocaleString("en") + " more in all)" : ""), more); }
    var d = OT.el("div", { class: "flow" }, null, more || host);
    path.forEach(function (i, k) {
      if (k) OT.el("span", { class: "arrow" }, "→", d);
      d.appendChild(OT.chip(P, i));
    });
    var b = path[path.length - 1], kind = (P.flow_kinds && P.flow_kinds[fi]) || "privileged_call";
    OT.el("span", { class: "hint" }, "  ⇒ " + kind.replace(/_/g, " ").replace("+", " + ") + (P.ev.tool[b] >= 0 ? " (" + P.S[P.ev.tool[b]] + ")" : ""), d);
  });
  if (total > shown) OT.el("div", { class: "hint" }, "… and " + (total - shown).toLocaleString("en") + " more flow(s) not listed (" + total.toLocaleString("en") + " in all; the list keeps the first " + shown + ")", host);
  return flows.length;
};

/* Layered DAG (small traces): layer = longest edge-count path from a source. */
OT.dagView = function (host, P) {
  var ev = P.ev, n = ev.t.length, E = P.edges, F = OT.F;
  var indeg = new Int32Array(n), out = []; for (var i = 0; i < n; i++) out.push([]);
  for (var k = 0; k < E.src.length; k++) { out[E.src[k]].push(k); indeg[E.dst[k]]++; }
  var layer = new Int32Array(n), q = [], seen = new Uint8Array(n);
  for (i = 0; i < n; i++) if (!indeg[i]) q.push(i);
  for (var h = 0; h < q.length; h++) {
    var u = q[h]; seen[u] = 1;
    out[u].forEach(function (e) { var v = E.dst[e]; if (layer[u] + 1 > layer[v]) layer[v] = layer[u] + 1; if (--indeg[v] === 0) q.push(v); });
  }
  var nl = 0; for (i = 0; i < n; i++) { if (!seen[i]) layer[i] = nl; nl = Math.max(nl, layer[i] + 1); }
  var cols = []; for (i = 0; i < nl; i++) cols.push([]);
  for (i = 0; i < n; i++) cols[layer[i]].push(i);
  cols.forEach(function (c) { c.sort(function (a, b) { return ev.lane[a] - ev.lane[b] || ev.t[a] - ev.t[b]; }); });
  var maxRows = 0; cols.forEach(function (c) { maxRows = Math.max(maxRows, c.length); });
  var avail = Math.max(400, (host.clientWidth || 1000) - 40);
  var dx = Math.max(34, Math.min(130, (avail - 100) / Math.max(1, nl - 1))), dy = Math.max(20, Math.min(44, 420 / Math.max(1, maxRows)));
  var W = 60 + (nl - 1) * dx + 80, H = 30 + maxRows * dy + 10, pos = new Array(n);
  cols.forEach(function (c, x) { var off = (maxRows - c.length) * dy / 2; c.forEach(function (i, y) { pos[i] = [40 + x * dx, 28 + off + y * dy]; }); });
  var box = OT.el("div", { class: "graphbox" }, null, host);
  var s = OT.svg("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, id: "dag" }, box);
  var defs = OT.svg("defs", {}, s);
  [["a", "#aab1bc"], ["c", OT.CRIT]].forEach(function (m) {
    var mk = OT.svg("marker", { id: "ah-" + m[0], viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, markerUnits: "userSpaceOnUse", orient: "auto-start-reverse" }, defs);
    OT.svg("path", { d: "M0,1 L10,5 L0,9 z", fill: m[1] }, mk);
  });
  var critNext = {}; for (k = 0; k + 1 < P.crit.length; k++) critNext[P.crit[k] + ">" + P.crit[k + 1]] = 1;
  var r = 7;
  for (k = 0; k < E.src.length; k++) {
    var a = pos[E.src[k]], b = pos[E.dst[k]], crit = critNext[E.src[k] + ">" + E.dst[k]], et = P.edge_types[E.type[k]];
    var ang = Math.atan2(b[1] - a[1], b[0] - a[0]), bx = b[0] - (r + 2) * Math.cos(ang), by = b[1] - (r + 2) * Math.sin(ang);
    var mx = (a[0] + bx) / 2;
    var p = OT.svg("path", {
      d: "M" + a[0] + "," + a[1] + " C" + mx + "," + a[1] + " " + mx + "," + by + " " + bx + "," + by, fill: "none",
      stroke: crit ? OT.CRIT : et === "safety_flow" ? "#e8c22f" : "#aab1bc", "stroke-width": crit ? 2.2 : 1.1,
      "stroke-dasharray": et === "message" || et === "temporal" ? "4 3" : "none", "marker-end": "url(#ah-" + (crit ? "c" : "a") + ")"
    }, s);
    OT.svg("title", {}, p).textContent = ev.id[E.src[k]] + " → " + ev.id[E.dst[k]] + " (" + et + ")";
  }
  for (i = 0; i < n; i++) {
    var fl = ev.flags[i], ty = P.types[ev.type[i]], g = OT.svg("g", { class: "node", transform: "translate(" + pos[i][0] + "," + pos[i][1] + ")" }, s);
    if (fl & F.final) OT.svg("circle", { r: r + 4, fill: "none", stroke: "#1d2330", "stroke-width": 1.2 }, g);
    OT.svg("circle", {
      r: r, fill: OT.COLORS[ty], "fill-opacity": fl & F.wasted ? 0.35 : 1,
      stroke: fl & F.critical ? OT.CRIT : fl & F.wasted ? "#7d8592" : "#fff", "stroke-width": fl & F.critical ? 2.4 : 1.2,
      "stroke-dasharray": fl & F.wasted ? "2 2" : "none"
    }, g);
    if (fl & F.stop) OT.svg("rect", { x: -3, y: -3, width: 6, height: 6, fill: "#1d2330" }, g);
    if (n <= 120) OT.svg("text", { y: -r - 4, "text-anchor": "middle" }, g).textContent = ev.id[i];
    OT.svg("title", {}, g).textContent = ev.id[i] + " · " + ty + " · " + P.lanes[ev.lane[i]].name;
    (function (i, g) {
      g.addEventListener("mousemove", function (e) { OT.tip(OT.describe(P, i), e.clientX, e.clientY); });
      g.addEventListener("mouseleave", function () { OT.tip(null); });
    })(i, g);
  }
  return n;
};

/* Spawn tree (large traces): agents as a left-to-right tidy tree. */
OT.treeView = function (host, P) {
  var L = P.lanes.length, kids = [], roots = [], ev = P.ev, F = OT.F;
  for (var l = 0; l < L; l++) kids.push([]);
  P.lanes.forEach(function (ln, l) { if (ln.parent >= 0) kids[ln.parent].push(l); else roots.push(l); });
  var waste = new Float64Array(L), crit = new Float64Array(L);
  for (var i = 0; i < ev.t.length; i++) { if (ev.flags[i] & F.wasted) waste[ev.lane[i]]++; if (ev.flags[i] & F.critical) crit[ev.lane[i]]++; }
  var leaves = 0, depthMax = 0; P.lanes.forEach(function (ln, l) { if (!kids[l].length) leaves++; depthMax = Math.max(depthMax, ln.depth); });
  var dy = Math.max(12, Math.min(24, 520 / Math.max(1, leaves))), dx = 190, pos = new Array(L), next = 0;
  function place(l) {
    if (!kids[l].length) { pos[l] = [0, 20 + next * dy]; next++; }
    else { kids[l].forEach(place); pos[l] = [0, (pos[kids[l][0]][1] + pos[kids[l][kids[l].length - 1]][1]) / 2]; }
    pos[l][0] = 30 + P.lanes[l].depth * dx;
  }
  roots.forEach(place);
  var W = 30 + depthMax * dx + 200, H = 20 + next * dy + 10;
  var box = OT.el("div", { class: "graphbox" }, null, host);
  var s = OT.svg("svg", { width: W, height: H, id: "spawntree" }, box), maxN = 1;
  P.lanes.forEach(function (ln) { maxN = Math.max(maxN, ln.n); });
  for (l = 0; l < L; l++) if (P.lanes[l].parent >= 0) {
    var a = pos[P.lanes[l].parent], b = pos[l], mx = (a[0] + b[0]) / 2;
    OT.svg("path", { d: "M" + a[0] + "," + a[1] + " C" + mx + "," + a[1] + " " + mx + "," + b[1] + " " + b[0] + "," + b[1], fill: "none", stroke: crit[l] ? "rgba(209,52,63,.55)" : "#c3c8d0", "stroke-width": crit[l] ? 1.6 : 1 }, s);
  }
  for (l = 0; l < L; l++) {
    var ln = P.lanes[l], w = ln.n ? waste[l] / ln.n : 0, rr = Math.min(dy / 2 - 0.5, 3 + 6 * Math.sqrt(ln.n / maxN));
    var g = OT.svg("g", { transform: "translate(" + pos[l][0] + "," + pos[l][1] + ")" }, s);
    OT.svg("circle", { r: rr, fill: w > 0.5 ? "#b9bec6" : "#4e79a7", "fill-opacity": 1 - 0.6 * w, stroke: crit[l] ? OT.CRIT : "#fff", "stroke-width": crit[l] ? 2 : 1 }, g);
    OT.svg("text", { x: rr + 5, y: 3.5 }, g).textContent = ln.name + "  ·  " + ln.n + " ev" + (w > 0 ? "  ·  " + Math.round(100 * w) + "% wasted" : "");
    OT.svg("title", {}, g).textContent = ln.name + ": " + ln.n + " events, " + waste[l] + " wasted, " + crit[l] + " on the critical path";
  }
  return L;
};

/* Credit: diverging heat strip + sorted table. */
OT.divColor = function (v, m) {
  var x = m > 0 ? Math.max(-1, Math.min(1, v / m)) : 0, a = Math.abs(x);
  var c0 = [247, 247, 247], c1 = x >= 0 ? [27, 120, 55] : [118, 42, 131];
  return "rgb(" + c0.map(function (c, k) { return Math.round(c + (c1[k] - c) * Math.pow(a, 0.8)); }).join(",") + ")";
};
OT.creditView = function (host, C) {
  if (!C) return 0;
  OT.el("div", { class: "hint" }, "unit: " + C.unit + " · method: " + C.method + " · " + C.ids.length + " units · Σ = " + OT.fmtNum(C.values.reduce(function (a, b) { return a + b; }, 0)), host);
  (C.notes || []).forEach(function (t) { OT.el("div", { class: "hint" }, "note: " + t, host); });
  var m = 0; C.values.forEach(function (v) { m = Math.max(m, Math.abs(v)); });
  var strip = OT.el("div", { class: "strip", id: "creditstrip" }, null, host);
  C.ids.forEach(function (id, k) { OT.el("div", { style: "background:" + OT.divColor(C.values[k], m), title: id + ": " + OT.fmtNum(C.values[k]) }, null, strip); });
  var order = C.ids.map(function (_, k) { return k; }).sort(function (a, b) { return C.values[b] - C.values[a]; });
  var tb = OT.el("table", { id: "credit" }, null, host), hd = OT.el("tr", null, null, OT.el("thead", null, null, tb));
  OT.el("th", null, C.unit, hd); OT.el("th", { class: "num" }, "credit", hd); OT.el("th", null, "", hd);
  var body = OT.el("tbody", null, null, tb), shown = order.length > 40 ? order.slice(0, 20).concat(order.slice(-20)) : order;
  shown.forEach(function (k, j) {
    if (order.length > 40 && j === 20) { var gap = OT.el("tr", null, null, body); OT.el("td", { colspan: 3, class: "hint" }, "… " + (order.length - 40) + " more …", gap); }
    var tr = OT.el("tr", { class: "c" }, null, body), v = C.values[k];
    OT.el("td", { class: "code" }, C.ids[k], tr); OT.el("td", { class: "num" }, OT.fmtNum(v), tr);
    var td = OT.el("td", { style: "width:40%" }, null, tr);
    OT.el("span", { class: "bar", style: "width:" + (m > 0 ? Math.abs(v) / m * 100 : 0) + "%;background:" + OT.divColor(v, m) }, null, td);
  });
  return C.ids.length;
};
