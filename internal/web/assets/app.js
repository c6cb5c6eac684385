// wirebench dashboard: live tests from /api/events, history from /api/runs,
// a run's detail from /api/runs/ID. Plain JavaScript, no external assets.
"use strict";

const SVGNS = "http://www.w3.org/2000/svg";
const live = new Map(); // test id -> {test, intervals, card}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function svg(tag, attrs) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

function fmtRate(bps) {
  if (!isFinite(bps)) return "n/a";
  if (bps >= 1e9) return (bps / 1e9).toFixed(2) + " Gbit/s";
  if (bps >= 1e6) return (bps / 1e6).toFixed(2) + " Mbit/s";
  if (bps >= 1e3) return (bps / 1e3).toFixed(2) + " kbit/s";
  return bps.toFixed(0) + " bit/s";
}

function lossPct(lost, packets) {
  const l = Math.max(lost, 0), total = packets + l;
  return total > 0 ? 100 * l / total : 0;
}

function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

// chart draws series [{name, color, points: [[x, y], ...]}] as lines in an
// SVG; data-points is the number of points drawn (read by tests).
function chart(title, unit, series, w = 360, h = 170) {
  const pad = { l: 46, r: 10, t: 20, b: 26 };
  const s = svg("svg", { class: "chart", width: w, height: h, viewBox: `0 0 ${w} ${h}`, role: "img" });
  const all = series.flatMap(se => se.points);
  s.setAttribute("data-points", String(all.length));
  s.setAttribute("data-chart", title);
  const xmax = Math.max(1, ...all.map(p => p[0]));
  const ymax = niceMax(Math.max(0, ...all.map(p => p[1])));
  const X = x => pad.l + (w - pad.l - pad.r) * x / xmax;
  const Y = y => h - pad.b - (h - pad.t - pad.b) * y / ymax;
  const t = svg("text", { x: pad.l, y: 14, class: "title" });
  t.textContent = `${title} (${unit})`;
  s.append(t);
  for (let i = 0; i <= 4; i++) {
    const v = ymax * i / 4;
    s.append(svg("line", { x1: pad.l, x2: w - pad.r, y1: Y(v), y2: Y(v), stroke: "#e4e7ec", "stroke-width": 1 }));
    const lab = svg("text", { x: pad.l - 4, y: Y(v) + 4, "text-anchor": "end" });
    lab.textContent = +v.toPrecision(3);
    s.append(lab);
  }
  s.append(svg("line", { x1: pad.l, x2: pad.l, y1: pad.t, y2: h - pad.b, stroke: "#98a2b3" }));
  s.append(svg("line", { x1: pad.l, x2: w - pad.r, y1: h - pad.b, y2: h - pad.b, stroke: "#98a2b3" }));
  for (const [x, anchor] of [[0, "start"], [xmax, "end"]]) {
    const lab = svg("text", { x: X(x), y: h - 8, "text-anchor": anchor });
    lab.textContent = (+x.toFixed(1)) + " s";
    s.append(lab);
  }
  for (const se of series) {
    if (se.points.length === 0) continue;
    const pts = se.points.map(p => `${X(p[0]).toFixed(1)},${Y(p[1]).toFixed(1)}`).join(" ");
    s.append(svg("polyline", { points: pts, fill: "none", stroke: se.color, "stroke-width": 2 }));
    if (se.points.length === 1) {
      const p = se.points[0];
      s.append(svg("circle", { cx: X(p[0]), cy: Y(p[1]), r: 3, fill: se.color }));
    }
  }
  return s;
}

const COLORS = { "": "#1f6feb", forward: "#1f6feb", reverse: "#d97706" };

// charts for a list of intervals: throughput, and loss and jitter for UDP.
function intervalCharts(intervals, udp) {
  const flows = new Map();
  for (const iv of intervals) {
    const f = iv.flow || "";
    if (!flows.has(f)) flows.set(f, []);
    flows.get(f).push(iv);
  }
  const series = fn => [...flows.entries()].map(([f, ivs]) => ({ name: f, color: COLORS[f] || "#6941c6", points: ivs.map(iv => [iv.end_s, fn(iv)]) }));
  const box = el("div", { class: "charts" });
  box.append(chart("throughput", "Mbit/s", series(iv => iv.bits_per_second / 1e6)));
  if (udp) {
    box.append(chart("loss", "%", series(iv => lossPct(iv.lost, iv.packets))));
    box.append(chart("jitter", "ms", series(iv => iv.jitter_ms)));
  }
  return box;
}

function testLine(t) {
  const parts = [t.protocol, t.direction, t.dialect];
  if (t.peer) parts.push("from " + t.peer);
  if (t.streams > 1) parts.push(t.streams + " streams");
  if (t.mode) parts.push(t.mode);
  return parts.filter(Boolean).join(" · ");
}

// ---- live ----

