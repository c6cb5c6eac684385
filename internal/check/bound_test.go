package check

import (
	"errors"
	"strings"
	"testing"
)

// TestBackToBackBoundJudged: an RFC 2544 run whose 64 B back-to-back
// search ended with a bound (its bursts went at 8 % of line rate; those
// that count show 32-503 frames) was judged on 503 as if it were a result.
// A criterion on it is judged on the bound: PASS when every value the
// bound allows holds it, FAIL when none does, ERROR when the bound cannot
// tell; each says the figure is a bound, in the text and Markdown. A
// size whose search stands as measured is read as before.
func TestBackToBackBoundJudged(t *testing.T) {
	doc := readDoc(t, "../report/htmlreport/testdata/rfc2544.json")
	for _, tc := range []struct {
		crit, status string
	}{
		{"sizes[size=64].back_to_back_frames >= 20", Pass},
		{"sizes[size=64].back_to_back_frames >= 600", Fail},
		{"sizes[size=64].back_to_back_frames >= 400", Error},
		{"sizes[size=64].back_to_back_frames <= 503", Pass},
		{"sizes[size=64].back_to_back.max_frames >= 400", Error},
		{"sizes[size=64].back_to_back_us >= 1", Pass},
	} {
		c, err := ParseCriterion(tc.crit)
		if err != nil {
			t.Fatal(err)
		}
		v, err := evaluate(c, &stepRun{doc: doc}, nil, errors.New("no baseline"))
		if err != nil {
			t.Fatalf("%s: %v", tc.crit, err)
		}
		v.Step = "b2b"
		line := v.Line()
		if v.Status != tc.status || !strings.Contains(line, "a bound, not a result: ") || !strings.Contains(line, "this host's sending qualified") {
			t.Errorf("%s: %s, want %s saying it is a bound", tc.crit, line, tc.status)
		}
		if strings.Contains(line, "_frames = ") || strings.Contains(line, "_us = ") {
			t.Errorf("%s: the bound read as a result: %s", tc.crit, line)
		}
		var md strings.Builder
		(&Report{Plan: "p", Verdicts: []Verdict{v}}).WriteMarkdown(&md)
		if !strings.Contains(md.String(), "| a bound, not a result: ") {
			t.Errorf("%s: the Markdown does not say the bound:\n%s", tc.crit, md.String())
		}
	}
	// A bound against a relative criterion: held to the share of the
	// baseline's figure.
	c, _ := ParseCriterion("sizes[size=64].back_to_back_frames >= 50% of baseline")
	base := readDoc(t, "../report/htmlreport/testdata/rfc2544.json")
	b := base.(map[string]any)["sizes"].([]any)[0].(map[string]any)
	delete(b, "back_to_back_frames_bound")
	b["back_to_back_frames"] = 40.0 // a result: 50 % of it is 20, below 32
	v, err := evaluate(c, &stepRun{doc: doc}, &stepRun{doc: base, runID: 7}, nil)
	if err != nil || v.Status != Pass || v.ValueText == "" {
		t.Errorf("relative criterion on a bound: %+v, %v", v, err)
	}
}
