package htmlreport

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
)

// mixedMatrix is testdata/matrix.json (an iperf2-dialect matrix over
// loopback: its upload cells have no per-interval report of the receiver,
// and every cell's last interval runs past the 2 s test) with the UDP
// upload cell's result replaced by client-iperf3-20M-tbf16M.json, a 3 s
// upload whose receiver reported its intervals (it got ~15.5 of the 20
// Mbit/s offered, and its last interval starts at the end).
func mixedMatrix(t *testing.T) (Document, *result.Matrix) {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var doc map[string]any
	if err := json.Unmarshal(read("matrix.json"), &doc); err != nil {
		t.Fatal(err)
	}
	var upload any
	if err := json.Unmarshal(read("client-iperf3-20M-tbf16M.json"), &upload); err != nil {
		t.Fatal(err)
	}
	replaced := false
	for _, c := range doc["cells"].([]any) {
		cell := c.(map[string]any)
		if cell["protocol"] == "udp" && cell["direction"] == "upload" {
			cell["result"], replaced = upload, true
		}
	}
	if !replaced {
		t.Fatal("matrix.json has no UDP upload cell")
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Decode("mixed-matrix.json", b)
	if err != nil {
		t.Fatal(err)
	}
	var m result.Matrix
	if err := d.view(&m); err != nil {
		t.Fatal(err)
	}
	return d, &m
}

// cellOf is the cell of m with protocol and direction.
func cellOf(t *testing.T, m *result.Matrix, proto, dir string) result.MatrixCell {
	t.Helper()
	for _, c := range m.Cells {
		if c.Protocol == proto && c.Direction == dir && c.Result != nil {
			return c
		}
	}
	t.Fatalf("no %s %s cell with a result", proto, dir)
	return result.MatrixCell{}
}

// seriesNamed is the series of ss called name.
func seriesNamed(t *testing.T, ss []series, name string) series {
	t.Helper()
	for _, s := range ss {
		if s.name == name {
			return s
		}
	}
	var names []string
	for _, s := range ss {
		names = append(names, s.name)
	}
	t.Fatalf("no series %q among %q", name, names)
	return series{}
}

// wantSteps checks that s draws exactly the intervals of ivs that start
// before end, each as a step, the last cut at end.
func wantSteps(t *testing.T, s series, ivs []result.Interval, end float64) {
	t.Helper()
	var want []result.Interval
	for _, in := range ivs {
		if in.Start < end {
			want = append(want, in)
		}
	}
	if len(s.xys) != 2*len(want) {
		t.Fatalf("%s: %d points, want %d (two per interval starting before %g s)", s.name, len(s.xys), 2*len(want), end)
	}
	for i, in := range want {
		a, b := s.xys[2*i], s.xys[2*i+1]
		y := in.BitsPerSecond / 1e6
		if a.X != in.Start || b.X != math.Min(in.End, end) || a.Y != y || b.Y != y {
			t.Errorf("%s: step %d is (%g, %g)–(%g, %g), want %g–%g s at %g Mbit/s", s.name, i, a.X, a.Y, b.X, b.Y, in.Start, math.Min(in.End, end), y)
		}
	}
	if last := s.xys[len(s.xys)-1].X; last > end {
		t.Errorf("%s: drawn to %g s, past the test's end at %g s", s.name, last, end)
	}
}

// TestMatrixTimeChartsDrawWhatTheReceiverGot: each cell's line is the
// receiver's intervals where it reported them — the peer's report for an
// upload, the cell's own for a download — and stops at the test's end;
// an upload whose receiver sent no intervals is drawn as the sender's
// offer, and its chart's title and caption say so.
func TestMatrixTimeChartsDrawWhatTheReceiverGot(t *testing.T) {
	_, m := mixedMatrix(t)
	charts := matrixTimeCharts(m)
	if len(charts) != 2 {
		t.Fatalf("%d charts, want one per protocol", len(charts))
	}
	tcp, udp := charts[0], charts[1]

	// UDP: the upload's receiver reported its intervals.
	if udp.title != "Throughput over time, UDP cells" || udp.note != "" {
		t.Errorf("UDP chart: title %q, caption %q; want no word of unknown intervals", udp.title, udp.note)
	}
	up := cellOf(t, m, "udp", "upload")
	s := seriesNamed(t, udp.ss, "udp upload")
	if s.role != roleReceived {
		t.Errorf("udp upload: role %q, want %q", s.role, roleReceived)
	}
	wantSteps(t, s, up.Result.Receiver.Intervals, 3)
	got, _ := meanOf(s.xys)
	offered, _ := meanOf(steps(up.Result.Intervals, 3))
	if got > 0.8*offered {
		t.Errorf("udp upload: drawn %.2f Mbit/s of %.2f offered: the sender's intervals, not the receiver's (which got ~78 %%)", got, offered)
	}
	down := cellOf(t, m, "udp", "download")
	s = seriesNamed(t, udp.ss, "udp download")
	if s.role != roleReceived {
		t.Errorf("udp download: role %q, want %q", s.role, roleReceived)
	}
	wantSteps(t, s, down.Result.Intervals, 2)

	// TCP: the upload's receiver (an iperf2 server) reported no intervals.
	if !strings.Contains(tcp.title, "receiver's intervals are unknown") {
		t.Errorf("TCP chart title %q does not say the receiver's intervals are unknown", tcp.title)
	}
	if tcp.note != "tcp upload: "+noReceiverIntervals {
		t.Errorf("TCP chart caption %q, want the upload cell named with %q", tcp.note, noReceiverIntervals)
	}
	tup := cellOf(t, m, "tcp", "upload")
	s = seriesNamed(t, tcp.ss, "tcp upload, sender's offer")
	if s.role != roleOffered {
		t.Errorf("tcp upload: role %q, want %q", s.role, roleOffered)
	}
	wantSteps(t, s, tup.Result.Intervals, 2)
	s = seriesNamed(t, tcp.ss, "tcp download")
	if s.role != roleReceived {
		t.Errorf("tcp download: role %q, want %q", s.role, roleReceived)
	}
	wantSteps(t, s, cellOf(t, m, "tcp", "download").Result.Intervals, 2)
	if len(tcp.ss) != 2 || len(udp.ss) != 2 {
		t.Errorf("%d TCP and %d UDP series, want one per cell", len(tcp.ss), len(udp.ss))
	}
}

// TestMatrixReportSaysWhichCellsAreTheOffer: the built report carries the
// charts' titles and captions.
func TestMatrixReportSaysWhichCellsAreTheOffer(t *testing.T) {
	d, _ := mixedMatrix(t)
	r, page := buildHTML(t, []Document{d})
	byTitle := map[string]*Chart{}
	for _, c := range r.Charts() {
		byTitle[c.Title] = c
	}
	tcp := byTitle["Throughput over time, TCP cells (sender's offer where the receiver's intervals are unknown)"]
	udp := byTitle["Throughput over time, UDP cells"]
	if tcp == nil || udp == nil {
		t.Fatalf("charts %v: want a TCP chart saying the receiver's intervals are unknown and a plain UDP one", byTitle)
	}
	if tcp.Caption != "tcp upload: "+noReceiverIntervals || udp.Caption != "" {
		t.Errorf("captions %q and %q", tcp.Caption, udp.Caption)
	}
	if !strings.Contains(page, "the receiver&#39;s intervals are unknown") {
		t.Error("the page does not show the caption")
	}
}
