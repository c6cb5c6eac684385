package check

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
)

// readDoc decodes a saved document as check decodes a step's output.
func readDoc(t *testing.T, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := decodeDoc(b, kindOf(t, b))
	if err != nil {
		t.Fatal(err)
	}
	return r.doc
}

func kindOf(t *testing.T, b []byte) string {
	t.Helper()
	var k struct{ Kind string }
	if err := json.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	return k.Kind
}

// TestShortFormMatrix: on a matrix from a real run, PROTO.DIRECTION.FIELD
// is exactly the bracket form's figure, for every cell and for figures
// inside the cell's test result; the criterion works verbatim.
func TestShortFormMatrix(t *testing.T) {
	doc := readDoc(t, "../report/htmlreport/testdata/matrix.json")
	n := 0
	for _, proto := range []string{"tcp", "udp"} {
		for _, dir := range []string{"upload", "download"} {
			for _, field := range []string{"bits_per_second", "percent_of_line", "result.receiver.bits_per_second", "result.intervals.0.bits_per_second"} {
				short := proto + "." + dir + "." + field
				long := "cells[protocol=" + proto + ",direction=" + dir + "]." + field
				a, errA := Lookup(doc, short)
				b, errB := Lookup(doc, long)
				if errA != nil || errB != nil || a != b {
					t.Errorf("%s = %v (%v), %s = %v (%v)", short, a, errA, long, b, errB)
				}
				n++
			}
		}
	}
	for short, want := range map[string]float64{
		"udp.upload.bits_per_second": 30005760.023040093, // as in the file
		"udp.upload.loss_percent":    0,
		"udp.download.loss_percent":  0,
	} {
		if got, err := Lookup(doc, short); err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", short, got, err, want)
		}
	}
	c, err := ParseCriterion("udp.upload.bits_per_second >= 90M")
	if err != nil {
		t.Fatal(err)
	}
	v, err := evaluate(c, &stepRun{doc: doc}, nil, errors.New("no baseline"))
	if err != nil || v.Status != Fail || v.Value != 30005760.023040093 {
		t.Errorf("udp.upload.bits_per_second >= 90M on a 30 Mbit/s cell: %+v, %v; want FAIL", v, err)
	}
	// A relative criterion finds the same per-interval samples either way.
	raw, err := os.ReadFile("../report/htmlreport/testdata/matrix.json")
	if err != nil {
		t.Fatal(err)
	}
	run := &stepRun{doc: doc, raw: raw}
	for _, field := range []string{"result.receiver.bits_per_second", "bits_per_second"} {
		short, long := "udp.upload."+field, "cells[protocol=udp,direction=upload]."+field
		val, _ := Lookup(doc, long)
		n1, sd1, why1 := samples(short, val, run)
		n2, sd2, why2 := samples(long, val, run)
		if n1 < 2 || n1 != n2 || sd1 != sd2 || why1 != why2 {
			t.Errorf("samples of %s: %d, %v, %q; of %s: %d, %v, %q", short, n1, sd1, why1, long, n2, sd2, why2)
		}
		t.Logf("%s: %d samples, sd %v %s", short, n1, sd1, why1)
	}
	// A TCP cell has no loss: null, an ERROR verdict, never a pass.
	if _, err := Lookup(doc, "tcp.upload.loss_percent"); !errors.Is(err, ErrNull) {
		t.Errorf("tcp.upload.loss_percent: %v, want null", err)
	}
}

