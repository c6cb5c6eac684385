package main

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestTableOfRecordedRun renders a real --quick --json run (recorded on a
// loaded 2-CPU machine) and checks that its figures appear as computed.
func TestTableOfRecordedRun(t *testing.T) {
	rep, err := readReport(filepath.Join("testdata", "quick-run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	writeTable(&b, rep)
	out := squash(b.String())
	for _, want := range []string{
		"quick mode, 114 s, 2 CPUs, load 15.52 16.52 12.90 -> 14.74 16.15 13.18",
		"iperf2: iperf version 2.1.8",
		"Loss-free UDP rate",
		"18      154 k *  28.9 k       -      5.34x              1/5/5", // iperf3 found no loss-free rate: "-"
		"* no loss at the tool's own highest send rate",
		"64     82.6 k       -  3.18 k     26.02x              5/5/5",
		"1470      203 k  47.6 k  36.1 k      4.26x  203 k / 0.0%  29.2 k / 38.7%  25.4 k / 29.7%",
		"1       9.15    2.40    5.86      1.56x",
		"tcp, 1 stream(s)      0.376    0.437    0.451      0.86x",
		"100 kbit/s  99.32 kbit/s  -0.68%  110.5 kbit/s  +10.46%  99.76 kbit/s   -0.24%",
	} {
		if !strings.Contains(out, squash(want)) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"NaN", "Inf", "%!", "failed"} {
		if strings.Contains(out, bad) {
			t.Errorf("table has %q:\n%s", bad, out)
		}
	}
}

// TestTableShowsFailures: a failed test leaves its figure out ("-",
// "failed") and is listed with its error.
func TestTableShowsFailures(t *testing.T) {
	rep := &Report{Schema: Schema, Plan: plan(true),
		LossFree: []SearchRow{{Length: 64, Tools: map[string]Search{Wirebench: {BestPPS: 1000}}}},
		MaxSend:  []SizeRow{{Length: 64, Tools: map[string]Trial{Wirebench: {Error: "wirebench: no receiver counts"}}}},
		Pacing:   []PaceRow{{RateBPS: 1e6, Tools: map[string]PaceStat{Wirebench: {AchievedBPS: 1e6}, Iperf2: {Error: "iperf2 server: no UDP report"}}}},
		Errors:   []string{"pacing iperf2 1 Mbit/s: iperf2 server: no UDP report"},
	}
	var b bytes.Buffer
	writeTable(&b, rep)
	out := squash(b.String())
	for _, want := range []string{"64 1 k - - -", "64 - - - - failed - -", "1 Mbit/s 1 Mbit/s +0.00% failed - - -", "1 test failed", "no UDP report"} {
		if !strings.Contains(out, squash(want)) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if _, err := readReport(filepath.Join("testdata", "wb-udp.json")); err == nil || !strings.Contains(err.Error(), "schema") {
		t.Errorf("a wirebench/1 document read as a bench report: %v", err)
	}
}

// squash writes every run of spaces as one, so that checks do not depend
// on the column widths.
func squash(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.Join(lines, "\n")
}

// TestOnlyTCP: --only tcp keeps the TCP streams and drops the UDP sizes
// and pacing rates; the table of such a run shows the TCP and CPU sections
// and none of the empty ones. A part that does not exist is refused.
func TestOnlyTCP(t *testing.T) {
	pl := plan(true)
	if err := pl.restrict("tcp"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pl.Streams, []int{1, 2, 4, 8}) || len(pl.Sizes) != 0 || len(pl.PaceRates) != 0 || pl.Only != "tcp" {
		t.Fatalf("--only tcp plan: streams %v, sizes %v, pacing %v, only %q", pl.Streams, pl.Sizes, pl.PaceRates, pl.Only)
	}
	if err := pl.restrict("tpc"); err == nil {
		t.Error("--only tpc was accepted")
	}
	rep, err := readReport(filepath.Join("testdata", "quick-run.json"))
	if err != nil {
		t.Fatal(err)
	}
	rep.LossFree, rep.MaxSend, rep.Pacing = nil, nil, nil
	rep.CPU = rep.CPU[:1]
	var b bytes.Buffer
	writeTable(&b, rep)
	out := b.String()
	for _, want := range []string{"TCP: the receiver's Gbit/s", "CPU seconds per GB", "tcp, 1 stream(s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("TCP-only table lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"Loss-free", "Highest paced", "Pacing:"} {
		if strings.Contains(out, bad) {
			t.Errorf("TCP-only table has the empty section %q:\n%s", bad, out)
		}
	}
}

func TestTableMany(t *testing.T) {
	rep := &Report{Schema: Schema, Many: &ManyRow{Plan: DefaultMany, UDPReports: 598, UDPNoAck: 2, TCPDone: 200, Iperf3Done: 200,
		ServerUDP: 600, ServerTCP: 400, PeakRssAnonKiB: 50 * 1024, SocketDrops: 7, GoroutinesIdle: 16, GoroutinesAfter: 15,
		Failed: map[string]string{"udp": "exit status 0: WARNING: did not receive ack\nof last datagram"}}}
	var b strings.Builder
	writeTable(&b, rep)
	for _, want := range []string{"1000 clients at once", "UDP 598/600 with the server report (2 \"did not receive ack\")",
		"TCP 200/200, iperf3 200/200", "dropped 7 datagrams", "peak RssAnon 50.0 MiB; goroutines 16 idle, 15 after",
		"first udp client that did not complete: exit status 0: WARNING: did not receive ack | of last datagram"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}
