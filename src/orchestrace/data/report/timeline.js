/* orchestrace report — canvas timeline (one lane per agent, spawn-tree order).
 * Columnar data in, one canvas out. Dense views aggregate per pixel: consecutive
 * bars of one type that fall into the same pixel column of a lane are merged, and
 * all bars of a type are filled with a single Path2D, so a 20,000-event frame is
 * a handful of fill() calls. */
"use strict";
var OT = window.OT || (window.OT = {});

OT.COLORS = {
  orchestrator_decision: "#4e79a7", spawn: "#59a14f", despawn: "#a39d98",
  message: "#f28e2b", tool_call: "#76b7b2", tool_result: "#3f8f8a",
  return: "#b07aa1", aggregate: "#9c755f", human_intervention: "#ff9da7",
  safety_event: "#e8c22f"
};
OT.CRIT = "#d1343f";
/* Types drawn as a glyph (not a bar) when their bar would be under 3 px wide. */
OT.POINTLIKE = { orchestrator_decision: 1, spawn: 1, despawn: 1, return: 1, aggregate: 1, human_intervention: 1, safety_event: 1 };
OT.F = { critical: 1, wasted: 2, error: 4, untrusted: 8, privileged: 16, stop: 32, final: 64, timed: 128, flow: 256 };

OT.fmtTime = function (s, step) {
  var a = Math.abs(s), st = step || a;
  if (st >= 60 && a >= 60) {
    var m = Math.floor(a / 60), r = a - 60 * m;
    var rs = st >= 1 ? Math.round(r).toString() : r.toFixed(1);
    if (rs.length < 2 || rs.indexOf(".") === 1) rs = "0" + rs;
    return (s < 0 ? "-" : "") + m + ":" + rs;
  }
  if (st < 0.001) return (s * 1e3).toFixed(st < 1e-4 ? 2 : 1) + " ms";
  if (st < 1) return s.toFixed(st < 0.01 ? 3 : st < 0.1 ? 2 : 1) + " s";
  return (Math.round(s * 10) / 10) + " s";
};
OT.fmtNum = function (v) {
  if (v === null || v === undefined) return "–";
  if (typeof v !== "number") return String(v);
  if (!isFinite(v)) return String(v);
  if (Number.isInteger(v)) return v.toLocaleString("en-US");
  var a = Math.abs(v);
  if (a >= 1e4) return Math.round(v).toLocaleString("en-US");
  if (a >= 100) return v.toFixed(1);
  if (a >= 1) return v.toFixed(3);
  if (a === 0) return "0";
  return v.toPrecision(3);
};
OT.niceStep = function (span, target) {
  var raw = span / Math.max(1, target), p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
  var s = m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10;
  if (raw >= 60 && raw < 3600) { /* minute-friendly steps */
    var mins = [60, 120, 300, 600, 900, 1800, 3600];
    for (var i = 0; i < mins.length; i++) if (mins[i] >= raw) return mins[i];
  }
  return s * p;
};

