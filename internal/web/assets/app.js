// wirebench dashboard: live tests from /api/events, history from /api/runs,
// a run's detail from /api/runs/ID (tests, sweeps, matrices, RFC 2544 runs
// (rfc2544.js), other kinds),
// two runs side by side from /api/compare. Plain JavaScript, no external assets.
// Every chart is drawn by the server, with the HTML report's code, and
// fetched as SVG from /api/…/charts: this page draws none itself.
"use strict";

const live = new Map(); // test id -> {test, intervals, card, chartsBox, fetching, stale}

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

function fmtRate(bps) {
  if (!isFinite(bps)) return "n/a";
  if (bps >= 1e9) return (bps / 1e9).toFixed(2) + " Gbit/s";
  if (bps >= 1e6) return (bps / 1e6).toFixed(2) + " Mbit/s";
  if (bps >= 1e3) return (bps / 1e3).toFixed(2) + " kbit/s";
  return bps.toFixed(0) + " bit/s";
}

// chartFigure is one chart of an /api/…/charts answer: its SVG (parsed
// as XML, never run as HTML) and its caption.
function chartFigure(c) {
  const fig = el("figure", { class: "chart", "data-chart": c.id, "data-title": c.title });
  let root = null;
  if (c.svg) root = new DOMParser().parseFromString(c.svg, "image/svg+xml").documentElement;
  if (root && root.localName === "svg") fig.append(document.importNode(root, true));
  else fig.append(el("div", { class: "warn" }, `${c.title}: ${c.error || "the chart could not be read"}`));
  if (c.caption) fig.append(el("figcaption", {}, c.caption));
  return fig;
}

// loadCharts fills box with the charts of url. quiet: an answer that is
// not OK leaves the charts as they were (a live test that just ended).
async function loadCharts(box, url, quiet) {
  let charts;
  try {
    const resp = await fetch(url);
    if (!resp.ok) {
      if (!quiet) box.replaceChildren(el("div", { class: "err" }, "charts: " + (await resp.text())));
      return;
    }
    charts = await resp.json();
  } catch (err) {
    if (!quiet) box.replaceChildren(el("div", { class: "err" }, "the charts could not be read: " + err));
    return;
  }
  box.replaceChildren(...charts.map(chartFigure));
  box.dataset.charts = String(charts.length);
}

// runCharts is a box that fills with a saved run's charts.
function runCharts(id) {
  const box = el("div", { class: "charts", id: "run-charts" });
  loadCharts(box, `api/runs/${encodeURIComponent(id)}/charts`);
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
  if (!lt.chartsBox) lt.chartsBox = el("div", { class: "charts" });
  const card = el("div", { class: "card live-test", "data-test-id": String(id) },
    liveTitle(id),
    el("div", { class: "meta" }, testLine(lt.test), " · started ", new Date(lt.started_at).toISOString().slice(11, 19), " UTC · ", now),
    dropped,
    lt.chartsBox);
  if (lt.card) lt.card.replaceWith(card); else document.getElementById("live").append(card);
  lt.card = card;
  document.getElementById("live-empty").hidden = live.size > 0;
  if (lt.intervals.length > 0) refreshLiveCharts(id);
}

// LIVE_REFRESH_MS is the least time between two fetches of a live
// test's charts: the server draws them, and intervals may come every
// 100 ms.
const LIVE_REFRESH_MS = 1000;

// refreshLiveCharts refetches a live test's charts: one request at a
// time per test, at most one a second, and one more after it when
// intervals came meanwhile.
function refreshLiveCharts(id) {
  const lt = live.get(id);
  if (!lt) return;
  if (lt.fetching) { lt.stale = true; return; }
  lt.fetching = true;
  lt.stale = false;
  const started = Date.now();
  loadCharts(lt.chartsBox, `api/live/${id}/charts`, true).finally(() => {
    setTimeout(() => {
      lt.fetching = false;
      if (lt.stale && live.get(id) === lt) refreshLiveCharts(id);
    }, Math.max(0, LIVE_REFRESH_MS - (Date.now() - started)));
  });
}

