package calc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
)

// TestMediumExcessWarning places a receiver goodput of 101.53 % of eth100
// and checks that both the text and the JSON say the path is not the named
// medium or the figure is inflated; 99 % gets no such warning.
func TestMediumExcessWarning(t *testing.T) {
	m, err := linerate.LookupMedium("eth100")
	if err != nil {
		t.Fatal(err)
	}
	theory, err := linerate.Measured(m, linerate.Stack{}, 1470, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		pct  float64
		warn bool
	}{{101.53, true}, {99, false}} {
		r := result.New("client")
		r.Test = result.Test{Protocol: result.UDP, Length: 1470, Peer: "198.18.0.2"}
		r.Receiver = &result.Receiver{BitsPerSecond: theory.TheoreticalBPS * tt.pct / 100}
		p := &Placer{Medium: m, Stack: linerate.Stack{}}
		p.Apply(r)
		var js bytes.Buffer
		if err := report.WriteJSON(&js, r, false); err != nil {
			t.Fatal(err)
		}
		var doc struct{ Warnings []string }
		if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		var txt bytes.Buffer
		report.NewText(&txt, "1").Summary(r)
		found := 0
		for _, w := range doc.Warnings {
			if strings.Contains(w, "101.53 % of the") && strings.Contains(w, "the path is not eth100") &&
				strings.Contains(w, "inflated") {
				found++
				if !strings.Contains(txt.String(), w) {
					t.Errorf("%.2f %%: text output lacks the warning %q:\n%s", tt.pct, w, txt.String())
				}
			}
		}
		if tt.warn && found != 1 {
			t.Errorf("%.2f %%: JSON warnings %q, want one saying the path is not eth100 or the figure is inflated", tt.pct, doc.Warnings)
		}
		if !tt.warn && len(doc.Warnings) != 0 {
			t.Errorf("%.2f %%: unexpected warnings %q", tt.pct, doc.Warnings)
		}
	}
}