/* Precompute per-lane sorted event indices and the layout. */
OT.Timeline = function (host, P, opts) {
  var self = this;
  this.P = P; this.opts = opts || {};
  var ev = P.ev, n = ev.t.length, L = P.lanes.length;
  this.n = n; this.L = L;
  var byLane = []; for (var l = 0; l < L; l++) byLane.push([]);
  for (var i = 0; i < n; i++) byLane[ev.lane[i]].push(i);
  this.laneMaxDur = new Float64Array(L);
  this.laneSpan = [];
  var tmin = Infinity, tmax = -Infinity;
  for (l = 0; l < L; l++) {
    var arr = byLane[l];
    arr.sort(function (a, b) { return ev.t[a] - ev.t[b] || a - b; });
    var md = 0, lo = Infinity, hi = -Infinity;
    for (var k = 0; k < arr.length; k++) {
      var j = arr[k], d = ev.te[j] - ev.t[j];
      if (d > md) md = d;
      if (ev.t[j] < lo) lo = ev.t[j];
      if (ev.te[j] > hi) hi = ev.te[j];
    }
    this.laneMaxDur[l] = md;
    this.laneSpan.push([lo, hi]);
    if (lo < tmin) tmin = lo;
    if (hi > tmax) tmax = hi;
    byLane[l] = Int32Array.from(arr);
  }
  if (!isFinite(tmin)) { tmin = 0; tmax = 1; }
  if (tmax - tmin <= 0) tmax = tmin + 1;
  this.byLane = byLane; this.tmin = tmin; this.tmax = tmax;
  /* busy concurrency: sorted starts / ends of timed events (else: agents alive) */
  var st = [], en = [];
  for (i = 0; i < n; i++) if (ev.flags[i] & OT.F.timed && ev.te[i] > ev.t[i]) { st.push(ev.t[i]); en.push(ev.te[i]); }
  this.concLabel = "busy events";
  if (st.length === 0) {
    this.concLabel = "agents alive";
    for (l = 0; l < L; l++) if (isFinite(this.laneSpan[l][0])) { st.push(this.laneSpan[l][0]); en.push(this.laneSpan[l][1]); }
  }
  this.cStart = Float64Array.from(st).sort(); this.cEnd = Float64Array.from(en).sort();
  this.stopT = null; this.stopIdx = -1;
  for (i = 0; i < n; i++) if (ev.flags[i] & OT.F.stop) { this.stopT = ev.t[i]; this.stopIdx = i; }
  /* messages between lanes (arrows), drawn when few are visible */
  this.msgs = [];
  var laneOf = {}; for (l = 0; l < L; l++) laneOf[P.lanes[l].name] = l;
  for (i = 0; i < n; i++) {
    var ty = P.types[ev.type[i]];
    if ((ty === "message" || ty === "return" || ty === "spawn") && ev.to[i] >= 0) {
      var tl = laneOf[P.S[ev.to[i]]];
      if (tl !== undefined && tl !== ev.lane[i]) this.msgs.push(i, tl);
    }
  }
  /* geometry */
  this.gutter = 0;
  var maxLabel = 0;
  for (l = 0; l < L; l++) maxLabel = Math.max(maxLabel, Math.min(28, P.lanes[l].name.length) * 7 + P.lanes[l].depth * 12);
  this.gutter = Math.round(Math.min(260, Math.max(120, maxLabel + 66)));
  this.laneH = Math.max(10, Math.min(28, Math.floor(680 / Math.max(1, L))));
  this.concH = 46; this.axisH = 28; this.topPad = 8;
  this.plotH = Math.min(L * this.laneH, 700);
  this.cssH = this.topPad + this.concH + 10 + this.plotH + this.axisH;
  this.scrollY = 0;
  this.font = getComputedStyle(document.body).fontFamily;
  this.labels = [];
  this.canvas = document.createElement("canvas");
  host.appendChild(this.canvas);
  this.ctx = this.canvas.getContext("2d");
  this.hatch = this.makeHatch();
  this.resetView();
  this.resize();
  this.bind();
  window.addEventListener("resize", function () { self.resize(); self.draw(); });
};

OT.Timeline.prototype.makeHatch = function () {
  var c = document.createElement("canvas"); c.width = 6; c.height = 6;
  var g = c.getContext("2d");
  g.strokeStyle = "rgba(90,96,108,0.85)"; g.lineWidth = 1.2;
  g.beginPath(); g.moveTo(0, 6); g.lineTo(6, 0); g.moveTo(-1, 1); g.lineTo(1, -1); g.moveTo(5, 7); g.lineTo(7, 5); g.stroke();
  return this.ctx.createPattern(c, "repeat");
};
OT.Timeline.prototype.resetView = function () {
  var pad = (this.tmax - this.tmin) * 0.015;
  this.v0 = this.tmin - pad; this.v1 = this.tmax + pad; this.scrollY = 0;
};
OT.Timeline.prototype.resize = function () {
  var dpr = window.devicePixelRatio || 1, w = this.canvas.parentNode.clientWidth || 1200;
  this.cssW = w; this.dpr = dpr;
  this.canvas.width = Math.round(w * dpr); this.canvas.height = Math.round(this.cssH * dpr);
  this.canvas.style.height = this.cssH + "px";
  this.plotX = this.gutter; this.plotW = Math.max(50, w - this.gutter - 14);
  this.plotY = this.topPad + this.concH + 10;
};
OT.Timeline.prototype.x = function (t) { return this.plotX + (t - this.v0) / (this.v1 - this.v0) * this.plotW; };
OT.Timeline.prototype.tAt = function (x) { return this.v0 + (x - this.plotX) / this.plotW * (this.v1 - this.v0); };
OT.Timeline.prototype.laneY = function (l) { return this.plotY + l * this.laneH - this.scrollY; };
OT.Timeline.prototype.lowerBound = function (arr, t, from) {
  var ev = this.P.ev, lo = from || 0, hi = arr.length;
  while (lo < hi) { var m = (lo + hi) >> 1; if (ev.t[arr[m]] < t) lo = m + 1; else hi = m; }
  return lo;
};