function renderLive(id) {
  const lt = live.get(id);
  if (!lt) return;
  const last = lt.intervals[lt.intervals.length - 1];
  const now = last ? `${fmtRate(last.bits_per_second)} in the last interval` : "waiting for the first interval…";
  const dropped = lt.dropped_intervals > 0 ? el("div", { class: "muted" }, `${lt.dropped_intervals} older intervals not shown`) : null;
  const card = el("div", { class: "card live-test", "data-test-id": String(id) },
    el("h3", {}, `test ${id}`),
    el("div", { class: "meta" }, testLine(lt.test), " · started ", new Date(lt.started_at).toISOString().slice(11, 19), " UTC · ", now),
    dropped,
    intervalCharts(lt.intervals, lt.test.protocol === "udp"));
  if (lt.card) lt.card.replaceWith(card); else document.getElementById("live").append(card);
  lt.card = card;
  document.getElementById("live-empty").hidden = live.size > 0;
}

function removeLive(id) {
  const lt = live.get(id);
  if (!lt) return;
  if (lt.card) lt.card.remove();
  live.delete(id);
  document.getElementById("live-empty").hidden = live.size > 0;
}

function connect() {
  const state = document.getElementById("stream-state");
  const es = new EventSource("api/events");
  es.addEventListener("open", () => { state.textContent = "live"; });
  es.addEventListener("error", () => { state.textContent = "disconnected, retrying…"; });
  es.addEventListener("snapshot", e => {
    for (const id of [...live.keys()]) removeLive(id);
    for (const t of JSON.parse(e.data)) { live.set(t.id, t); renderLive(t.id); }
  });
  es.addEventListener("start", e => {
    const t = JSON.parse(e.data);
    live.set(t.id, t);
    renderLive(t.id);
  });
  es.addEventListener("interval", e => {
    const d = JSON.parse(e.data);
    const lt = live.get(d.id);
    if (!lt) return;
    lt.intervals.push(d.interval);
    if (lt.intervals.length > 600) { lt.intervals.shift(); lt.dropped_intervals++; }
    renderLive(d.id);
  });
  es.addEventListener("end", e => {
    const d = JSON.parse(e.data);
    removeLive(d.id);
    loadHistory();
  });
  es.addEventListener("dropped", () => {
    // The server dropped this page for falling behind; the browser
    // reconnects and a fresh snapshot follows.
    state.textContent = "fell behind; reconnecting…";
  });
}

// ---- history ----

function filterLabels() {
  return document.getElementById("label-filter").value.split(",").map(s => s.trim()).filter(Boolean);
}

async function loadHistory() {
  const q = new URLSearchParams();
  for (const l of filterLabels()) q.append("label", l);
  const note = document.getElementById("history-note");
  const body = document.querySelector("#history tbody");
  let runs;
  try {
    const resp = await fetch("api/runs?" + q.toString());
    if (!resp.ok) { note.textContent = "history: " + (await resp.text()); return; }
    runs = await resp.json();
  } catch (err) {
    note.textContent = "history could not be read: " + err;
    return;
  }
  note.textContent = runs.length === 0 ? "No finished run matches." : `${runs.length} run(s), newest first.`;
  body.replaceChildren(...runs.reverse().map(r => {
    const chips = Object.entries(r.labels || {}).sort().map(([k, v]) =>
      el("span", { class: "chip", title: "filter by this label", onclick: ev => { ev.stopPropagation(); addFilter(`${k}=${v}`); } }, `${k}=${v}`));
    return el("tr", { class: "link", "data-run-id": String(r.id), onclick: () => { location.hash = `#/run/${r.id}`; } },
      el("td", {}, el("a", { href: `#/run/${r.id}` }, r.id)),
      el("td", {}, r.started_at.slice(0, 19).replace("T", " ")),
      el("td", {}, r.target),
      el("td", {}, r.summary),
      el("td", {}, ...chips));
  }));
}

function addFilter(l) {
  const list = filterLabels();
  if (!list.includes(l)) list.push(l);
  document.getElementById("label-filter").value = list.join(", ");
  loadHistory();
}

// ---- one run ----

function kv(pairs) {
  const dl = el("dl", { class: "kv" });
  for (const [k, v] of pairs) {
    if (v === undefined || v === null || v === "") continue;
    dl.append(el("dt", {}, k), el("dd", {}, v));
  }
  return dl;
}

function counts(title, c, udp) {
  if (!c) return null;
  const pairs = [["bytes", c.bytes], ["rate", fmtRate(c.bits_per_second)], ["seconds", c.seconds]];
  if (udp) pairs.push(["datagrams", c.packets]);
  if (c.lost !== undefined && udp) {
    const total = c.total > 0 ? c.total : c.packets + Math.max(c.lost, 0);
    pairs.push(["lost", `${Math.max(c.lost, 0)}/${total} (${total > 0 ? (100 * Math.max(c.lost, 0) / total).toFixed(3) + " %" : "n/a"})`],
      ["out of order", c.out_of_order], ["duplicates", c.duplicates], ["jitter", c.jitter_ms + " ms"]);
  }
  if (c.source) pairs.push(["counted by", c.source === "local" ? "this server" : "the peer's report"]);
  return el("div", {}, el("h3", {}, title), kv(pairs));
}

