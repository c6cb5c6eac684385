package compare

import (
	"encoding/csv"
	"strings"
	"testing"
	"time"
)

func reportDoc() *Doc {
	ratio, lossRatio := 0.8, 2.0
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	d := &Doc{Kind: Kind,
		Baseline: DocRun{ID: 12, Kind: "test", StartedAt: at, Target: "192.0.2.1:5001", Labels: map[string]string{"link": "eth"}, SelectedBy: map[string]string{"link": "eth"}},
		Runs:     []DocRun{{ID: 13, Kind: "test", StartedAt: at, Target: "192.0.2.1:5001", Labels: map[string]string{"link": "usb"}, SelectedBy: map[string]string{"link": "usb"}}},
		Warnings: []string{"run 13: a warning"}}
	NameRuns(d)
	d.Comparisons = []Comparison{{Run: 13, Name: d.Runs[0].Name, BaselineName: d.Baseline.Name, Metrics: []Diff{
		{Name: "throughput", Unit: "bit/s", A: 100e6, B: 80e6, Ratio: &ratio, Difference: -20e6},
		{Name: "loss", Unit: "%", A: 1, B: 2, Ratio: &lossRatio, Difference: 1, NoCI: "run 13 has no samples"},
	}, OnlyInRun: []string{"rtt_mean"}}}
	return d
}

// Runs are named by the labels they were selected by; B/A below the
// threshold fails with a reason naming the run.
func TestVerdictJudge(t *testing.T) {
	d := reportDoc()
	if d.Baseline.Name != "link=eth" || d.Runs[0].Name != "link=usb" {
		t.Fatalf("names %q, %q", d.Baseline.Name, d.Runs[0].Name)
	}
	below := 0.95
	v := &Verdict{Metric: "throughput", FailBelow: &below, Passed: true}
	v.Judge(d.Comparisons[0])
	if v.Passed || len(v.Reasons) != 1 || v.Reasons[0] != "link=usb (run 13): throughput is 80.0 % of the baseline's, below 95.0 %" {
		t.Errorf("verdict %+v", v)
	}
	v = &Verdict{Metric: "jitter", FailBelow: &below, Passed: true}
	if v.Judge(d.Comparisons[0]); v.Passed || !strings.Contains(v.Reasons[0], "has no jitter") {
		t.Errorf("verdict on a missing metric %+v", v)
	}
	low := 0.5
	v = &Verdict{Metric: "throughput", FailBelow: &low, Passed: true}
	if v.Judge(d.Comparisons[0]); !v.Passed || len(v.Reasons) != 0 {
		t.Errorf("verdict within the threshold %+v", v)
	}
}

func TestWriteText(t *testing.T) {
	d := reportDoc()
	below := 0.95
	d.Verdict = &Verdict{Metric: "throughput", FailBelow: &below, Passed: true}
	d.Verdict.Judge(d.Comparisons[0])
	var b strings.Builder
	if err := WriteText(&b, d); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"A: run 12 (test, 2026-03-01 12:00:00, 192.0.2.1:5001, link=eth)\n",
		"B: run 13 (test, 2026-03-01 12:00:00, 192.0.2.1:5001, link=usb)\n",
		"  throughput  100 Mbits/sec  80.0 Mbits/sec  80.0 %         -20.00 Mbit/s\n",
		"  loss        1.000 %        2.000 %         200.0 %        +1.000 %\n",
		"  link=usb is 80.0 % of link=eth in throughput (run 13 vs run 12)\n",
		"  loss: no 95 % interval: run 13 has no samples\n",
		"  not compared: only in A: none; only in B: rtt_mean\n",
		"warning: run 13: a warning\n",
		"\nverdict: FAIL (at least 95.0 % of the baseline's throughput)\n  link=usb (run 13): throughput is 80.0 % of the baseline's, below 95.0 %\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
}

func TestWriteCSV(t *testing.T) {
	var b strings.Builder
	if err := WriteCSV(&b, reportDoc()); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0][0] != "baseline" || rows[0][11] != "run_name" {
		t.Fatalf("rows %q", rows)
	}
	if got := strings.Join(rows[1], "|"); got != "12|13|throughput|bit/s|1e+08|8e+07|0.8||-2e+07||link=eth|link=usb||" {
		t.Errorf("throughput row %q", got)
	}
}