OT.Timeline.prototype.draw = function () {
  var t0 = performance.now();
  var g = this.ctx, P = this.P, ev = P.ev, F = OT.F, dpr = this.dpr;
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, this.cssW, this.cssH);
  var X0 = this.plotX, W = this.plotW, Y0 = this.plotY, H = this.plotH, lh = this.laneH;
  var step = OT.niceStep(this.v1 - this.v0, Math.max(3, Math.floor(W / 110)));
  /* lane stripes + grid */
  var lFirst = Math.max(0, Math.floor(this.scrollY / lh)), lLast = Math.min(this.L - 1, Math.ceil((this.scrollY + H) / lh));
  g.save(); g.beginPath(); g.rect(0, Y0, this.cssW, H); g.clip();
  for (var l = lFirst; l <= lLast; l++) {
    if (l % 2 === 1) { g.fillStyle = "#f6f7f9"; g.fillRect(0, this.laneY(l), this.cssW, lh); }
  }
  g.strokeStyle = "#eceef2"; g.lineWidth = 1; g.beginPath();
  for (var tk = Math.ceil(this.v0 / step) * step; tk <= this.v1; tk += step) {
    var gx = Math.round(this.x(tk)) + 0.5; g.moveTo(gx, Y0); g.lineTo(gx, Y0 + H);
  }
  g.stroke();
  g.restore();
  /* events */
  g.save(); g.beginPath(); g.rect(X0, Y0, W, H); g.clip();
  var nT = P.types.length, paths = [], marks = [], wasteP = new Path2D(), errP = new Path2D(), critP = new Path2D();
  for (var ti = 0; ti < nT; ti++) { paths.push(new Path2D()); marks.push(new Path2D()); }
  var lifeP = new Path2D();
  var barH = Math.max(6, Math.round(lh * 0.62)), mk = Math.max(3, Math.min(6, lh * 0.26));
  var tPerPx = (this.v1 - this.v0) / W, visible = 0, critDrawn = 0, critBand = new Path2D();
  var pointLike = P.types.map(function (t) { return !!OT.POINTLIKE[t]; });
  for (l = lFirst; l <= lLast; l++) {
    var arr = this.byLane[l], yc = this.laneY(l) + lh / 2, yb = yc - barH / 2;
    var sp = this.laneSpan[l];
    if (isFinite(sp[0])) {
      var lx0 = Math.max(X0 - 2, this.x(sp[0])), lx1 = Math.min(X0 + W + 2, this.x(sp[1]));
      if (lx1 > lx0) { lifeP.moveTo(lx0, yc + 0.5); lifeP.lineTo(lx1, yc + 0.5); }
    }
    var k = this.lowerBound(arr, this.v0 - this.laneMaxDur[l]);
    var lastEnd = new Float64Array(nT).fill(-1e9), lastMarkX = new Float64Array(nT).fill(-1e9), lastCrit = -1e9;
    for (; k < arr.length; k++) {
      var i = arr[k], ts = ev.t[i];
      if (ts > this.v1) break;
      var te = ev.te[i];
      if (te < this.v0) continue;
      visible++;
      var ty = ev.type[i], fl = ev.flags[i];
      var x0 = this.x(ts), x1 = this.x(te);
      if ((fl & F.timed) && te > ts && !(pointLike[ty] && x1 - x0 < 3)) {
        if (x1 - x0 < 1) x1 = x0 + 1;
        if (x1 <= lastEnd[ty] && !(fl & (F.critical | F.error))) continue; /* fully inside an already drawn pixel run */
        var xa = Math.max(x0, lastEnd[ty]);
        if (x0 < lastEnd[ty] + 0.75 && xa < x1) { paths[ty].rect(xa, yb, x1 - xa, barH); }
        else paths[ty].rect(x0, yb, x1 - x0, barH);
        if (x1 > lastEnd[ty]) lastEnd[ty] = x1;
        if (fl & F.wasted) wasteP.rect(x0, yb, x1 - x0, barH);
        if (fl & F.critical) {
          critBand.rect(x0, yb - 3.5, Math.max(2, x1 - x0), 2.5);
          if (x1 - x0 >= 24) critP.rect(x0 - 0.5, yb - 1, x1 - x0 + 1, barH + 2);
          critDrawn++;
        }
        if ((fl & F.error) && x1 - x0 >= 2) { errP.moveTo(x0, yb + barH + 1); errP.lineTo(x1, yb + barH + 1); }
      } else {
        if (x0 - lastMarkX[ty] < 0.8 && !(fl & (F.critical | F.stop | F.final))) continue;
        lastMarkX[ty] = x0;
        OT.glyph(marks[ty], P.types[ty], x0, yc, mk);
        if (fl & F.wasted) wasteP.rect(x0 - mk, yc - mk, 2 * mk, 2 * mk);
        if (fl & F.critical) {
          if (x0 - lastCrit > 2 * mk + 8) { critP.moveTo(x0 + mk + 3, yc); critP.arc(x0, yc, mk + 3, 0, 2 * Math.PI); }
          else critBand.rect(Math.max(lastCrit, x0 - mk), yb - 3.5, x0 - Math.max(lastCrit, x0 - mk) + mk, 2.5);
          lastCrit = x0; critDrawn++;
        }
      }
    }
  }
  g.strokeStyle = "#c9ced6"; g.lineWidth = 1; g.stroke(lifeP);
  this.drawArrows(g, lFirst, lLast, tPerPx);
  for (ti = 0; ti < nT; ti++) {
    g.fillStyle = OT.COLORS[P.types[ti]] || "#888";
    g.fill(paths[ti]);
  }
  g.fillStyle = this.hatch; g.fill(wasteP);
  g.fillStyle = "rgba(255,255,255,0.35)"; g.fill(wasteP);
  g.strokeStyle = "rgba(17,17,17,0.8)"; g.lineWidth = 1.5; g.stroke(errP);
  this.drawCritical(g, critP, critBand, lh);
  for (ti = 0; ti < nT; ti++) {
    g.fillStyle = OT.COLORS[P.types[ti]] || "#888"; g.fill(marks[ti]);
    g.strokeStyle = "rgba(255,255,255,0.9)"; g.lineWidth = 1; g.stroke(marks[ti]);
  }
  this.critDrawn = critDrawn;
  this.drawStop(g, Y0, H);
  g.restore();
  this.drawGutter(g, lFirst, lLast);
  this.drawConcurrency(g);
  this.drawAxis(g, step);
  this.visible = visible;
  this.lastDrawMs = performance.now() - t0;
};

