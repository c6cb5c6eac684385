package htmlreport

import (
	"math"
	"strings"
	"testing"
)

// checkMatrixInBrowser: each cell of the table with a goodput has, in its
// protocol's time chart, the series that carries it (what its receiver
// got: the received or the reverse flow, or the sender's offer where the
// receiver's intervals are unknown), whose mean over the cell's time is
// the table's figure within 5 %.
func checkMatrixInBrowser(t *testing.T, s pageSection) {
	t.Helper()
	tb := s.Tables[0]
	p, d, m := col(t, tb.Head, "protocol"), col(t, tb.Head, "direction"), col(t, tb.Head, "Mbit/s")
	for _, row := range tb.Rows {
		if row[m] == "–" {
			continue
		}
		want := num(t, row[m])
		name := row[p] + " " + row[d]
		var best float64
		found := false
		for _, c := range s.Charts {
			if !strings.HasPrefix(c.Caption, "Throughput over time, "+strings.ToUpper(row[p])) {
				continue
			}
			for _, se := range c.Series {
				if !strings.HasPrefix(se.Name, name) {
					continue
				}
				carries := se.Role == roleReceived || se.Role == roleReverse ||
					(row[d] == "upload" && se.Role == roleOffered)
				if carries {
					found, best = true, stepMean(pagePoints(t, se.Points))
				}
			}
		}
		if !found {
			t.Errorf("matrix cell %s (%.2f Mbit/s in the table) has no series of what its receiver got", name, want)
			continue
		}
		if math.Abs(best-want) > 0.05*want {
			t.Errorf("matrix cell %s: its series averages %.2f Mbit/s, the table says %.2f", name, best, want)
		}
	}
}

// checkPingInBrowser: every size with replies has its p50 RTT in the RTT
// chart, its wire minimum on the dashed line, and its implied rate in the
// implied-rate chart, each as the table has it.
func checkPingInBrowser(t *testing.T, s pageSection) {
	t.Helper()
	tb := s.Tables[0]
	series := map[string][]xy{} // by chart ("RTT", "Implied") and role
	for _, c := range s.Charts {
		chart, _, _ := strings.Cut(strings.ReplaceAll(c.Caption, ":", " "), " ")
		for _, se := range c.Series {
			series[chart+" "+se.Role] = pagePoints(t, se.Points)
		}
	}
	sz, rx, p50 := col(t, tb.Head, "size (B)"), col(t, tb.Head, "received"), col(t, tb.Head, "p50")
	wire, rate := col(t, tb.Head, "wire minimum RTT (ms)"), col(t, tb.Head, "implied Mbit/s")
	for _, row := range tb.Rows {
		if num(t, row[rx]) == 0 {
			continue
		}
		x := num(t, row[sz])
		for _, w := range []struct {
			role string
			cell int
		}{{"RTT p50", p50}, {"RTT limit", wire}, {"Implied measured", rate}} {
			y, ok := pointAt(series[w.role], x)
			want := num(t, row[w.cell])
			if !ok || math.Abs(y-want) > halfDigit(row[w.cell])+1e-6*want { // the hook has 7 digits
				t.Errorf("ping %g B: the %s series has %g (present %v), the table %s", x, w.role, y, ok, row[w.cell])
			}
		}
	}
}

// checkRFC2544InBrowser: every size of the throughput table with an NDR
// has it in the Mbit/s chart, and as a share of its line rate in the
// frame-rate chart, whose medium line is at 100 % for it.
func checkRFC2544InBrowser(t *testing.T, s pageSection) {
	t.Helper()
	var tb *struct {
		Name string
		Head []string
		Rows [][]string
	}
	for i := range s.Tables {
		if s.Tables[i].Name == "throughput" {
			tb = &s.Tables[i]
		}
	}
	if tb == nil {
		t.Fatal("no throughput table in the RFC 2544 section")
	}
	charts := map[string]map[string][]xy{}
	for _, c := range s.Charts {
		charts[c.Caption] = map[string][]xy{}
		for _, se := range c.Series {
			charts[c.Caption][se.Role] = pagePoints(t, se.Points)
		}
	}
	var mbit, share map[string][]xy
	for cap, ss := range charts {
		switch {
		case strings.HasPrefix(cap, "Throughput"):
			mbit = ss
		case strings.HasPrefix(cap, "Frame rate"):
			share = ss
		}
	}
	if mbit == nil || share == nil {
		t.Fatalf("RFC 2544 charts %v: want the throughput in Mbit/s and against the medium's frame rate", len(charts))
	}
	sz, pps, bps, line := col(t, tb.Head, "size (B)"), col(t, tb.Head, "NDR pkt/s"), col(t, tb.Head, "NDR Mbit/s"), col(t, tb.Head, "line pkt/s")
	for _, row := range tb.Rows {
		if row[pps] == "none" || num(t, row[pps]) == 0 {
			continue // no rate passed: no point, the table says so
		}
		x := num(t, row[sz])
		if y, ok := pointAt(mbit["ndr"], x); !ok || math.Abs(y-num(t, row[bps])) > 0.01*num(t, row[bps]) {
			t.Errorf("RFC 2544 %g B: NDR %g Mbit/s on the chart (present %v), %s in the table", x, y, ok, row[bps])
		}
		want := 100 * num(t, row[pps]) / num(t, row[line])
		if y, ok := pointAt(share["ndr"], x); !ok || math.Abs(y-want) > 0.01*want {
			t.Errorf("RFC 2544 %g B: NDR %g %% of the medium's frame rate on the chart (present %v), the table's %s/%s is %.2f %%", x, y, ok, row[pps], row[line], want)
		}
		if y, ok := pointAt(share["line"], x); !ok || y != 100 {
			t.Errorf("RFC 2544 %g B: no medium frame rate drawn at 100 %% (%g, %v)", x, y, ok)
		}
	}
}

// checkClientInBrowser: the client run's throughput chart draws what the
// receiver got, averaging the table's receiver goodput within 5 %.
func checkClientInBrowser(t *testing.T, s pageSection) {
	t.Helper()
	tb := s.Tables[0]
	var want float64
	for _, row := range tb.Rows {
		if row[0] == "receiver" {
			want = num(t, row[1])
		}
	}
	for _, c := range s.Charts {
		for _, se := range c.Series {
			if se.Role == roleReceived || se.Role == roleReceivedAvg {
				if got := stepMean(pagePoints(t, se.Points)); math.Abs(got-want) > 0.05*want {
					t.Errorf("client: the received series averages %.2f Mbit/s, the table %.2f", got, want)
				}
				return
			}
		}
	}
	t.Errorf("client: no series of what the receiver got (table: %.2f Mbit/s)", want)
}

// halfDigit is half a unit of the last digit a table cell shows: how far
// the figure it rounds can be from it.
func halfDigit(cell string) float64 {
	_, frac, _ := strings.Cut(strings.TrimSpace(cell), ".")
	return 0.5*math.Pow(10, -float64(len(frac))) + 1e-12
}
