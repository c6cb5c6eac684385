package report

import (
	"bytes"
	"encoding/csv"
	"errors"
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/wirebench/wirebench/internal/result"
)

func TestFormatHelpers(t *testing.T) {
	tests := []struct{ name, got, want string }{
		{"percent zero", percentText(0), "0"},
		{"percent iperf", percentText(100 * 2 / 51.0), "3.9"},
		{"percent half", percentText(50), "50"},
		{"percent all", percentText(100), "100"},
		{"percent small", percentText(0.01234), "0.012"},
		{"percent tiny", percentText(1e-7), "0.0000001"},
		{"percent NaN", percentText(math.NaN()), "n/a"},
		{"loss", lossText(2, 51), "2/51 (3.9%)"},
		{"loss total 0", lossText(0, 0), "0/0 (n/a)"},
		{"loss negative", lossText(-2, 128), "0/128 (0%)"},
		{"thousands", thousands(8137.6), "8,138"},
		{"thousands million", thousands(1488095.2), "1,488,095"},
		{"thousands small", thousands(999), "999"},
		{"thousands NaN", thousands(math.NaN()), "n/a"},
		{"bits", bitsText(95.7e6, 1, 0), "95.7 Mbits/sec"},
		{"bits zero span", bitsText(95.7e6, 0, 0), "n/a"},
		{"bits Inf", bitsText(math.Inf(1), 1, 0), "n/a"},
		{"bits negative", bitsText(-1, 1, 0), "n/a"},
		{"bytes", bytesText(11953766, 0), "11.4 MBytes"},
		{"bytes negative", bytesText(-1, 0), "n/a"},
		{"span", spanText(1, 2), "1.00-2.00"},
		{"span reversed", spanText(2, 1), "n/a"},
		{"pps given", ppsText(850.4, 0, 0), "850 pps"},
		{"pps computed", ppsText(0, 1700, 2), "850 pps"},
		{"pps zero span", ppsText(0, 1700, 0), "n/a pps"},
		{"jitter", jitterText(0.0123), "0.012 ms"},
		{"jitter NaN", jitterText(math.NaN()), "n/a"},
		{"host port v4", hostPort("127.0.0.1:5001"), "127.0.0.1 port 5001"},
		{"host port v6", hostPort("[::1]:5001"), "::1 port 5001"},
		{"host port bare", hostPort("somewhere"), "somewhere"},
		{"id", idText("1"), "[  1]"},
		{"id sum", idText("SUM"), "[SUM]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}

// TestColumnHeaderOnce: the column header comes once per kind of line and
// again after a new Header.
func TestColumnHeaderOnce(t *testing.T) {
	var buf bytes.Buffer
	tx := NewText(&buf, "1")
	in := result.Interval{Start: 0, End: 1, Bytes: 1470, BitsPerSecond: 11760, Packets: 1}
	for range 3 {
		tx.Interval("1", in, true, true)
	}
	if n := strings.Count(buf.String(), "[ ID]"); n != 1 {
		t.Errorf("%d column headers for three receive lines, want 1:\n%s", n, buf.String())
	}
	tx.Interval("1", in, true, false)
	tx.Interval("1", in, true, true)
	if n := strings.Count(buf.String(), "[ ID]"); n != 2 {
		t.Errorf("%d column headers after a send line, want 2:\n%s", n, buf.String())
	}
	tx.Header(result.Test{Protocol: result.UDP}, "server", "127.0.0.1:5001", "127.0.0.1:4000")
	tx.Interval("1", in, true, true)
	if n := strings.Count(buf.String(), "[ ID]"); n != 3 {
		t.Errorf("%d column headers after a new test, want 3:\n%s", n, buf.String())
	}
}

// TestIntervalColumnsMatchSummary: a UDP receiver's interval rows have the
// summary's columns (duplicates included), so one column header serves both
// and the summary line is an interval line with "receiver" after it.
func TestIntervalColumnsMatchSummary(t *testing.T) {
	var buf bytes.Buffer
	tx := NewText(&buf, "1")
	tx.Header(result.Test{Protocol: result.UDP}, "server", "127.0.0.1:5001", "127.0.0.1:4000")
	in := result.Interval{Start: 0, End: 1, Bytes: 1470 * 10, BitsPerSecond: 117600, Packets: 10, Lost: 1, OutOfOrder: 2, Duplicates: 3, JitterMS: 0.5}
	tx.Interval("1", in, true, true)
	r := result.New("server")
	r.Test = result.Test{Protocol: result.UDP}
	r.Receiver = &result.Receiver{Bytes: in.Bytes, BitsPerSecond: in.BitsPerSecond, Packets: 10, Lost: 1, OutOfOrder: 2,
		Duplicates: result.Count(3), JitterMS: 0.5, Seconds: 1, Total: 11, Source: "local"}
	tx.Summary(r)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if n := strings.Count(buf.String(), "[ ID]"); n != 1 || len(lines) != 4 {
		t.Fatalf("%d column headers in %d lines, want 1 header, one interval and one summary line:\n%s", n, len(lines), buf.String())
	}
	header, row, sum := lines[1], lines[2], lines[3]
	if !strings.Contains(header, "Duplicates") || strings.TrimSuffix(sum, "  receiver") != row {
		t.Errorf("interval row and summary differ in columns:\n%s\n%s\n%s", header, row, sum)
	}
}

// TestColumnsAlign: every column header word ends where its figures end.
func TestColumnsAlign(t *testing.T) {
	for _, sc := range scenarios() {
		lines := strings.Split(renderText(t, sc), "\n")
		for i, l := range lines {
			if !strings.HasPrefix(l, "[ ID]") || i+1 >= len(lines) {
				continue
			}
			next := lines[i+1]
			for _, word := range []string{"Transfer", "Bandwidth", "PPS"} {
				end := strings.Index(l, word) + len(word)
				if end < len(word) || end > len(next) {
					continue
				}
				if next[end-1] == ' ' || (end < len(next) && next[end] != ' ') {
					t.Errorf("%s: %q column misaligned:\n%s\n%s", sc.name, word, l, next)
				}
			}
		}
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	f.n++
	return 0, errors.New("disk full")
}

func TestTextErrSticky(t *testing.T) {
	fw := &failWriter{}
	tx := NewText(fw, "1")
	tx.Listening("", 5001)
	tx.Summary(nil)
	if tx.Err() == nil || !strings.Contains(tx.Err().Error(), "disk full") {
		t.Errorf("Err() = %v, want the write error", tx.Err())
	}
	if fw.n != 1 {
		t.Errorf("%d writes after the first failed one, want none", fw.n-1)
	}
}

func TestSummaryNil(t *testing.T) {
	var buf bytes.Buffer
	NewText(&buf, "1").Summary(nil)
	if !strings.HasPrefix(buf.String(), "ERROR: ") {
		t.Errorf("Summary(nil) = %q", buf.String())
	}
}

// TestWarningsNeverMissed: every warning and the error reach the text.
func TestWarningsNeverMissed(t *testing.T) {
	for _, sc := range scenarios() {
		out := renderText(t, sc)
		for _, w := range sc.r.Warnings {
			first, _, _ := strings.Cut(w, "\n")
			if !strings.Contains(out, "WARNING: "+first) {
				t.Errorf("%s: warning %q not printed", sc.name, w)
			}
		}
		if sc.r.Error != "" && !strings.Contains(out, "ERROR: "+sc.r.Error) {
			t.Errorf("%s: error %q not printed", sc.name, sc.r.Error)
		}
	}
}

func TestCSVShape(t *testing.T) {
	cols := CSVColumns()
	named := map[int]string{cPackets: "packets", cPPS: "packets_per_second", cJitter: "jitter_ms", cLost: "lost",
		cTotal: "total", cLoss: "loss_percent", cOOO: "out_of_order", cDup: "duplicates", cSource: "source",
		cWarnings: "warnings", cError: "error"}
	for i, name := range named {
		if cols[i] != name {
			t.Errorf("column %d is %q, the code writes %q there", i, cols[i], name)
		}
	}
	if len(cols) != cError+1 {
		t.Errorf("%d columns, the code fills %d", len(cols), cError+1)
	}
	if err := WriteCSV(&bytes.Buffer{}, nil); err == nil {
		t.Error("WriteCSV(nil) succeeded")
	}
}

// drawValue fills v with drawn values: floats include NaN, ±Inf and
// negatives; counts are non-negative except the ones that may legitimately
// be negative (running loss, "unknown" host drops).
func drawValue(t *rapid.T, v reflect.Value, name string) {
	switch v.Kind() {
	case reflect.Float64:
		v.SetFloat(rapid.OneOf(rapid.SampledFrom([]float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, -1, 1e-9}),
			rapid.Float64Range(0, 1e12)).Draw(t, name))
	case reflect.Int, reflect.Int64:
		lo := int64(0)
		if name == "Lost" || name == "HostDrops" || name == "SendErrors" {
			lo = -3
		}
		v.SetInt(rapid.Int64Range(lo, 1<<40).Draw(t, name))
	case reflect.String:
		v.SetString(rapid.SampledFrom([]string{"", "udp", "tcp", "send", "receive", "peer-report", "local", "two\nlines"}).Draw(t, name))
	case reflect.Pointer:
		if rapid.Bool().Draw(t, name+"?") {
			v.Set(reflect.New(v.Type().Elem()))
			drawValue(t, v.Elem(), name)
		}
	case reflect.Slice:
		n := rapid.IntRange(0, 3).Draw(t, name+"#")
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			drawValue(t, v.Index(i), name)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				drawValue(t, v.Field(i), f.Name)
			}
		}
	}
}

// nonsense matches what must never be printed: NaN, infinities, exponent
// forms and negative numbers (a minus not between two digits of a span).
var nonsense = regexp.MustCompile(`NaN|Inf|\de[+-]\d|(^|[^0-9])-\d`)

// TestRendersNeverPrintNonsense renders random results, NaN and infinity
// included: text never shows a non-number or a negative figure, JSON
// always encodes, CSV rows always have every column.
func TestRendersNeverPrintNonsense(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := new(result.Result)
		drawValue(t, reflect.ValueOf(r).Elem(), "Result")
		r.Test.Port = rapid.IntRange(0, 65535).Draw(t, "port")
		var buf bytes.Buffer
		tx := NewText(&buf, "1")
		tx.Header(r.Test, r.Role, "127.0.0.1:1", "127.0.0.1:2")
		for _, in := range r.Intervals {
			tx.Interval("1", in, r.Test.Protocol == result.UDP, rapid.Bool().Draw(t, "receiving"))
		}
		tx.Summary(r)
		for _, l := range strings.Split(buf.String(), "\n") {
			if strings.HasPrefix(l, "WARNING: ") || strings.HasPrefix(l, "ERROR: ") || strings.HasPrefix(l, "[  1] Diagnosis") {
				continue
			}
			if m := nonsense.FindString(l); m != "" {
				t.Fatalf("printed %q in %q", m, l)
			}
		}
		for _, w := range r.Warnings {
			first, _, _ := strings.Cut(w, "\n")
			if !strings.Contains(buf.String(), "WARNING: "+first) {
				t.Fatalf("warning %q not printed", w)
			}
		}
		if err := WriteJSON(&bytes.Buffer{}, r, false); err != nil {
			t.Fatal(err)
		}
		var cb bytes.Buffer
		if err := WriteCSV(&cb, r); err != nil {
			t.Fatal(err)
		}
		rd := csv.NewReader(&cb)
		rd.FieldsPerRecord = len(CSVColumns())
		rows, err := rd.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			for _, cell := range row {
				if strings.Contains(cell, "NaN") || strings.Contains(cell, "Inf") {
					t.Fatalf("CSV cell %q", cell)
				}
			}
		}
	})
}