OT.glyph = function (p, type, x, y, r) {
  switch (type) {
    case "orchestrator_decision": p.moveTo(x, y - r - 1); p.lineTo(x + r + 1, y); p.lineTo(x, y + r + 1); p.lineTo(x - r - 1, y); p.closePath(); break;
    case "spawn": p.moveTo(x - r, y - r); p.lineTo(x + r + 1, y); p.lineTo(x - r, y + r); p.closePath(); break;
    case "message": p.moveTo(x - r, y - r); p.lineTo(x + r, y - r); p.lineTo(x, y + r); p.closePath(); break;
    case "return": p.moveTo(x + r, y - r); p.lineTo(x - r - 1, y); p.lineTo(x + r, y + r); p.closePath(); break;
    case "tool_call": p.rect(x - r, y - r, 2 * r, 2 * r); break;
    case "tool_result": p.moveTo(x + r, y); p.arc(x, y, r, 0, 2 * Math.PI); break;
    case "aggregate": for (var a = 0; a < 6; a++) { var ang = Math.PI / 3 * a; p[a ? "lineTo" : "moveTo"](x + (r + 1) * Math.cos(ang), y + (r + 1) * Math.sin(ang)); } p.closePath(); break;
    default: p.moveTo(x + r, y); p.arc(x, y, r, 0, 2 * Math.PI);
  }
};