// liveTitle names a test in progress by the server's test number, said
// so that it is not read as a run id: the run id is known once the run is
// kept, and the ended card links to it.
function liveTitle(id) {
  return el("h3", { title: "the server's test number; the run id follows once the run is saved" }, `live ${id}`);
}

// ENDED_SHOWN_MS is how long an ended test's card stays, linking to its
// run, before the history alone shows it.
const ENDED_SHOWN_MS = 60000;
const ended = new Map(); // test id -> its ended card
const savedEarly = new Map(); // test id -> a "saved" event that came before its "end"

// endLive turns a test's card into its ended card: its summary and the
// run it was kept as (a link), "saving…" until a results store says
// (pending), or why it was not kept.
function endLive(d) {
  removeLive(d.id);
  for (const sid of d.streams || []) removeLive(sid); // its parallel streams, each started as a test
  const run = el("span", { class: "run-link" });
  const card = el("div", { class: "card ended-test", "data-test-id": String(d.id) },
    el("h3", {}, `live ${d.id} ended`), el("div", { class: "meta" }, d.summary || "", " · ", run));
  ended.set(d.id, card);
  document.getElementById("live").append(card);
  const early = savedEarly.get(d.id);
  savedEarly.delete(d.id);
  if (d.run_id > 0) setRun(d.id, d.run_id, "");
  else if (early) setRun(d.id, early.run_id, early.warning);
  else if (d.pending) run.append("saving…");
  else run.append("not kept");
  setTimeout(() => { card.remove(); ended.delete(d.id); }, ENDED_SHOWN_MS);
}

// setRun links test id's ended card to run runID, or says why it was not
// saved.
function setRun(id, runID, warning) {
  const card = ended.get(id);
  if (!card) { savedEarly.set(id, { run_id: runID, warning }); return; }
  card.dataset.runId = String(runID || "");
  const span = card.querySelector(".run-link");
  if (runID > 0) span.replaceChildren("saved as ", el("a", { href: `#/run/${runID}` }, `run ${runID}`));
  else span.replaceChildren(el("span", { class: "warn" }, "not saved" + (warning ? ": " + warning : "")));
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
    endLive(JSON.parse(e.data));
    loadHistory();
  });
  es.addEventListener("saved", e => {
    const d = JSON.parse(e.data);
    setRun(d.id, d.run_id, d.warning);
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
    const tick = el("input", { type: "checkbox", class: "pick", value: String(r.id), title: "tick two runs, then Compare",
      onclick: ev => ev.stopPropagation(), onchange: updatePicks });
    // The list is redrawn whenever a test ends: keep what was ticked.
    tick.checked = picked.includes(String(r.id));
    return el("tr", { class: "link", "data-run-id": String(r.id), onclick: () => { location.hash = `#/run/${r.id}`; } },
      el("td", {}, tick),
      el("td", {}, el("a", { href: `#/run/${r.id}` }, r.id)),
      el("td", {}, r.started_at.slice(0, 19).replace("T", " ")),
      el("td", {}, r.target),
      el("td", {}, r.kind || ""),
      el("td", {}, r.summary),
      el("td", {}, ...chips));
  }));
  updatePicks();
}

// picked are the ticked runs in the order they were ticked: the first is
// the baseline A.
let picked = [];