// TestShortFormBidir: with a --bidir row, PROTO.DIRECTION is the one-way
// cell and PROTO.bidir.DIRECTION (or .both.) the simultaneous one, though
// both carry the same protocol and direction.
func TestShortFormBidir(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	m := result.Matrix{Schema: "wirebench/1", Kind: "matrix", Cells: []result.MatrixCell{
		{Protocol: result.UDP, Direction: result.MatrixUpload, BitsPerSecond: f(90e6), LossPercent: f(0.1)},
		{Protocol: result.UDP, Direction: result.MatrixDownload, BitsPerSecond: f(80e6), LossPercent: f(0.2)},
		{Protocol: result.UDP, Direction: result.MatrixUpload, Simultaneous: true, BitsPerSecond: f(45e6), LossPercent: f(1.5)},
		{Protocol: result.UDP, Direction: result.MatrixDownload, Simultaneous: true, BitsPerSecond: f(40e6), LossPercent: f(2.5)},
	}}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	r, err := decodeDoc(b, "matrix")
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]float64{
		"udp.upload.bits_per_second":                                            90e6,
		"udp.download.loss_percent":                                             0.2,
		"udp.bidir.upload.bits_per_second":                                      45e6,
		"udp.both.download.loss_percent":                                        2.5,
		"cells[protocol=udp,direction=upload,simultaneous=false].loss_percent":  0.1,
		"cells[protocol=udp,direction=download,simultaneous=true].loss_percent": 2.5,
	} {
		if got, err := Lookup(r.doc, path); err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", path, got, err, want)
		}
	}
	// The bracket form without simultaneous is ambiguous here, and says so.
	if _, err := Lookup(r.doc, "cells[protocol=udp,direction=upload].bits_per_second"); err == nil || !strings.Contains(err.Error(), "matches 2 elements") {
		t.Errorf("ambiguous bracket form: %v", err)
	}
	near := NearestPaths(r.doc, "udp.bidir.upload.bits_per_secnd", 3)
	if len(near) == 0 || near[0] != "udp.bidir.upload.bits_per_second" {
		t.Errorf("nearest to a misspelt bidir figure: %q", near)
	}
}

// TestLossPercentOfTest: "loss_percent" on a UDP client test is
// receiver.loss_percent; on a TCP test a plan error that says why.
func TestLossPercentOfTest(t *testing.T) {
	doc := decode(t, `{"kind":"test","test":{"protocol":"udp"},"receiver":{"packets":990,"lost":10,"total":1000}}`)
	a, errA := Lookup(doc, "loss_percent")
	b, errB := Lookup(doc, "receiver.loss_percent")
	if errA != nil || errB != nil || a != b || a != 1 {
		t.Errorf("loss_percent = %v (%v), receiver.loss_percent = %v (%v); want 1", a, errA, b, errB)
	}
	udp := readDoc(t, "../report/htmlreport/testdata/client.json")
	a, errA = Lookup(udp, "loss_percent")
	b, errB = Lookup(udp, "receiver.loss_percent")
	if errA != nil || errB != nil || a != b {
		t.Errorf("saved UDP test: loss_percent = %v (%v), receiver.loss_percent = %v (%v)", a, errA, b, errB)
	}
	tcp := decode(t, `{"kind":"test","test":{"protocol":"tcp"},"receiver":{"bits_per_second":9e7}}`)
	var pe *PathError
	if _, err := Lookup(tcp, "loss_percent"); !errors.As(err, &pe) || !strings.Contains(err.Error(), "UDP figure") {
		t.Errorf("loss_percent of a TCP test: %v", err)
	}
}