OT.Timeline.prototype.drawArrows = function (g, lFirst, lLast, tPerPx) {
  var ev = this.P.ev, m = this.msgs, lh = this.laneH, cand = [];
  for (var k = 0; k < m.length; k += 2) {
    var i = m[k], tl = m[k + 1], t = ev.t[i];
    if (t < this.v0 || t > this.v1) continue;
    var l = ev.lane[i];
    if ((l < lFirst && tl < lFirst) || (l > lLast && tl > lLast)) continue;
    cand.push(i, tl);
    if (cand.length > 1200) return; /* too dense to read: skip arrows at this zoom */
  }
  g.lineWidth = 1;
  for (k = 0; k < cand.length; k += 2) {
    i = cand[k]; tl = cand[k + 1];
    var ty = this.P.types[ev.type[i]];
    var x = this.x(ev.t[i]), y0 = this.laneY(ev.lane[i]) + lh / 2, y1 = this.laneY(tl) + lh / 2;
    var x1 = this.x(ty === "spawn" ? this.laneSpan[tl][0] : (ev.flags[i] & OT.F.timed ? ev.te[i] : ev.t[i]));
    g.strokeStyle = ty === "spawn" ? "rgba(89,161,79,0.45)" : ty === "return" ? "rgba(176,122,161,0.45)" : "rgba(242,142,43,0.55)";
    g.beginPath(); g.moveTo(x, y0);
    g.bezierCurveTo(x + (x1 - x) * 0.5, y0, x + (x1 - x) * 0.5, y1, Math.max(x1, x + 1), y1); g.stroke();
  }
};

OT.Timeline.prototype.drawCritical = function (g, critP, critBand, lh) {
  var ev = this.P.ev, c = this.P.crit;
  if (!c.length) return;
  g.strokeStyle = OT.CRIT; g.lineWidth = 2; g.globalAlpha = 0.9;
  g.beginPath();
  for (var k = 0; k + 1 < c.length; k++) {
    var a = c[k], b = c[k + 1];
    if (Math.max(ev.te[a], ev.t[b]) < this.v0 || Math.min(ev.te[a], ev.t[b]) > this.v1) continue;
    var xa = this.x(ev.flags[a] & OT.F.timed ? ev.te[a] : ev.t[a]), ya = this.laneY(ev.lane[a]) + lh / 2;
    var xb = this.x(ev.t[b]), yb = this.laneY(ev.lane[b]) + lh / 2;
    g.moveTo(xa, ya);
    if (ya === yb) g.lineTo(xb, yb);
    else { var xm = (xa + xb) / 2; g.bezierCurveTo(xm, ya, xm, yb, xb, yb); }
  }
  g.setLineDash([]); g.lineWidth = 1.5; g.stroke();
  g.globalAlpha = 1; g.lineWidth = 1.6; g.stroke(critP);
  g.fillStyle = OT.CRIT; g.fill(critBand);
};

OT.Timeline.prototype.drawStop = function (g, Y0, H) {
  if (this.stopT === null) return;
  var x = Math.round(this.x(this.stopT)) + 0.5;
  if (x < this.plotX || x > this.plotX + this.plotW) return;
  g.strokeStyle = "#1d2330"; g.lineWidth = 1.2; g.setLineDash([4, 3]);
  g.beginPath(); g.moveTo(x, Y0); g.lineTo(x, Y0 + H); g.stroke(); g.setLineDash([]);
  var y = this.laneY(this.P.ev.lane[this.stopIdx]) + this.laneH / 2, r = Math.max(5, this.laneH * 0.3);
  g.beginPath();
  for (var a = 0; a < 8; a++) { var ang = Math.PI / 8 + a * Math.PI / 4; g[a ? "lineTo" : "moveTo"](x + r * Math.cos(ang), y + r * Math.sin(ang)); }
  g.closePath(); g.fillStyle = "#1d2330"; g.fill(); g.strokeStyle = "#fff"; g.lineWidth = 1; g.stroke();
};

