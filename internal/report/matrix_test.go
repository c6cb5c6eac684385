package report

import (
	"encoding/csv"
	"github.com/wirebench/wirebench/internal/result"
	"strings"
	"testing"
)

func matrixFixture() *result.Matrix {
	up, jit, loss := 93.5e6, 0.25, 0.5
	sent := 40e6
	return &result.Matrix{Host: "192.0.2.1", Port: 5001, Dialect: "iperf2", Duration: 2.5, RatePPS: 1000, Medium: "eth100",
		Cells: []result.MatrixCell{
			{Protocol: "tcp", Direction: result.MatrixUpload, Method: "client sends", BitsPerSecond: &up, Basis: "receiver", Status: "ok"},
			{Protocol: "udp", Direction: result.MatrixUpload, Method: "client sends", BitsPerSecond: &sent, LossPercent: &loss, JitterMS: &jit, Basis: "sender", Status: "ok"},
			{Protocol: "udp", Direction: result.MatrixDownload, Status: "unsupported", Reason: "no header"},
		},
		Warnings: []string{"a warning"}}
}

// The text shows the run's head, a line per cell (dashes for what is
// absent), the grid with "-" for a cell never planned, the sender's count
// marked, and the warnings.
func TestWriteMatrix(t *testing.T) {
	var b strings.Builder
	if err := WriteMatrix(&b, matrixFixture()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"matrix: 192.0.2.1 port 5001, iperf2 dialect, 2.5 s per cell, UDP at 1000 pps, medium eth100\n",
		"TCP      upload             client sends          93.50         -           -        -  ok\n",
		"UDP      upload             client sends          40.00    0.50 %    0.250 ms        -  ok (sender's count)\n",
		"unsupported: no header\n",
		"upload (we send, peer receives)           93.50         40.00*\n",
		"download (peer sends, we receive)              -    unsupported\n",
		"* what was sent: the peer does not report what it received\n",
		"warning: a warning\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
}

// A cell that failed part-way keeps its partial figure in its own row,
// marked failed with its reason, and the grid, which is read as the
// results, says failed; the reason is not said again as a warning (the
// JSON's warnings keep it).
func TestWriteMatrixFailedCellIsNoResultInTheGrid(t *testing.T) {
	m := matrixFixture()
	partial := 49.03e6
	m.Cells[1] = result.MatrixCell{Protocol: "udp", Direction: result.MatrixUpload, Method: "client sends", BitsPerSecond: &partial,
		Basis: "sender", Status: "failed", Reason: "the test ended early: the peer's port is closed"}
	m.Warnings = append(m.Warnings, m.Cells[1].Name()+": our host refused 5 datagrams", m.Cells[1].Name()+": failed: "+m.Cells[1].Reason)
	var b strings.Builder
	if err := WriteMatrix(&b, m); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"UDP      upload             client sends          49.03         -           -        -  failed (sender's count): the test ended early",
		"upload (we send, peer receives)           93.50         failed\n",
		"warning: udp upload: our host refused 5 datagrams\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "the peer's port is closed"); n != 1 {
		t.Errorf("the failed cell's reason said %d times, want once (its row):\n%s", n, out)
	}
}

// The CSV has a row per cell and leaves absent figures empty, never 0.
func TestWriteMatrixCSV(t *testing.T) {
	var b strings.Builder
	if err := WriteMatrixCSV(&b, matrixFixture()); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || rows[0][4] != "bits_per_second" {
		t.Fatalf("rows %q", rows)
	}
	if got := strings.Join(rows[2], ","); got != "udp,upload,false,client sends,40000000,0.5,0.25,,sender,ok," {
		t.Errorf("udp upload row %q", got)
	}
	if got := strings.Join(rows[3], ","); got != "udp,download,false,,,,,,,unsupported,no header" {
		t.Errorf("udp download row %q", got)
	}
}

// Several cells with the same cause say it once, with the count and names
// of the cells in table order; a cause of one cell, and the matrix's own
// warnings, stay as they are, each where it first came.
func TestWriteMatrixWarningsOncePerCause(t *testing.T) {
	m := matrixFixture()
	tcpDown := result.MatrixCell{Protocol: "tcp", Direction: result.MatrixDownload, Status: "ok"}
	m.Cells = append(m.Cells[:1], append([]result.MatrixCell{tcpDown}, m.Cells[1:]...)...)
	const mss = "--medium: TCP is placed assuming full-size segments"
	m.Warnings = []string{
		"tcp download: " + mss,
		"tcp upload: " + mss,
		"udp upload: the sender fell behind its pacing",
		"the UDP cells ran at iperf's default 1 Mbit/s",
	}
	var b strings.Builder
	if err := WriteMatrix(&b, m); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	want := "warning: 2 cells (tcp upload, tcp download): " + mss + "\n" +
		"warning: udp upload: the sender fell behind its pacing\n" +
		"warning: the UDP cells ran at iperf's default 1 Mbit/s\n"
	if !strings.HasSuffix(out, want) {
		t.Errorf("text ends\n%s\nwant it to end\n%s", out[strings.Index(out, "warning"):], want)
	}
}