function updatePicks() {
  const ticked = [...document.querySelectorAll("#history input.pick:checked")].map(c => c.value);
  picked = picked.filter(id => ticked.includes(id)).concat(ticked.filter(id => !picked.includes(id)));
  const btn = document.getElementById("compare-picked");
  btn.disabled = picked.length !== 2;
  document.getElementById("compare-note").textContent = picked.length === 2
    ? `run ${picked[1]} against run ${picked[0]} (the first ticked is the baseline)`
    : "Tick two runs to compare them.";
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
  const head = [el("h2", { id: "run-title" }, `run ${run.id}: ${run.summary}`)];
  if (r.error) head.push(el("div", { class: "err" }, "Error: " + r.error));
  for (const w of r.warnings || []) head.push(el("div", { class: "warn run-warning" }, "Warning: " + w));
  const tail = [compareWith(run.id), el("p", {}, el("a", { href: `api/runs/${run.id}` }, "the run as JSON"))];
  let parts;
  switch (run.kind) {
    case "test": parts = testParts(run, r); break;
    case "sweep": parts = sweepParts(run, r); break;
    case "matrix": parts = matrixParts(run, r); break;
    case "rfc2544": parts = rfc2544Parts(run, r); break;
    default: parts = otherParts(run, r);
  }
  body.replaceChildren(...head, ...parts, ...tail);
}

// compareWith is the run page's "compare with…" form: this run is the
// baseline A.
function compareWith(id) {
  const input = el("input", { id: "compare-other", type: "number", min: "1", placeholder: "run id", "aria-label": "run to compare with" });
  return el("form", { class: "compare-with", onsubmit: ev => {
    ev.preventDefault();
    if (input.value) location.hash = `#/compare/${id}/${input.value}`;
  } }, el("label", { for: "compare-other" }, `Compare run ${id} (as baseline) with run`), input, el("button", { type: "submit" }, "Compare"));
}

// testParts is the page of one test: medium, charts, counts, intervals.
function testParts(run, r) {
  const t = r.test || {};
  const udp = t.protocol === "udp";
  const parts = [];
  for (const d of r.diagnoses || []) parts.push(el("div", { class: "warn" }, "Diagnosis: " + d));
  parts.push(kv([["started", run.started_at], ["peer", t.peer || run.target], ["protocol", t.protocol], ["direction", t.direction],
    ["dialect", t.dialect], ["streams", t.streams], ["length", t.length ? t.length + " bytes" : ""], ["requested rate", t.rate_bps ? fmtRate(t.rate_bps) : ""],
    ["labels", Object.entries(run.labels || {}).sort().map(([k, v]) => `${k}=${v}`).join(", ")], ["version", r.version]]));
  if (r.link) {
    const l = r.link;
    parts.push(el("h3", {}, "Against the medium"), kv([["medium", l.medium], ["theoretical goodput", fmtRate(l.theoretical_bps)],
      ["measured", `${(+l.percent_of_theoretical).toFixed(1)} % of theoretical`], ["frames/s", Math.round(l.frames_per_second)],
      ["L2 / L1 rate", `${fmtRate(l.wire_l2_bps)} / ${fmtRate(l.wire_l1_bps)}`], ["diagnosis", l.diagnosis],
      ["status", l.status ? l.status + (l.reason ? `: ${l.reason}` : "") : ""]]));
  } else {
    parts.push(el("p", { class: "muted" }, "No medium named: start the server with --medium to see % of the medium."));
  }
  const ivs = r.intervals || [];
  parts.push(runCharts(run.id));
  parts.push(el("div", { class: "charts" }, counts("receiver", r.receiver, udp), counts("sender", r.sender, udp)));
  if (r.reverse) parts.push(el("div", { class: "charts" }, counts("reverse receiver", r.reverse.receiver, udp), counts("reverse sender", r.reverse.sender, udp)));
  const head = ["flow", "start s", "end s", "bytes", "Mbit/s"].concat(udp ? ["datagrams", "lost", "out of order", "dup", "jitter ms"] : []);
  const rows = ivs.map(iv => el("tr", { class: "interval-row" },
    el("td", {}, iv.flow || ""), el("td", { class: "num" }, iv.start_s.toFixed(2)), el("td", { class: "num" }, iv.end_s.toFixed(2)),
    el("td", { class: "num" }, iv.bytes), el("td", { class: "num" }, (iv.bits_per_second / 1e6).toFixed(2)),
    ...(udp ? [iv.packets, iv.lost, iv.out_of_order, iv.duplicates, iv.jitter_ms === undefined ? undefined : iv.jitter_ms.toFixed(3)]
      .map(v => el("td", { class: "num" }, v === undefined ? "-" : v)) : [])));
  parts.push(el("h3", {}, `Intervals (${ivs.length})`));
  if (ivs.length === 0) parts.push(el("p", { class: "muted" }, "This run has no intervals."));
  else parts.push(el("table", { id: "intervals" }, el("thead", {}, el("tr", {}, ...head.map(h => el("th", {}, h)))), el("tbody", {}, ...rows)));
  return parts;
}