OT.Timeline.prototype.drawGutter = function (g, lFirst, lLast) {
  var P = this.P, lh = this.laneH;
  g.save(); g.beginPath(); g.rect(0, this.plotY, this.gutter, this.plotH); g.clip();
  g.fillStyle = "#fff"; g.fillRect(0, this.plotY, this.gutter - 6, this.plotH);
  for (var l = lFirst; l <= lLast; l++) {
    if (l % 2 === 1) { g.fillStyle = "#f6f7f9"; g.fillRect(0, this.laneY(l), this.gutter - 6, lh); }
  }
  var fs = Math.max(9, Math.min(12.5, lh * 0.58));
  g.font = fs + "px " + this.font;
  g.textBaseline = "middle";
  g.strokeStyle = "#c3c8d0"; g.lineWidth = 1;
  if (this.labelFs !== fs) this.labels = [];
  this.labelFs = fs;
  for (l = lFirst; l <= lLast; l++) {
    var lane = P.lanes[l], y = this.laneY(l) + lh / 2, x = 10 + lane.depth * 12;
    if (lane.parent >= 0) {
      g.beginPath(); g.moveTo(x - 8.5, this.laneY(lane.parent) + lh / 2 + 4); g.lineTo(x - 8.5, y); g.lineTo(x - 3, y); g.stroke();
    }
    g.fillStyle = lane.depth === 0 ? "#1d2330" : "#3a4150";
    var name = this.labels[l];
    if (name === undefined || this.labelFs !== fs) {
      name = lane.name; var maxW = this.gutter - x - 42;
      while (g.measureText(name).width > maxW && name.length > 4) name = name.slice(0, -2);
      if (name !== lane.name) name += "…";
      this.labels[l] = name;
    }
    g.fillText(name, x, y);
    g.fillStyle = "#8a93a3"; g.textAlign = "right";
    g.fillText(String(lane.n), this.gutter - 12, y); g.textAlign = "left";
  }
  g.restore();
  g.strokeStyle = "#d5d9e0"; g.beginPath(); g.moveTo(this.gutter - 5.5, this.plotY); g.lineTo(this.gutter - 5.5, this.plotY + this.plotH); g.stroke();
  if (this.L * lh > this.plotH) { /* vertical scroll indicator */
    var frac = this.plotH / (this.L * lh), yy = this.plotY + this.scrollY / (this.L * lh) * this.plotH;
    g.fillStyle = "rgba(60,70,90,0.28)"; g.fillRect(this.cssW - 6, yy, 4, Math.max(12, frac * this.plotH));
  }
};

OT.Timeline.prototype.drawConcurrency = function (g) {
  var X0 = this.plotX, W = this.plotW, y0 = this.topPad, h = this.concH, s = this.cStart, e = this.cEnd;
  var cols = Math.max(1, Math.floor(W)), vals = new Float64Array(cols), mx = 1;
  function ub(a, t) { var lo = 0, hi = a.length; while (lo < hi) { var m = (lo + hi) >> 1; if (a[m] <= t) lo = m + 1; else hi = m; } return lo; }
  for (var c = 0; c < cols; c++) {
    var t = this.tAt(X0 + c + 0.5), v = ub(s, t) - ub(e, t);
    vals[c] = v; if (v > mx) mx = v;
  }
  this.concMax = mx;
  g.fillStyle = "#fff"; g.fillRect(X0, y0, W, h);
  var p = new Path2D(); p.moveTo(X0, y0 + h);
  for (c = 0; c < cols; c++) p.lineTo(X0 + c, y0 + h - vals[c] / mx * (h - 4));
  p.lineTo(X0 + cols, y0 + h); p.closePath();
  g.fillStyle = "rgba(78,121,167,0.22)"; g.fill(p);
  g.strokeStyle = "rgba(78,121,167,0.85)"; g.lineWidth = 1; g.beginPath();
  for (c = 0; c < cols; c++) g[c ? "lineTo" : "moveTo"](X0 + c, y0 + h - vals[c] / mx * (h - 4));
  g.stroke();
  g.strokeStyle = "#d5d9e0"; g.beginPath(); g.moveTo(X0, y0 + h + 0.5); g.lineTo(X0 + W, y0 + h + 0.5); g.stroke();
  g.fillStyle = "#5b6473"; g.font = "11px " + this.font; g.textBaseline = "middle";
  g.textAlign = "right"; g.fillText(this.concLabel, this.gutter - 12, y0 + h / 2 - 7);
  g.fillStyle = "#8a93a3"; g.fillText("peak " + mx, this.gutter - 12, y0 + h / 2 + 8); g.textAlign = "left";
  if (this.stopT !== null) {
    var x = Math.round(this.x(this.stopT)) + 0.5;
    if (x >= X0 && x <= X0 + W) {
      g.strokeStyle = "#1d2330"; g.setLineDash([4, 3]); g.beginPath(); g.moveTo(x, y0); g.lineTo(x, y0 + h); g.stroke(); g.setLineDash([]);
      g.fillStyle = "#1d2330"; g.font = "600 11px " + this.font;
      g.textAlign = x > X0 + W - 60 ? "right" : "left"; g.fillText("stop (O5)", x + (g.textAlign === "right" ? -5 : 5), y0 + 8); g.textAlign = "left";
    }
  }
};

