package report

import (
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/result"
)

// TestReportNoRatePassed: a size where no rate passed reads "none" in the
// table, with no Mbit/s, share of the line or loss (nothing was
// confirmed); its JSON has found false and no rate, and its CSV cells are
// empty: the rate lies below the lowest tried, never a measured 0.
func TestReportNoRatePassed(t *testing.T) {
	loss := 0.0
	pct := 50.0
	r := &result.Sweep{Sizes: []result.SweepSize{
		{Size: 64, Trials: 6, TriedPPS: 100, Confirmed: true, Status: linerate.StatusOK},
		{Size: 1470, Sent: 5000, RatePPS: 500, RateBPS: 5.88e6, Found: true, LossPercent: &loss, PercentOfLine: &pct, HeldS: 10, Trials: 7, Confirmed: true, Status: linerate.StatusOK},
	}}
	var text strings.Builder
	if err := WriteSweep(&text, r); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(text.String(), "\n") {
		f := strings.Fields(l)
		if len(f) < 7 || (f[0] != "64" && f[0] != "1470") {
			continue
		}
		switch f[0] {
		case "64":
			if f[2] != "none" || f[3] != "-" || f[4] != "-" || f[5] != "-" || f[6] != "-" {
				t.Errorf("row of a size where no rate passed: %q; want none and dashes", l)
			}
		case "1470":
			if f[2] != "500" || f[3] != "5.88" || f[5] != "0.000%" {
				t.Errorf("row of a found rate: %q", l)
			}
		}
	}
	b, err := json.Marshal(r.Sizes[0])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["rate_pps"]; ok || m["found"] != false || m["loss_percent"] != nil {
		t.Errorf("JSON of a size where no rate passed: %s; want found false, no rate_pps, loss_percent null", b)
	}
	var csvOut strings.Builder
	if err := WriteSweepCSV(&csvOut, r); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(csvOut.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, k := range []string{"rate_pps", "rate_bps", "percent_of_line", "loss_percent"} {
		if v := rows[1][col[k]]; v != "" {
			t.Errorf("CSV %s of a size where no rate passed = %q, want empty", k, v)
		}
	}
	if rows[2][col["rate_pps"]] != "500" || rows[2][col["loss_percent"]] != "0" {
		t.Errorf("CSV row of a found rate: %v", rows[2])
	}
}
