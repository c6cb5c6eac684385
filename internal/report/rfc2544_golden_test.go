package report

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/rfc2544/findings"
)

// stallingRun is an RFC 2544 run recorded on a host whose sender stalled
// (see TestRFC2544StallingHostText): every size has warnings, several have
// throughput trials this host spoiled, and a back-to-back search both sent
// its passing bursts below line rate and lost bursts in our stalls.
const stallingRun = "testdata/rfc2544-stalling.json"

func loadRFC2544(t *testing.T, path string) *result.RFC2544 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r result.RFC2544
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

var sizeDetail = regexp.MustCompile(`^\s+[0-9]+ B: `)

// TestRFC2544StallingHostText: the text of a run on a stalling host starts
// with what was found (the throughput table right after the line naming
// the run), says each cause once with its count under the table it
// qualifies (the sizes' own words only with --verbose), and states no
// back-to-back length as both an upper and a lower bound: a size whose
// search sent its passes slowly and lost bursts in our stalls prints a
// bound or "not measured" in its cell, never the bare figure.
func TestRFC2544StallingHostText(t *testing.T) {
	r := loadRFC2544(t, stallingRun)
	var text, verbose bytes.Buffer
	if err := WriteRFC2544(&text, r, false); err != nil {
		t.Fatal(err)
	}
	if err := WriteRFC2544(&verbose, r, true); err != nil {
		t.Fatal(err)
	}
	golden(t, "rfc2544-stalling.txt", text.String())
	out := text.String()
	lines := strings.Split(out, "\n")

	// The finding first: the run's line, a blank, the throughput table's
	// title and head, then a row per size that finished it.
	if !strings.HasPrefix(lines[0], "RFC 2544 benchmark of ") || lines[1] != "" || !strings.HasPrefix(lines[2], "Throughput (NDR") ||
		!strings.HasPrefix(strings.TrimSpace(lines[3]), "size B") {
		t.Fatalf("the text does not open with the throughput table:\n%s", strings.Join(lines[:min(6, len(lines))], "\n"))
	}
	rows := 0
	for _, sr := range r.Sizes {
		if slices.Contains(sr.Done, result.RFC2544TestThroughput) {
			rows++
		}
	}
	for i := 4; i < 4+rows; i++ {
		if f := strings.Fields(lines[i]); len(f) < 8 || f[0] != strconv.Itoa(r.Sizes[i-4].Size) {
			t.Errorf("line %d %q: want the throughput row of %d B", i, lines[i], r.Sizes[i-4].Size)
		}
	}

	// One line per cause: as many warning lines as findings, each once,
	// and far fewer than the sizes' own warnings; no size's own words
	// without --verbose, all of them with it.
	fs := findings.Of(r)
	perSize := 0
	for _, sr := range r.Sizes {
		perSize += len(sr.Warnings)
	}
	warn := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "  warning: ") {
			warn++
		}
		if sizeDetail.MatchString(l) {
			t.Errorf("a size's own words without --verbose: %q", l)
		}
	}
	if warn != len(fs) || warn >= perSize/2 {
		t.Errorf("%d warning lines for %d causes (the sizes have %d warnings of their own)", warn, len(fs), perSize)
	}
	for _, f := range fs {
		if n := strings.Count(out, "warning: "+f.Text+"\n"); n != 1 {
			t.Errorf("cause %s said %d times", f.Cause, n)
		}
	}
	for _, cause := range []string{findings.CauseStalls, findings.CauseBurstPace, findings.CauseBurstStalls} {
		if !hasCause(fs, cause) {
			t.Errorf("no %s line: the recorded run has that cause", cause)
		}
	}
	// --verbose has each size's own words; its back-to-back ones as its
	// bound says them (this document, written before the bound was
	// stated, says both bounds of one length).
	for _, sr := range r.Sizes {
		for _, w := range sr.Warnings {
			if !strings.HasPrefix(w, "back-to-back") && !strings.Contains(verbose.String(), strconv.Itoa(sr.Size)+" B: "+w) {
				t.Errorf("--verbose lacks %d B's %q", sr.Size, w)
			}
		}
		if bb := sr.BackToBack; bb != nil && (!bb.AtLineRate || bb.HostSpoiled) && !strings.Contains(verbose.String(), strconv.Itoa(sr.Size)+" B: back-to-back: ") {
			t.Errorf("--verbose lacks %d B's back-to-back words", sr.Size)
		}
	}
	if strings.Contains(verbose.String(), "upper bound") {
		t.Error("--verbose calls a length an upper bound: the bound is said from the bursts that count")
	}

	// No contradictory bounds, and the bound in the cell.
	if strings.Contains(out, "upper bound") && strings.Contains(out, "lower bound") {
		t.Error("the text calls a length both an upper and a lower bound")
	}
	both := 0
	for _, sr := range r.Sizes {
		bb := sr.BackToBack
		if bb == nil || bb.AtLineRate || !bb.HostSpoiled {
			continue
		}
		both++
		row := backToBackRow(lines, sr.Size)
		f := strings.Fields(row)
		if len(f) < 2 || f[1] == strconv.FormatFloat(sr.BackToBackFrames, 'f', -1, 64) || !strings.Contains(row, "not measured") && !strings.ContainsAny(f[1], "<>-") {
			t.Errorf("%d B back-to-back (slow passes and spoiled losses) prints %q: want a bound or not measured", sr.Size, row)
		}
	}
	if both == 0 {
		t.Error("the recorded run has no size whose back-to-back search both sent slowly and lost in a stall")
	}
}

// backToBackRow is a size's row of the back-to-back table.
func backToBackRow(lines []string, size int) string {
	in := false
	for _, l := range lines {
		if strings.HasPrefix(l, "Back-to-back frames") {
			in = true
		}
		if f := strings.Fields(l); in && len(f) > 0 && f[0] == strconv.Itoa(size) {
			return l
		}
	}
	return ""
}

func hasCause(fs []findings.Finding, cause string) bool {
	for _, f := range fs {
		if f.Cause == cause {
			return true
		}
	}
	return false
}