OT.Timeline.prototype.drawAxis = function (g, step) {
  var y = this.plotY + this.plotH, X0 = this.plotX, W = this.plotW;
  g.fillStyle = "#fff"; g.fillRect(0, y, this.cssW, this.axisH);
  g.strokeStyle = "#9aa1ab"; g.lineWidth = 1; g.beginPath(); g.moveTo(X0, y + 0.5); g.lineTo(X0 + W, y + 0.5);
  var ticks = [];
  for (var tk = Math.ceil(this.v0 / step) * step; tk <= this.v1 + 1e-12; tk += step) {
    var x = Math.round(this.x(tk)) + 0.5; if (x < X0 - 0.5 || x > X0 + W + 0.5) continue;
    g.moveTo(x, y); g.lineTo(x, y + 5); ticks.push([x, tk]);
  }
  g.stroke();
  g.fillStyle = "#3a4150"; g.font = "11px " + this.font; g.textAlign = "center"; g.textBaseline = "top";
  for (var k = 0; k < ticks.length; k++) g.fillText(OT.fmtTime(Math.abs(ticks[k][1]) < step * 1e-6 ? 0 : ticks[k][1], step), ticks[k][0], y + 8);
  g.textAlign = "left";
  this.ticks = ticks.length;
};

OT.Timeline.prototype.hit = function (mx, my) {
  if (mx < this.plotX || mx > this.plotX + this.plotW || my < this.plotY || my > this.plotY + this.plotH) return -1;
  var l = Math.floor((my - this.plotY + this.scrollY) / this.laneH);
  if (l < 0 || l >= this.L) return -1;
  var ev = this.P.ev, arr = this.byLane[l], t = this.tAt(mx), tol = 5 * (this.v1 - this.v0) / this.plotW;
  var k = this.lowerBound(arr, t - tol - this.laneMaxDur[l]), best = -1, bd = Infinity;
  for (; k < arr.length; k++) {
    var i = arr[k]; if (ev.t[i] > t + tol) break;
    var d = t < ev.t[i] ? ev.t[i] - t : t > ev.te[i] ? t - ev.te[i] : 0;
    if (d <= tol && (d < bd || (d === bd && ev.te[i] - ev.t[i] < ev.te[best] - ev.t[best]))) { bd = d; best = i; }
  }
  return best;
};

OT.Timeline.prototype.bind = function () {
  var self = this, c = this.canvas, drag = null, raf = 0;
  function redraw() { if (!raf) raf = requestAnimationFrame(function () { raf = 0; self.draw(); }); }
  this.redraw = redraw;
  c.addEventListener("wheel", function (e) {
    e.preventDefault();
    var r = c.getBoundingClientRect(), mx = e.clientX - r.left;
    if (e.shiftKey) { self.scrollBy(e.deltaY); redraw(); return; }
    var t = self.tAt(Math.max(self.plotX, Math.min(self.plotX + self.plotW, mx)));
    var f = Math.exp(Math.max(-1, Math.min(1, e.deltaY * (e.deltaMode ? 0.05 : 0.0015))));
    self.zoomAt(t, f); redraw();
  }, { passive: false });
  c.addEventListener("pointerdown", function (e) {
    drag = { x: e.clientX, y: e.clientY, v0: self.v0, v1: self.v1, sy: self.scrollY };
    c.setPointerCapture(e.pointerId); c.classList.add("drag"); OT.tip(null);
  });
  c.addEventListener("pointermove", function (e) {
    var r = c.getBoundingClientRect();
    if (drag) {
      var dt = (e.clientX - drag.x) / self.plotW * (drag.v1 - drag.v0);
      self.v0 = drag.v0 - dt; self.v1 = drag.v1 - dt;
      self.scrollY = drag.sy; self.scrollBy(drag.y - e.clientY); redraw(); return;
    }
    var i = self.hit(e.clientX - r.left, e.clientY - r.top);
    OT.tip(i >= 0 ? OT.describe(self.P, i) : null, e.clientX, e.clientY);
  });
  function end(e) { drag = null; c.classList.remove("drag"); }
  c.addEventListener("pointerup", end); c.addEventListener("pointercancel", end);
  c.addEventListener("pointerleave", function () { OT.tip(null); });
  c.addEventListener("dblclick", function () { self.resetView(); redraw(); });
};
OT.Timeline.prototype.scrollBy = function (dy) {
  var max = Math.max(0, this.L * this.laneH - this.plotH);
  this.scrollY = Math.max(0, Math.min(max, this.scrollY + dy));
};
OT.Timeline.prototype.zoomAt = function (t, f) {
  var span = (this.v1 - this.v0) * f, full = (this.tmax - this.tmin) * 1.2;
  span = Math.max(full * 1e-6, Math.min(full * 1.5, span));
  var a = (t - this.v0) / (this.v1 - this.v0);
  this.v0 = t - a * span; this.v1 = this.v0 + span;
};