// TestRFC2544Paths: figures of an RFC 2544 run, by size, load and step;
// a size whose latency test found no load is null (an ERROR verdict,
// with the document's reason), and a test that did not run leaves no zero
// to pass a bound.
func TestRFC2544Paths(t *testing.T) {
	doc := readDoc(t, "../report/htmlreport/testdata/rfc2544.json")
	for path, want := range map[string]float64{ // as in the file
		"sizes[size=1518].ndr_pps":                                    691.3356618814262,
		"sizes[size=1518].latency[load_percent=90].p99_ms":            54.624255,
		"sizes[size=64].latency[load_percent=10].p99_ms":              73.400319,
		"sizes[size=64].loss_curve[offered_percent=100].loss_percent": numberAt(t, doc, "sizes", 0, "loss_curve", 0, "loss_percent"),
	} {
		if got, err := Lookup(doc, path); err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", path, got, err, want)
		}
	}
	// 64 B's back-to-back bursts went at 8 % of line rate: 503 frames is
	// no result, the bursts that count bound it to 32-503.
	_, err := Lookup(doc, "sizes[size=64].back_to_back_frames")
	if be, ok := asBound(err); !ok || be.AtLeast != 32 || be.AtMost != 503 || !errors.Is(err, ErrNull) {
		t.Errorf("back-to-back frames of a search that ended with a bound: %v, want the bound 32-503", err)
	}
	_, err = Lookup(doc, "sizes[size=512].latency[load_percent=90].p99_ms")
	if !errors.Is(err, ErrNull) || !strings.Contains(err.Error(), "no NDR was found") {
		t.Errorf("latency of a size without an NDR: %v, want null with the document's reason", err)
	}
	var pe *PathError
	_, err = Lookup(doc, "sizes[size=1518].latency[load_percent=90].p99ms")
	if !errors.As(err, &pe) || !strings.Contains(strings.Join(pe.Near, " "), "sizes[size=1518].latency[load_percent=90].p99_ms") {
		t.Errorf("misspelt latency figure: %v", err)
	}

	// No rate without loss was found at 512 B: the file (saved before
	// ndr_found) holds 0 there, read as null; so is a rate left out.
	raw, err := os.ReadFile("../report/htmlreport/testdata/rfc2544.json")
	if err != nil {
		t.Fatal(err)
	}
	saved, err := decodeDoc(raw, "rfc2544")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"sizes[size=512].ndr_bps", "sizes[size=512].ndr_pps"} {
		if v, err := Lookup(saved.doc, p); !errors.Is(err, ErrNull) {
			t.Errorf("%s of a size where no rate passed = %v, %v; want null", p, v, err)
		}
	}
	if v, err := Lookup(saved.doc, "sizes[size=1518].ndr_pps"); err != nil || v != 691.3356618814262 {
		t.Errorf("a found NDR read through the plan's normalisation: %v, %v", v, err)
	}
	left, err := decodeDoc([]byte(`{"kind":"rfc2544","sizes":[{"size":64,"ndr_found":false,"pdr_found":true,"pdr_pps":10,"pdr_bps":80,
	  "loss_curve":[],"done":["throughput"]}]}`), "rfc2544")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Lookup(left.doc, "sizes[size=64].ndr_pps"); !errors.Is(err, ErrNull) {
		t.Errorf("ndr_pps left out (not found): %v, want null", err)
	}
	if v, err := Lookup(left.doc, "sizes[size=64].pdr_pps"); err != nil || v != 10 {
		t.Errorf("pdr_pps found: %v, %v", v, err)
	}

	r, err := decodeDoc([]byte(`{"kind":"rfc2544","sizes":[{"size":64,"ndr_pps":0,"back_to_back_frames":0,
	  "loss_curve":[],"done":["backtoback"]}]}`), "rfc2544")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Lookup(r.doc, "sizes[size=64].ndr_pps"); !errors.Is(err, ErrNull) {
		t.Errorf("ndr_pps of a size whose throughput test did not run: %v, want null", err)
	}
	if v, err := Lookup(r.doc, "sizes[size=64].back_to_back_frames"); err != nil || v != 0 {
		t.Errorf("back_to_back_frames measured as 0: %v, %v", v, err)
	}
	if _, err := decodeDoc([]byte(`{"kind":"rfc2544","interrupted":true,"sizes":[]}`), "rfc2544"); err == nil {
		t.Error("an interrupted run is read as complete")
	}
	if k, ok := Kinds["rfc2544"]; !ok || k.Command != "rfc2544" || k.DocKind != "rfc2544" {
		t.Errorf("Kinds[rfc2544] = %+v, %v", k, ok)
	}
}

// numberAt walks doc by keys and indices to a number.
func numberAt(t *testing.T, doc any, path ...any) float64 {
	t.Helper()
	cur := doc
	for _, p := range path {
		switch k := p.(type) {
		case string:
			cur = cur.(map[string]any)[k]
		case int:
			cur = cur.([]any)[k]
		}
	}
	f, err := cur.(json.Number).Float64()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestSweepRateNotFoundIsNull: a sweep size where no rate passed (found
// false, its rate left out; or an older run's 0) reads null, never 0; a
// found rate reads as written.
func TestSweepRateNotFoundIsNull(t *testing.T) {
	r, err := decodeDoc([]byte(`{"kind":"sweep","sizes":[{"size":64,"found":false,"percent_of_line":null,"loss_percent":null},
	  {"size":512,"rate_pps":0,"rate_bps":0,"percent_of_line":0},{"size":1470,"found":true,"rate_pps":8000,"rate_bps":94080000}]}`), "sweep")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"sizes[size=64].rate_pps", "sizes[size=512].rate_bps", "sizes[size=512].percent_of_line"} {
		if v, err := Lookup(r.doc, p); !errors.Is(err, ErrNull) {
			t.Errorf("%s = %v, %v; want null", p, v, err)
		}
	}
	if v, err := Lookup(r.doc, "sizes[size=1470].rate_pps"); err != nil || v != 8000 {
		t.Errorf("a found rate: %v, %v", v, err)
	}
}
