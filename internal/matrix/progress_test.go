package matrix

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/testutil/trialtrace"
	"github.com/wirebench/wirebench/internal/units"
)

// TestProgressTimeLeft runs a matrix's progress lines on a fake clock:
// six tests of 10 s, each taking 10 s and between 1 and 4 s more to set up
// and wind down, one cell unsupported. From a quarter of the way in each
// line's time left is within 35 % of what is really left, and none rises
// more than 2× over the one before.
func TestProgressTimeLeft(t *testing.T) {
	var lines []string
	p := NewProgress(func(l string) { lines = append(lines, l) }, false)
	now := time.Unix(1000, 0)
	p.now = func() time.Time { return now }
	took := []time.Duration{14, 11, 12, 13, 11, 12} // seconds per test, in order
	var total time.Duration
	for _, d := range took {
		total += d * time.Second
	}
	each := make([]time.Duration, len(took))
	for i := range each {
		each[i] = 10 * time.Second
	}
	p.Start(each)
	var ps []trialtrace.Point
	elapsed := time.Duration(0)
	re := regexp.MustCompile(`about (\S+) left$`)
	for i, d := range took {
		if i == 2 {
			p.Cell(i+1, len(took)+1, result.MatrixCell{Protocol: "udp", Direction: "bidir", Status: StatusUnsupported})
		}
		p.Cell(i+1, len(took)+1, result.MatrixCell{Protocol: "tcp", Direction: "upload"})
		m := re.FindStringSubmatch(lines[len(lines)-1])
		if m == nil {
			t.Fatalf("line %q gives no time left", lines[len(lines)-1])
		}
		left, err := units.ParseDuration(m[1])
		if err != nil {
			t.Fatalf("line %q: %v", lines[len(lines)-1], err)
		}
		ps = append(ps, trialtrace.Point{Elapsed: elapsed, Estimate: left, Actual: total - elapsed})
		elapsed += d * time.Second
		now = now.Add(d * time.Second)
	}
	for _, l := range lines {
		if strings.Contains(l, "unsupported") && strings.Contains(l, "left") {
			t.Errorf("an unsupported cell's line gives a time left: %q", l)
		}
	}
	v := trialtrace.Check(ps, total, 0.25, 0.35, 2)
	for _, b := range append(v.Rises, v.Misses...) {
		t.Error(b)
	}
	t.Log(strings.Join(lines, "\n"))
}

// TestProgressTimeLeftReverse: a matrix against an iperf 2.0.5-style peer
// (--dialect iperf2-legacy) asks each download with -r, which runs the
// upload and then the download: 10 s where the upload test takes 5 s. The
// estimate counted every test as 5 s, so after the first download it put
// a third too much on each of the rest (at a quarter of the way in, 43 %
// over what was left). Each test's own length makes it hold.
func TestProgressTimeLeftReverse(t *testing.T) {
	var lines []string
	p := NewProgress(func(l string) { lines = append(lines, l) }, false)
	now := time.Unix(1000, 0)
	p.now = func() time.Time { return now }
	// tcp download (-r), tcp upload, udp download (-r), udp upload: each
	// asked length, and what it took with a second or so around it.
	each := []time.Duration{10 * time.Second, 5 * time.Second, 10 * time.Second, 5 * time.Second}
	took := []time.Duration{11200 * time.Millisecond, 6100 * time.Millisecond, 11300 * time.Millisecond, 6000 * time.Millisecond}
	var total time.Duration
	for _, d := range took {
		total += d
	}
	p.Start(each)
	re := regexp.MustCompile(`about (\S+) left$`)
	var ps []trialtrace.Point
	elapsed := time.Duration(0)
	for i, d := range took {
		p.Cell(i+1, len(took), result.MatrixCell{Protocol: "tcp", Direction: "download"})
		m := re.FindStringSubmatch(lines[len(lines)-1])
		if m == nil {
			t.Fatalf("line %q gives no time left", lines[len(lines)-1])
		}
		left, err := units.ParseDuration(m[1])
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, trialtrace.Point{Elapsed: elapsed, Estimate: left, Actual: total - elapsed})
		elapsed += d
		now = now.Add(d)
	}
	v := trialtrace.Check(ps, total, 0.25, 0.35, 2)
	for _, b := range append(v.Rises, v.Misses...) {
		t.Error(b)
	}
	t.Log(strings.Join(lines, "\n"))
}