/* Tooltip */
OT.esc = function (s) { return String(s).replace(/[&<>"]/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]; }); };
OT.describe = function (P, i) {
  var ev = P.ev, F = OT.F, fl = ev.flags[i], ty = P.types[ev.type[i]], h = [];
  var S = function (k) { return k >= 0 ? P.S[k] : null; };
  h.push('<div class="h"><span class="sw" style="background:' + OT.COLORS[ty] + '"></span> ' + OT.esc(ev.id[i]) + " · " + OT.esc(ty) + "</div>");
  function row(k, v) { if (v !== null && v !== undefined && v !== "") h.push('<div><span class="k">' + k + "</span>" + OT.esc(v) + "</div>"); }
  row("agent", P.lanes[ev.lane[i]].name); row("role", S(ev.role[i])); row("to", S(ev.to[i])); row("tool", S(ev.tool[i]));
  var t0 = ev.t[i], te = ev.te[i];
  row("time", (fl & F.timed) ? OT.fmtTime(t0, 0.01) + " → " + OT.fmtTime(te, 0.01) + "  (" + OT.fmtTime(te - t0, 0.001) + ")" : OT.fmtTime(t0, 0.01));
  if (ev.tin[i] || ev.tout[i]) row("tokens", OT.fmtNum(ev.tin[i]) + " in · " + OT.fmtNum(ev.tout[i]) + " out");
  if (ev.cost[i]) row("cost", "$" + ev.cost[i]);
  var x = P.extra[String(i)];
  if (x) {
    if (x.decision) row("decision", x.decision.kind + " → " + x.decision.action + (x.decision.alternatives ? "  [" + x.decision.alternatives.join(", ") + "]" : "") + (x.decision.logprob !== undefined ? "  logp " + x.decision.logprob.toFixed(3) : ""));
    if (x.outcome) row("outcome", JSON.stringify(x.outcome));
    ["from", "content_ref", "source"].forEach(function (k) { if (x[k]) row(k.replace("_", " "), x[k]); });
    if (x.content) h.push("<pre>" + OT.esc(x.content) + "</pre>");
    if (x.attrs) h.push("<pre>" + OT.esc(x.attrs) + "</pre>");
  }
  var tags = [];
  if (fl & F.critical) tags.push('<span class="tag c">critical path</span>');
  [["wasted", "wasted work"], ["final", "final output"], ["stop", "stop (O5)"], ["error", "error"], ["untrusted", "untrusted"], ["privileged", "privileged"], ["flow", "safety flow"]]
    .forEach(function (p) { if (fl & F[p[0]]) tags.push('<span class="tag">' + p[1] + "</span>"); });
  if (tags.length) h.push("<div>" + tags.join("") + "</div>");
  return h.join("");
};
OT.tip = function (html, x, y) {
  var el = document.getElementById("tip");
  if (!el) return;
  if (!html) { el.style.display = "none"; return; }
  el.innerHTML = html; el.style.display = "block";
  var w = el.offsetWidth, hh = el.offsetHeight;
  el.style.left = Math.min(window.innerWidth - w - 8, x + 14) + "px";
  el.style.top = (y + 16 + hh > window.innerHeight ? y - hh - 10 : y + 16) + "px";
};
