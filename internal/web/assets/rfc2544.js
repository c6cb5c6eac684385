// wirebench dashboard: the page of a saved RFC 2544 run (kind "rfc2544",
// docs/rfc2544.md): its charts (drawn by the server as the report draws
// them: throughput per size against the line rate, the frame loss curve
// per size, the latency against the load per size) and RFC 2544's tables,
// one per test with the sizes as rows. It uses the helpers of app.js (el,
// kv, table, td, num, runCharts), which are called only once both scripts
// have loaded.
"use strict";

function rfcDone(z, test) { return (z.done || []).includes(test); }

// rfc2544Parts is an RFC 2544 run's page.
function rfc2544Parts(run, r) {
  const t = r.test || {};
  const tests = t.tests || [];
  const sizes = [...(r.sizes || [])].sort((a, b) => a.size - b.size);
  const parts = [kv([["started", run.started_at], ["target", run.target], ["far end", t.mode], ["medium", t.medium],
    ["tests", tests.join(", ")], ["partial drop rate", t.pdr_percent !== undefined ? `loss ≤ ${t.pdr_percent} %` : ""],
    ["trials", t.strict ? "RFC 2544's lengths" : "short, then a confirming trial"], ["took", r.seconds ? r.seconds.toFixed(0) + " s" : ""],
    ["labels", labelList(run)], ["version", r.version]])];
  if (r.interrupted) parts.push(el("div", { class: "warn" }, "The run was interrupted: only what is shown was finished."));
  // The run's warnings (shown above) hold each size's, prefixed with it.
  const shown = new Set(r.warnings || []);
  for (const z of sizes) for (const w of z.warnings || []) {
    if (!shown.has(`${z.size} B: ${w}`)) parts.push(el("div", { class: "warn run-warning" }, `Warning: ${z.size} B: ${w}`));
  }
  if (sizes.length === 0) {
    parts.push(el("p", { class: "muted" }, "This run finished no size."));
    return parts;
  }
  parts.push(runCharts(run.id));
  if (tests.includes("throughput")) parts.push(...rfcThroughputTable(t, sizes));
  if (tests.includes("latency")) parts.push(...rfcLatencyTable(t, sizes));
  if (tests.includes("loss")) parts.push(...rfcLossTable(sizes));
  if (tests.includes("backtoback")) parts.push(...rfcBackToBackTable(sizes));
  return parts;
}

function rfcThroughputTable(t, sizes) {
  const ndr = z => z.ndr_pps > 0, pdr = z => z.pdr_pps > 0;
  const rows = sizes.filter(z => rfcDone(z, "throughput")).map(z => el("tr", { class: "rfc-row" }, td(z.size),
    td(ndr(z) ? num(z.ndr_pps, 0) : "none"), td(ndr(z) ? num(z.ndr_bps / 1e6, 3) : "—"),
    td(ndr(z) && z.line_pps > 0 ? num(100 * z.ndr_pps / z.line_pps, 1) : "—"),
    td(pdr(z) ? num(z.pdr_pps, 0) : "none"), td(pdr(z) ? num(z.pdr_bps / 1e6, 3) : "—"),
    td(z.pdr && pdr(z) ? num(z.pdr.loss_percent, 3) : "—"), td(num(z.line_pps, 0)),
    td(z.ndr && z.ndr.limited_by_host ? "limited by this host (a lower bound)" : "", "")));
  return [el("h3", {}, `Throughput (NDR: no loss; PDR: loss ≤ ${t.pdr_percent} %)`),
    table("rfc-throughput", ["size (B)", "NDR pkt/s", "NDR Mbit/s", "% of line", "PDR pkt/s", "PDR Mbit/s", "PDR loss %", "line pkt/s", "notes"], rows)];
}

function rfcLatencyTable(t, sizes) {
  const loads = t.latency_loads_percent || [];
  const rows = sizes.filter(z => rfcDone(z, "latency")).map(z => {
    if ((z.latency || []).length === 0) {
      return el("tr", { class: "rfc-row" }, td(z.size), el("td", { colspan: String(Math.max(1, loads.length)) }, "not measured: " + (z.latency_note || "")));
    }
    return el("tr", { class: "rfc-row" }, td(z.size), ...loads.map(l => {
      const p = z.latency.find(p => p.load_percent === l);
      return td(p ? `${num(p.p50_ms, 3)} / ${num(p.p99_ms, 3)} / ${num(p.max_ms, 3)}${p.host_limited ? " *" : ""}` : "—");
    }));
  });
  // The points' kind says what they measured (docs/rfc2544.md).
  const kinds = {
    one_way: "Latency at load (one way, same clock, ms: p50 / p99 / max at each share of the NDR)",
    delay_variation: "Delay variation at load (NOT latency: ms above each trial's fastest datagram, clocks not shared: p50 / p99 / max at each share of the NDR)",
  };
  const first = sizes.map(z => (z.latency || [])[0]).find(p => p);
  const title = (first && kinds[first.kind]) || "Latency at load (round trip, ms: p50 / p99 / max at each share of the NDR)";
  return [el("h3", {}, title),
    table("rfc-latency", ["size (B)", ...loads.map(l => `${l} %`)], rows)];
}

function rfcLossTable(sizes) {
  const steps = [100, 90, 80, 70, 60, 50, 40, 30, 20, 10];
  const rows = sizes.filter(z => rfcDone(z, "loss")).map(z => el("tr", { class: "rfc-row" }, td(z.size), ...steps.map(s => {
    const p = (z.loss_curve || []).find(p => p.offered_percent === s);
    return td(p ? num(p.loss_percent, 2) + (p.host_limited ? " *" : "") : "—");
  })));
  return [el("h3", {}, "Frame loss rate (% lost at each share of the medium's maximum rate; * this host sent less than asked; — not run)"),
    table("rfc-loss", ["size (B)", ...steps.map(s => `${s} %`)], rows)];
}

function rfcBackToBackTable(sizes) {
  const rows = sizes.filter(z => rfcDone(z, "backtoback") && z.back_to_back).map(z => {
    const bb = z.back_to_back;
    return el("tr", { class: "rfc-row" }, td(z.size), td((bb.capped ? "≥ " : "") + z.back_to_back_frames), td(num(z.back_to_back_us, 1)),
      td(bb.min_frames), td(bb.max_frames), td((bb.searches || []).length), td(bb.at_line_rate ? "yes" : `no (${num(bb.slowest_percent_of_line, 0)} %)`, ""));
  });
  return [el("h3", {}, "Back-to-back frames (longest burst at line rate with no loss)"),
    table("rfc-backtoback", ["size (B)", "frames", "line time µs", "min", "max", "searches", "at line rate"], rows)];
}