function labelList(run) {
  return Object.entries(run.labels || {}).sort().map(([k, v]) => `${k}=${v}`).join(", ");
}

function table(id, head, rows) {
  return el("table", { id }, el("thead", {}, el("tr", {}, ...head.map(h => el("th", {}, h)))), el("tbody", {}, ...rows));
}

function num(v, digits) {
  if (v === undefined || v === null || !isFinite(v)) return "—";
  return digits === undefined ? String(v) : (+v).toFixed(digits);
}

// td is a table cell, numeric (right-aligned) unless cls says otherwise.
function td(v, cls) { return el("td", { class: cls === undefined ? "num" : cls }, v); }

// sweepParts is a sweep's page: the fastest loss-free rate per size against
// the line's, the cliffs marked and listed, and every size's figures.
function sweepParts(run, r) {
  const t = r.test || {};
  const sizes = r.sizes || [];
  const cliffs = r.cliffs || [];
  const parts = [kv([["started", run.started_at], ["target", run.target], ["mode", t.mode], ["medium", t.medium || "none named"],
    ["loss allowed", t.loss_percent !== undefined ? t.loss_percent + " %" : ""], ["trial", t.trial_s ? t.trial_s + " s" : (t.packets ? t.packets + " datagrams" : "")],
    ["repetitions", t.repeat], ["took", r.duration_s ? r.duration_s.toFixed(1) + " s" : ""], ["labels", labelList(run)], ["version", r.version]])];
  if (r.interrupted) parts.push(el("div", { class: "warn" }, "The sweep was interrupted: only the sizes shown were finished."));
  if (sizes.length > 0) parts.push(runCharts(run.id));
  else parts.push(el("p", { class: "muted" }, "This sweep finished no size."));
  parts.push(el("h3", {}, `Cliffs (${cliffs.length})`));
  if (cliffs.length === 0) parts.push(el("p", { class: "muted" }, "No cliff: the byte rate never fell by a fifth from one size to the next."));
  else parts.push(table("cliffs", ["below (B)", "above (B)", "rate below /s", "rate above /s", "to the byte", "hint"],
    cliffs.map(c => el("tr", { class: "cliff-row" }, td(c.below), td(c.above), td(num(c.rate_below_pps, 0)), td(num(c.rate_above_pps, 0)),
      td(c.exact ? "yes" : "no", ""), td(c.hint || "", "")))));
  parts.push(el("h3", {}, `Sizes (${sizes.length})`));
  parts.push(table("sweep-points", ["size (B)", "datagrams/s", "Mbit/s", "% of line", "loss %", "trials", "confirmed", "notes"],
    sizes.map(z => {
      const notes = [];
      if (z.limited_by_host) notes.push("limited by this host (a lower bound)");
      if (z.at_max) notes.push("at the highest rate tried");
      if (z.bisected) notes.push("bisected");
      if (z.repeats) notes.push(`${z.repeats.n} repeats, ±${num(z.repeats.ci95_percent, 1)} %${z.repeats.unstable ? " (unstable)" : ""}`);
      if (z.rtt_ms) notes.push(`RTT p50 ${num(z.rtt_ms.p50, 3)} ms`);
      return el("tr", { class: "sweep-point" + (z.limited_by_host ? " host-limited" : "") }, td(z.size),
        td(z.rate_pps > 0 ? num(z.rate_pps, 0) : "none"), td(z.rate_pps > 0 ? num(z.rate_bps / 1e6, 2) : "—"),
        td(z.percent_of_line === null || z.percent_of_line === undefined ? "—" : num(z.percent_of_line, 1)),
        td(z.loss_percent === null || z.loss_percent === undefined ? "—" : num(z.loss_percent, 3)), td(z.trials),
        td(z.confirmed ? "yes" : "no", ""), td(notes.join("; "), ""));
    })));
  return parts;
}

