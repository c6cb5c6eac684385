package report

import (
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
)

// TestThroughputTableSaysNoneAndUnconfirmed: a size where no rate passed
// reads "none", never 0 pkt/s (the rate is below the lowest tried, not
// zero), and a rate that never held for the confirming trial carries a
// "*" and the footnote that says why.
func TestThroughputTableSaysNoneAndUnconfirmed(t *testing.T) {
	r := &result.RFC2544{Test: result.RFC2544Test{PDRPercent: 0.5, Schedule: result.RFC2544Schedule{ConfirmS: 10}}, Sizes: []result.RFC2544Size{
		{Size: 466, LinePPS: 25000, NDR: &result.SweepSize{HeldS: 0}, PDRPPS: 952, PDRBPS: 3.55e6, PDR: &result.SweepSize{HeldS: 1, LossPercent: ptr(0.212)}, Done: []string{result.RFC2544TestThroughput}},
		{Size: 1472, LinePPS: 8000, NDRPPS: 812, NDRBPS: 9.56e6, NDR: &result.SweepSize{HeldS: 10}, PDRPPS: 812, PDRBPS: 9.56e6, PDR: &result.SweepSize{HeldS: 10}, Done: []string{result.RFC2544TestThroughput}},
	}}
	var b strings.Builder
	writeRFCThroughput(&b, r)
	out := b.String()
	lines := strings.Split(out, "\n")
	var row466, row1472 string
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) > 0 && f[0] == "466" {
			row466 = l
		}
		if len(f) > 0 && f[0] == "1472" {
			row1472 = l
		}
	}
	if f := strings.Fields(row466); len(f) < 8 || f[1] != "none" || f[2] != "-" || f[4] != "952*" || f[7] != "-" {
		t.Errorf("466 B row %q: want NDR none, PDR 952* (unconfirmed)", row466)
	}
	if f := strings.Fields(row1472); len(f) < 8 || f[1] != "812" || f[3] != "10.2" || f[7] != "10" {
		t.Errorf("1472 B row %q: want a confirmed 812 pkt/s, 10.2 %% of line, held 10 s", row1472)
	}
	if !strings.Contains(out, "* not confirmed") {
		t.Errorf("no footnote for the unconfirmed rate:\n%s", out)
	}
	if strings.Contains(row466, " 0 ") {
		t.Errorf("466 B row prints a 0 rate: %q", row466)
	}
}

// TestRateNotFoundIsLeftOut: a size where no rate passed has no ndr_pps
// or ndr_bps in its JSON (ndr_found false) and an empty value in the CSV;
// a found rate keeps its figures.
func TestRateNotFoundIsLeftOut(t *testing.T) {
	sr := result.RFC2544Size{Size: 466, LinePPS: 25000, PDRPPS: 952, PDRBPS: 3.55e6, PDRFound: true, Done: []string{result.RFC2544TestThroughput}}
	b, err := json.Marshal(sr)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ndr_pps", "ndr_bps"} {
		if v, ok := m[k]; ok {
			t.Errorf("%s = %v in the JSON of a size without an NDR; want it left out", k, v)
		}
	}
	if m["ndr_found"] != false || m["pdr_pps"] != 952.0 || m["pdr_found"] != true {
		t.Errorf("JSON %s: want ndr_found false, pdr_pps 952, pdr_found true", b)
	}
	var csvOut strings.Builder
	if err := WriteRFC2544CSV(&csvOut, &result.RFC2544{Sizes: []result.RFC2544Size{sr}}); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(csvOut.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rows[1:] {
		got[r[3]] = r[4]
	}
	if v, ok := got["ndr_pps"]; !ok || v != "" {
		t.Errorf("CSV ndr_pps = %q (present %v); want the row with an empty value", v, ok)
	}
	if got["pdr_pps"] != "952" {
		t.Errorf("CSV pdr_pps = %q, want 952", got["pdr_pps"])
	}
}

func ptr(v float64) *float64 { return &v }

// TestDiscountedAndClockAreSaid: a size with trials this host spoiled says
// how many under the throughput table and in the CSV, with its NDR named
// this host's limit and marked a lower bound in its cell; the latency
// table says how the clock was decided.
func TestDiscountedAndClockAreSaid(t *testing.T) {
	r := &result.RFC2544{Test: result.RFC2544Test{PDRPercent: 0.5, Clock: result.RFC2544ClockShared, ClockWhy: "found: 198.18.0.2 is a lab host",
		Loads: []float64{50}}, Sizes: []result.RFC2544Size{
		{Size: 1472, LinePPS: 8000, NDRPPS: 700, NDRBPS: 8.2e6, NDRFound: true, NDR: &result.SweepSize{HeldS: 10, LimitedByHost: true}, PDRPPS: 700, PDR: &result.SweepSize{HeldS: 10},
			DiscountedTrials: 3, Latency: []result.RFC2544LatencyPoint{{LoadPercent: 50, Kind: result.RFC2544OneWay, P50MS: 0.1}},
			Done: []string{result.RFC2544TestThroughput, result.RFC2544TestLatency}},
	}}
	r.Test.Tests = []string{result.RFC2544TestThroughput, result.RFC2544TestLatency}
	var b, c strings.Builder
	if err := WriteRFC2544(&b, r, false); err != nil {
		t.Fatal(err)
	}
	if err := WriteRFC2544CSV(&c, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"host stalls spoiled 3 throughput trials at 1472 B", "at 1472 B the NDR is this host's limit", ">=700", "clock: shared (found: 198.18.0.2 is a lab host)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	if !strings.Contains(c.String(), "throughput,1472,,discounted_trials,3") {
		t.Errorf("CSV lacks the discounted trials:\n%s", c.String())
	}
}

// TestDecidedStallsSaidAsNote: trials this host spoiled, each decided by a
// clean re-run, are a note under the throughput table, not a warning; a
// sweep says the same of its own.
func TestDecidedStallsSaidAsNote(t *testing.T) {
	r := &result.RFC2544{Test: result.RFC2544Test{Tests: []string{result.RFC2544TestThroughput}}, Sizes: []result.RFC2544Size{
		{Size: 1472, LinePPS: 8000, NDRPPS: 800, NDRFound: true, NDR: &result.SweepSize{HeldS: 10}, PDRPPS: 800, PDR: &result.SweepSize{HeldS: 10},
			DiscountedTrials: 2, Discounted: []result.RFC2544Discounted{{Search: "NDR", Then: "run_again"}, {Search: "NDR", Then: "run_again"}},
			Done: []string{result.RFC2544TestThroughput}}}}
	var b strings.Builder
	if err := WriteRFC2544(&b, r, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\n  note: host stalls spoiled 2 throughput trials at 1472 B") || strings.Contains(b.String(), "warning") {
		t.Errorf("RFC 2544 text:\n%s", b.String())
	}
	sw := &result.Sweep{Sizes: []result.SweepSize{{Size: 1472, RatePPS: 800, Found: true, Confirmed: true, TrialLog: []result.SweepTrial{
		{Repeat: 1, RatePPS: 800, TrialS: 10, Verdict: "host_stalled"}, {Repeat: 1, RatePPS: 800, TrialS: 10, Verdict: "pass"}}}}}
	b.Reset()
	if err := WriteSweep(&b, sw); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\nnote: this host spoiled 1 trial at 1472 B") || strings.Contains(b.String(), "warning") {
		t.Errorf("sweep text:\n%s", b.String())
	}
}