async function showRun(id) {
  const body = document.getElementById("run-body");
  body.replaceChildren(el("p", { class: "muted" }, "loading…"));
  let run;
  try {
    const resp = await fetch(`api/runs/${encodeURIComponent(id)}`);
    if (!resp.ok) { body.replaceChildren(el("div", { class: "err" }, await resp.text())); return; }
    run = await resp.json();
  } catch (err) {
    body.replaceChildren(el("div", { class: "err" }, "run could not be read: " + err));
    return;
  }
  const r = run.result || {};
  const t = r.test || {};
  const udp = t.protocol === "udp";
  const parts = [el("h2", { id: "run-title" }, `run ${run.id}: ${run.summary}`)];
  if (r.error) parts.push(el("div", { class: "err" }, "Error: " + r.error));
  for (const w of r.warnings || []) parts.push(el("div", { class: "warn run-warning" }, "Warning: " + w));
  for (const d of r.diagnoses || []) parts.push(el("div", { class: "warn" }, "Diagnosis: " + d));
  parts.push(kv([["started", run.started_at], ["peer", t.peer || run.target], ["protocol", t.protocol], ["direction", t.direction],
    ["dialect", t.dialect], ["streams", t.streams], ["length", t.length ? t.length + " bytes" : ""], ["requested rate", t.rate_bps ? fmtRate(t.rate_bps) : ""],
    ["labels", Object.entries(run.labels || {}).sort().map(([k, v]) => `${k}=${v}`).join(", ")], ["version", r.version]]));
  if (r.link) {
    const l = r.link;
    parts.push(el("h3", {}, "Against the medium"), kv([["medium", l.medium], ["theoretical goodput", fmtRate(l.theoretical_bps)],
      ["measured", `${(+l.percent_of_theoretical).toFixed(1)} % of theoretical`], ["frames/s", Math.round(l.frames_per_second)],
      ["L2 / L1 rate", `${fmtRate(l.wire_l2_bps)} / ${fmtRate(l.wire_l1_bps)}`], ["diagnosis", l.diagnosis]]));
  } else {
    parts.push(el("p", { class: "muted" }, "No medium named: start the server with --medium to see % of the medium."));
  }
  const ivs = r.intervals || [];
  if (ivs.length > 0) parts.push(intervalCharts(ivs, udp));
  parts.push(el("div", { class: "charts" }, counts("receiver", r.receiver, udp), counts("sender", r.sender, udp)));
  if (r.reverse) parts.push(el("div", { class: "charts" }, counts("reverse receiver", r.reverse.receiver, udp), counts("reverse sender", r.reverse.sender, udp)));
  const head = ["flow", "start s", "end s", "bytes", "Mbit/s"].concat(udp ? ["datagrams", "lost", "out of order", "dup", "jitter ms"] : []);
  const rows = ivs.map(iv => el("tr", { class: "interval-row" },
    el("td", {}, iv.flow || ""), el("td", { class: "num" }, iv.start_s.toFixed(2)), el("td", { class: "num" }, iv.end_s.toFixed(2)),
    el("td", { class: "num" }, iv.bytes), el("td", { class: "num" }, (iv.bits_per_second / 1e6).toFixed(2)),
    ...(udp ? [iv.packets, iv.lost, iv.out_of_order, iv.duplicates, iv.jitter_ms.toFixed(3)].map(v => el("td", { class: "num" }, v)) : [])));
  parts.push(el("h3", {}, `Intervals (${ivs.length})`));
  if (ivs.length === 0) parts.push(el("p", { class: "muted" }, "This run has no intervals."));
  else parts.push(el("table", { id: "intervals" }, el("thead", {}, el("tr", {}, ...head.map(h => el("th", {}, h)))), el("tbody", {}, ...rows)));
  parts.push(el("p", {}, el("a", { href: `api/runs/${run.id}` }, "the run as JSON")));
  body.replaceChildren(...parts);
}

// ---- routing ----

function route() {
  const m = location.hash.match(/^#\/run\/(\d+)$/);
  document.getElementById("home").hidden = !!m;
  document.getElementById("run").hidden = !m;
  if (m) showRun(m[1]);
  else loadHistory();
}

async function serverInfo() {
  try {
    const info = await (await fetch("api/server")).json();
    const hist = info.history === "memory" ? "history: this server's results since it started" : "history: results store";
    document.getElementById("server-info").textContent = `${info.version} · ${hist}`;
  } catch (err) { /* the header stays empty; the rest still works */ }
}

document.getElementById("filter").addEventListener("submit", ev => { ev.preventDefault(); loadHistory(); });
document.getElementById("filter-clear").addEventListener("click", () => { document.getElementById("label-filter").value = ""; loadHistory(); });
window.addEventListener("hashchange", route);
serverInfo();
connect();
route();