// matrixParts is a matrix's page: its cells.
function matrixParts(run, r) {
  const cells = r.cells || [];
  const parts = [kv([["started", run.started_at], ["target", run.target], ["dialect", r.dialect], ["duration", r.duration_s ? r.duration_s + " s per cell" : ""],
    ["medium", r.medium], ["labels", labelList(run)], ["version", r.version]])];
  parts.push(runCharts(run.id));
  parts.push(el("h3", {}, `Cells (${cells.length})`));
  parts.push(table("matrix-cells", ["protocol", "direction", "Mbit/s", "loss %", "jitter ms", "% of line", "basis", "status"],
    cells.map(c => el("tr", { class: "matrix-cell" }, td(c.protocol, ""), td(c.direction + (c.simultaneous ? " (simultaneous)" : ""), ""),
      td(c.bits_per_second === null || c.bits_per_second === undefined ? "—" : num(c.bits_per_second / 1e6, 2)), td(num(c.loss_percent, 3)),
      td(num(c.jitter_ms, 3)), td(num(c.percent_of_line, 1)), td(c.basis || "", ""), td(c.status + (c.reason ? `: ${c.reason}` : ""), "")))));
  return parts;
}

// otherParts shows any other kind (ping, request-response, …): its
// comparable figures, then the document itself.
function otherParts(run, r) {
  const parts = [kv([["kind", run.kind], ["started", run.started_at], ["target", run.target], ["labels", labelList(run)], ["version", r.version]]),
    runCharts(run.id)];
  const figs = run.figures || [];
  if (figs.length > 0) {
    parts.push(el("h3", {}, "Figures"), table("figures", ["figure", "value", "unit", "samples"],
      figs.map(f => el("tr", { class: "figure-row" }, td(f.name, ""), td(+f.value.toPrecision(6)), td(f.unit, ""), td(f.n || "")))));
  } else {
    parts.push(el("p", { class: "muted" }, "No figures this page knows how to draw for this kind of run; the document follows."));
  }
  parts.push(el("details", {}, el("summary", {}, "the result document"), el("pre", { class: "doc" }, JSON.stringify(r, null, 2))));
  return parts;
}

// ---- compare ----

function fmtFigure(v, unit) {
  if (!isFinite(v)) return "n/a";
  switch (unit) {
    case "bit/s": return fmtRate(v);
    case "ms": return v.toFixed(3) + " ms";
    case "%": return v.toFixed(3) + " %";
    case "1/s": return v.toFixed(1) + "/s";
  }
  return String(+v.toPrecision(6));
}

function fmtDifference(d) {
  const sign = d.difference >= 0 ? "+" : "−";
  let s = sign + fmtFigure(Math.abs(d.difference), d.unit);
  if (d.difference_ci95 !== undefined) s += ` ±${fmtFigure(d.difference_ci95, d.unit)}`;
  return s;
}

function fmtRatio(d) {
  if (d.ratio === null || d.ratio === undefined) return "—";
  let s = (100 * d.ratio).toFixed(1);
  if (d.ratio_ci95 !== undefined) s += ` ±${(100 * d.ratio_ci95).toFixed(1)}`;
  return s + " %";
}

// runWho names a compared run as `wirebench compare` does: the name the
// server gave it (the labels that tell the two runs apart), with its id
// ("link=usb (run 13)"), or "run 13" when labels do not tell them apart.
function runWho(name, id) {
  const byID = `run ${id}`;
  return !name || name === byID ? byID : `${name} (${byID})`;
}