func TestHeaderUnknownAddresses(t *testing.T) {
	tests := []struct{ local, peer, want string }{
		{"", "127.0.0.1:45018", "[  3] connected with 127.0.0.1 port 45018 (udp, iperf2)\n"},
		{"127.0.0.1:5001", "", "[  3] local 127.0.0.1 port 5001 (udp, iperf2)\n"},
		{"", "", "[  3] connected with n/a (udp, iperf2)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			var buf bytes.Buffer
			NewText(&buf, "3").Header(result.Test{Protocol: result.UDP, Dialect: "iperf2"}, "server", tt.local, tt.peer)
			if buf.String() != tt.want {
				t.Errorf("got %q, want %q", buf.String(), tt.want)
			}
		})
	}
}

func TestRateLine(t *testing.T) {
	tests := []struct {
		name string
		test result.Test
		want string
	}{
		{"bps", result.Test{Protocol: result.UDP, Length: 1470, RateBPS: 10e6}, "Sending 1470 byte datagrams, rate 10.0 Mbits/sec (850 pps)"},
		{"both", result.Test{Protocol: result.UDP, Length: 1470, RateBPS: 10e6, RatePPS: 850.34}, "Sending 1470 byte datagrams, rate 10.0 Mbits/sec (850 pps)"},
		{"pps only", result.Test{Protocol: result.UDP, Length: 1470, RatePPS: 8000}, "Sending 1470 byte datagrams, rate 94.1 Mbits/sec (8000 pps)"},
		{"unpaced", result.Test{Protocol: result.UDP, Length: 64}, "Sending 64 byte datagrams, unpaced"},
		{"negative", result.Test{Protocol: result.UDP, Length: 64, RateBPS: -1}, "Sending 64 byte datagrams, rate n/a"},
		{"tcp", result.Test{Protocol: result.TCP, Length: 131072}, "Writing 131072 byte buffers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sizeLine(tt.test); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// A test refused before it ran has no figures: its error line does not
// call figures partial that were never printed.
func TestSummaryRefusedTest(t *testing.T) {
	r := result.New("server")
	r.Test = result.Test{Protocol: result.UDP, Mode: "reverse", Peer: "198.18.0.1:4000"}
	r.Error = "reverse and connect-back traffic refused: 198.18.0.1 is not on a local network"
	var b bytes.Buffer
	NewText(&b, "1").Summary(r)
	if got, want := b.String(), "ERROR: "+r.Error+"\n"; got != want {
		t.Errorf("summary of a refused test:\n%q\nwant\n%q", got, want)
	}
	r.Receiver = &result.Receiver{Bytes: 10}
	b.Reset()
	NewText(&b, "1").Summary(r)
	if !strings.Contains(b.String(), "(the figures above are partial)") {
		t.Errorf("summary of a test that ended early does not say its figures are partial:\n%s", b.String())
	}
}

// TestServerBidirClientReport: on a server, the peer's counts of the
// streams we sent are the client's report, listed stream by stream with
// their SUM under "Client Report:".
func TestServerBidirClientReport(t *testing.T) {
	r := result.New("server")
	r.Test = result.Test{Protocol: result.TCP, Dialect: "iperf3", Streams: 2, Mode: "bidir"}
	snd := func(n int64) *result.Sender {
		return &result.Sender{Bytes: n, BitsPerSecond: float64(n) * 8, Seconds: 1}
	}
	rcv := func(n int64, src string) *result.Receiver {
		return &result.Receiver{Bytes: n, BitsPerSecond: float64(n) * 8, Seconds: 1, Source: src}
	}
	r.Streams = []result.Stream{
		{ID: 1, Receiver: rcv(1000000, "local")},
		{ID: 3, Receiver: rcv(2000000, "local")},
		{ID: 4, Sender: snd(4000000), Receiver: rcv(4000000, "peer-report"), Flow: "reverse"},
		{ID: 5, Sender: snd(8000000), Receiver: rcv(8000000, "peer-report"), Flow: "reverse"},
	}
	r.Receiver = rcv(3000000, "local")
	r.Reverse = &result.Flow{Direction: result.DirSend, Sender: snd(12000000), Receiver: rcv(12000000, "peer-report")}
	var buf bytes.Buffer
	NewText(&buf, "1").Summary(r)
	want := "[  1] Client Report:\n" +
		"[  4] 0.00-1.00   sec  3.81 MBytes  32.0 Mbits/sec  receiver\n" +
		"[  5] 0.00-1.00   sec  7.63 MBytes  64.0 Mbits/sec  receiver\n" +
		"[SUM] 0.00-1.00   sec  11.4 MBytes  96.0 Mbits/sec  receiver\n"
	if !strings.Contains(buf.String(), want) || strings.Contains(buf.String(), "Server Report") {
		t.Errorf("want the client's report stream by stream:\n%s\ngot:\n%s", want, buf.String())
	}
}

// TestCPULineOtherTests: a server's CPU figure is the whole process's; when
// other tests ran alongside, the line says so.
func TestCPULineOtherTests(t *testing.T) {
	var b strings.Builder
	cpuLine(&b, "3", &result.CPU{Percent: 50, UserPercent: 10, SystemPercent: 40, OtherTests: 2})
	if want := "with 2 other tests running alongside"; !strings.Contains(b.String(), want) {
		t.Errorf("cpu line %q does not say %q", b.String(), want)
	}
	b.Reset()
	cpuLine(&b, "3", &result.CPU{Percent: 50, UserPercent: 10, SystemPercent: 40})
	if strings.Contains(b.String(), "alongside") {
		t.Errorf("cpu line of a test that ran alone: %q", b.String())
	}
}
