package report

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
	sweepfindings "github.com/wirebench/wirebench/internal/sweep/findings"
)

// stallingSweep is a sweep recorded against a reflector behind a 10 Mbit/s
// shaper with a 5 ms queue (wirebench reflect --model rate=10mbit,queue=5ms;
// wirebench sweep 127.0.0.1 --mode reflect --medium eth100) on a 2-core host
// at load average 17-23: this host spoiled trials at most sizes, no rate
// passed at three, two were limited by this host and most unconfirmed.
const stallingSweep = "testdata/sweep-reflect-stalling.json"

// TestSweepStallingHostText: the text of that sweep said 14 of its 15
// warnings size by size ("18 B: no confirming trial passed…", "66 B: no
// confirming trial passed… it held for a trial of 0 s only" beside "66 B:
// no rate passed"), and a rate this host limited read as a figure. It says
// each cause once with its count (the sizes' and trials' words only with
// --verbose), no size under two conclusions, and a lower bound marked
// ">=" in its cells.
func TestSweepStallingHostText(t *testing.T) {
	b, err := os.ReadFile(stallingSweep)
	if err != nil {
		t.Fatal(err)
	}
	var r result.Sweep
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	var text, verbose bytes.Buffer
	if err := WriteSweepText(&text, &r, false); err != nil {
		t.Fatal(err)
	}
	if err := WriteSweepText(&verbose, &r, true); err != nil {
		t.Fatal(err)
	}
	golden(t, "sweep-reflect-stalling.txt", text.String())
	out := text.String()
	if strings.Contains(out, "→ 0 datagrams/s") || strings.Contains(out, "falls 100 %") {
		t.Errorf("a cliff reads a size where no rate passed as 0:\n%s", out)
	}
	fs := sweepfindings.Of(&r)
	run := sweepfindings.RunWarnings(&r)
	if got := strings.Count(out, "\nwarning: "); got != len(fs)+len(run) || got >= len(r.Warnings) {
		t.Errorf("%d warning lines for %d causes and %d run warnings (the document has %d)", got, len(fs), len(run), len(r.Warnings))
	}
	seen := map[string]bool{}
	for _, f := range fs {
		if seen[f.Cause] {
			t.Errorf("cause %s said twice", f.Cause)
		}
		seen[f.Cause] = true
	}
	for _, sr := range r.Sizes {
		for _, w := range sr.Warnings {
			if line := "warning: " + itoa(sr.Size) + " B: " + w + "\n"; strings.Contains(out, line) {
				t.Errorf("a size's own warning without --verbose: %s", line)
			}
		}
		// One conclusion per size: no rate passed is not also
		// unconfirmed, a lower bound not also a plain unconfirmed rate.
		n := 0
		for _, f := range fs {
			if f.Cause != sweepfindings.CauseSpoiled && f.Cause != sweepfindings.CauseHostDrops && strings.Contains(f.Text, " "+itoa(sr.Size)+" B") ||
				f.Cause != sweepfindings.CauseSpoiled && f.Cause != sweepfindings.CauseHostDrops && strings.Contains(f.Text, " "+itoa(sr.Size)+",") ||
				f.Cause != sweepfindings.CauseSpoiled && f.Cause != sweepfindings.CauseHostDrops && strings.Contains(f.Text, "("+itoa(sr.Size)+",") {
				n++
			}
		}
		if n > 1 {
			t.Errorf("%d B under %d conclusions:\n%s", sr.Size, n, out)
		}
		if sweepfindings.LowerBound(sr) && !strings.Contains(out, "\n"+itoa(sr.Size)+" ") {
			t.Errorf("%d B has no row", sr.Size)
		}
	}
	for _, sr := range r.Sizes {
		if !sweepfindings.LowerBound(sr) {
			continue
		}
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 3 && f[0] == itoa(sr.Size) && (!strings.HasPrefix(f[2], ">=") || !strings.HasPrefix(f[3], ">=")) {
				t.Errorf("a lower bound not marked in its cells: %s", l)
			}
		}
	}
	// --verbose lists each size's words under its cause, but for the
	// "unconfirmed, held for 0 s" of a size where no rate passed.
	for _, sr := range r.Sizes {
		for _, w := range sr.Warnings {
			if !sr.Found && strings.HasPrefix(w, "no confirming trial passed") {
				if strings.Contains(verbose.String(), itoa(sr.Size)+" B: "+w) {
					t.Errorf("--verbose says %d B, where no rate passed, is unconfirmed", sr.Size)
				}
				continue
			}
			if !strings.Contains(verbose.String(), itoa(sr.Size)+" B: "+w) {
				t.Errorf("--verbose lacks %d B's %q", sr.Size, w)
			}
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