async function showCompare(a, b) {
  const body = document.getElementById("compare-body");
  body.replaceChildren(el("p", { class: "muted" }, "loading…"));
  let c;
  try {
    const resp = await fetch(`api/compare?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`);
    if (!resp.ok) { body.replaceChildren(el("div", { class: "err" }, await resp.text())); return; }
    c = await resp.json();
  } catch (err) {
    body.replaceChildren(el("div", { class: "err" }, "the comparison could not be read: " + err));
    return;
  }
  const words = { regression: "Regression", improvement: "Improvement", same: "No change beyond the tolerance" };
  const parts = [el("h2", { id: "compare-title" }, `${runWho(c.b_name, c.b.id)} against ${runWho(c.a_name, c.a.id)}`),
    el("div", { id: "compare-verdict", class: "verdict " + c.verdict }, words[c.verdict] || c.verdict,
      c.regressions.length ? `: ${c.regressions.join(", ")} worse` : "",
      ` (changes within ${(100 * c.tolerance).toFixed(1)} % of A, or within the 95 % interval, count as the same)`),
    kv([["A (baseline)", el("a", { href: `#/run/${c.a.id}` }, `${runWho(c.a_name, c.a.id)}: ${c.a.summary}`)],
      ["B", el("a", { href: `#/run/${c.b.id}` }, `${runWho(c.b_name, c.b.id)}: ${c.b.summary}`)]])];
  for (const w of c.warnings) parts.push(el("div", { class: "warn" }, "Warning: " + w));
  if (c.metrics.length === 0) parts.push(el("p", { class: "muted" }, "The two runs share no figure."));
  else parts.push(table("compare-table", ["figure", "A", "B", "B/A (95 % CI)", "B−A (95 % CI)", "verdict"],
    c.metrics.map(d => el("tr", { class: "compare-row " + d.verdict, "data-metric": d.name },
      // A figure that is only a bound (an RFC 2544 back-to-back search this host qualified) shows the bound, no difference.
      td(d.name, ""), td(d.a_bound ? d.a_bound + " (bound)" : fmtFigure(d.a, d.unit)), td(d.b_bound ? d.b_bound + " (bound)" : fmtFigure(d.b, d.unit)),
      td(fmtRatio(d)), td(d.a_bound || d.b_bound ? "—" : fmtDifference(d)),
      td(d.verdict + (d.higher_is_better ? "" : " (lower is better)"), "verdict-cell")))));
  if (c.only_in_a.length + c.only_in_b.length > 0) {
    parts.push(el("p", { class: "muted" }, `Not compared: only in A: ${c.only_in_a.join(", ") || "none"}; only in B: ${c.only_in_b.join(", ") || "none"}.`));
  }
  const charts = el("div", { class: "charts", id: "compare-charts" });
  loadCharts(charts, `api/compare/charts?a=${c.a.id}&b=${c.b.id}`);
  parts.push(charts);
  parts.push(el("p", {}, el("a", { href: `#/compare/${c.b.id}/${c.a.id}` }, "swap A and B"), " · ",
    el("a", { href: `api/compare?a=${c.a.id}&b=${c.b.id}` }, "the comparison as JSON")));
  body.replaceChildren(...parts);
}

// ---- routing ----

function route() {
  const m = location.hash.match(/^#\/run\/(\d+)$/);
  const c = location.hash.match(/^#\/compare\/(\d+)\/(\d+)$/);
  document.getElementById("home").hidden = !!(m || c);
  document.getElementById("run").hidden = !m;
  document.getElementById("compare").hidden = !c;
  if (m) showRun(m[1]);
  else if (c) showCompare(c[1], c[2]);
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
document.getElementById("compare-picked").addEventListener("click", () => {
  if (picked.length === 2) location.hash = `#/compare/${picked[0]}/${picked[1]}`;
});
document.getElementById("filter-clear").addEventListener("click", () => { document.getElementById("label-filter").value = ""; loadHistory(); });
window.addEventListener("hashchange", route);
serverInfo();
connect();
route();
