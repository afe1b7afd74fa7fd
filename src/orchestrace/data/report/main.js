/* orchestrace report — boot: parse the embedded payload, render, write the self-check. */
"use strict";
var OT = window.OT || (window.OT = {});
OT.check = { errors: [], resources: [] };
OT.writeCheck = function () {
  var c = OT.check;
  try {
    c.resources = performance.getEntriesByType("resource").map(function (r) { return r.name; });
  } catch (e) { c.resources = ["<performance API unavailable>"]; }
  var el = document.getElementById("selfcheck");
  if (el) el.textContent = JSON.stringify(c);
};
window.addEventListener("error", function (e) { OT.check.errors.push(String(e.message || e.type) + (e.filename ? " @" + e.lineno : "")); OT.writeCheck(); });
window.addEventListener("unhandledrejection", function (e) { OT.check.errors.push("unhandled rejection: " + e.reason); OT.writeCheck(); });
document.addEventListener("securitypolicyviolation", function (e) { OT.check.errors.push("CSP blocked " + e.blockedURI); OT.writeCheck(); });
(function () {
  var orig = console.error;
  console.error = function () { OT.check.errors.push(Array.prototype.join.call(arguments, " ")); OT.writeCheck(); return orig.apply(console, arguments); };
})();

OT.renderTrace = function (root, P, check) {
  var m = P.meta, head = OT.el("div", null, null, root);
  var h1 = OT.el("h1", null, "Trace " + m.trace_id, head);
  var b = m.success === true ? ["ok", "success"] : m.success === false ? ["bad", "failure"] : ["unk", "outcome unknown"];
  OT.el("span", { class: "badge " + b[0] }, b[1], h1);
  var sub = OT.el("div", { class: "sub" }, null, head);
  sub.innerHTML = ["task <b>" + OT.esc(m.task_id) + "</b>", m.system ? "system <b>" + OT.esc(m.system) + "</b>" : "", m.topology ? "topology <b>" + OT.esc(m.topology) + "</b>" : "",
    m.policy ? "policy <b>" + OT.esc(m.policy) + "</b>" : "",
    "<b>" + OT.fmtNum(m.n_events) + "</b> events", "<b>" + OT.fmtNum(m.n_edges) + "</b> edges", "<b>" + m.n_agents + "</b> agents",
    "critical path <b>" + P.crit.length + "</b> events"].filter(Boolean).join(" · ");

  var card = OT.el("div", { class: "card" }, null, root), bar = OT.el("div", { class: "row" }, null, card);
  OT.el("h2", { style: "margin:0" }, "Timeline", bar); OT.el("span", { class: "spacer" }, null, bar);
  OT.el("span", { class: "hint" }, "wheel: zoom · drag: pan · shift+wheel: scroll lanes · double-click: reset", bar);
  var reset = OT.el("button", null, "Reset view", bar);
  OT.legend(card, P);
  var wrap = OT.el("div", { class: "tl-wrap" }, null, card);
  var t0 = performance.now(), tl = new OT.Timeline(wrap, P);
  tl.draw();
  reset.addEventListener("click", function () { tl.resetView(); tl.draw(); });
  check.timeline_ms = +(performance.now() - t0).toFixed(1);
  check.lanes = tl.L;
  check.critical_marks = tl.critDrawn;
  check.critical_len = P.crit.length;
  check.visible_events = tl.visible;
  check.events = tl.n;

  var gc = OT.el("div", { class: "card" }, null, root);
  if (P.edges) {
    OT.el("h2", null, "Event graph", gc);
    OT.el("div", { class: "hint", style: "margin:-6px 0 8px" }, "layered by dependency depth · red: critical path · faded, dashed: wasted work · ring: final output · square: stop", gc);
    check.graph_mode = "dag"; check.graph_nodes = OT.dagView(gc, P);
  } else {
    OT.el("h2", null, "Spawn tree", gc);
    OT.el("div", { class: "hint", style: "margin:-6px 0 8px" }, "event graph collapsed (" + OT.fmtNum(m.n_events) + " events) · node size: events · red: on the critical path · grey: mostly wasted", gc);
    check.graph_mode = "spawn_tree"; check.graph_nodes = OT.treeView(gc, P);
  }
  var mc = OT.el("div", { class: "card" }, null, root);
  OT.el("h2", null, "Measures", mc);
  check.measures_rows = OT.measuresTable(mc, P);
  var fc = OT.el("div", { class: "card" }, null, root);
  OT.el("h2", null, "Safety flows · untrusted content → privileged call or final output", fc);
  check.flows = OT.flowsList(fc, P);
  if (P.credit) {
    var cc = OT.el("div", { class: "card" }, null, root);
    OT.el("h2", null, "Credit per " + P.credit.unit, cc);
    check.credit_rows = OT.creditView(cc, P.credit);
  }
  return tl;
};

OT.boot = function () {
  var c = OT.check, t0 = performance.now();
  try {
    var P = JSON.parse(document.getElementById("payload").textContent);
    c.parse_ms = +(performance.now() - t0).toFixed(1);
    c.kind = P.kind;
    var root = document.getElementById("app");
    if (P.kind === "many") OT.renderMany(root, P, c);
    else {
      var tl = OT.renderTrace(root, P, c);
      /* measure pan/zoom frame cost (what a drag costs per frame) */
      var saved = [tl.v0, tl.v1], times = [];
      for (var k = 0; k < 6; k++) {
        var d = (tl.v1 - tl.v0) * 0.05; tl.v0 += d; tl.v1 += d; if (k === 3) tl.zoomAt((tl.v0 + tl.v1) / 2, 0.5);
        tl.draw(); times.push(tl.lastDrawMs);
      }
      tl.v0 = saved[0]; tl.v1 = saved[1]; tl.draw();
      c.critical_marks = tl.critDrawn;
      times.sort(function (a, b) { return a - b; });
      c.frame_ms_median = +times[times.length >> 1].toFixed(2);
    }
    c.render_ms = +(performance.now() - t0).toFixed(1);
    c.ok = true;
  } catch (e) {
    c.errors.push("render failed: " + (e && e.stack ? e.stack : e));
    var box = document.getElementById("app");
    if (box) OT.el("pre", { class: "card" }, "render failed: " + e, box);
  }
  OT.writeCheck();
};
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", OT.boot); else OT.boot();
