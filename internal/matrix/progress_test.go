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
	p.Start(len(took), 10*time.Second)
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
