package htmlreport

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
)

func TestDiagnosisSection(t *testing.T) {
	doc := result.Diagnosis{Schema: result.Schema, Kind: result.KindDiagnosis, Test: result.DiagnosisTest{Host: "127.0.0.1", Medium: "eth100"},
		Verdict: "Verdict: the device is frame-rate limited at 7,000 frames/s.",
		Findings: []result.DiagnosisFinding{{Kind: result.FindingFrameRate, Confidence: result.ConfidenceHigh,
			Figures: map[string]float64{"frames_per_second": 7000}, EvidenceRuns: []int{1, 2, 3}, Text: "flat"}},
		CannotTell: []string{"a timer tick: none seen"},
		Runs: []result.DiagnosisRun{{ID: 1, Purpose: result.DiagnoseLoad, Size: 256, DeliveredPPS: 7000},
			{ID: 2, Purpose: result.DiagnoseLoad, Size: 512, DeliveredPPS: 6990}, {ID: 3, Purpose: result.DiagnoseLoad, Size: 512, DeliveredPPS: 7001},
			{ID: 4, Purpose: result.DiagnoseSize, Size: 8000, DeliveredPPS: 200}}}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Decode("diag.json", data)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Build("t", []Document{d})
	if err != nil {
		t.Fatal(err)
	}
	s := r.Sections[len(r.Sections)-1]
	if len(s.Charts) != 2 || s.Summary == nil || !strings.Contains(s.Summary.Rows[0][0], "7,000 frames/s") {
		t.Fatalf("section %+v", s)
	}
	if len(s.Tables) != 2 || s.Tables[0].Rows[0][2] != "frames_per_second=7000" || s.Tables[0].Rows[0][3] != "1, 2, 3" {
		t.Errorf("tables %+v", s.Tables)
	}
	fps, mbit := diagnosisRates(doc.Runs)
	if len(fps) != 2 || fps[1].Y != 7001 || mbit[0].Y != 7000*256*8/1e6 {
		t.Errorf("rates %v %v: want the most per size of the load runs only", fps, mbit)
	}
}

func TestDiagnosisTickChart(t *testing.T) {
	var arr []float64
	for tick := range 20 {
		for k := range 7 {
			arr = append(arr, float64(tick)+0.01*float64(k))
		}
	}
	doc := result.Diagnosis{Schema: result.Schema, Kind: result.KindDiagnosis, Verdict: "Verdict: 7 per 1 ms tick.",
		Findings: []result.DiagnosisFinding{{Kind: result.FindingTick, Confidence: result.ConfidenceHigh,
			Figures: map[string]float64{"period_ms": 1, "frames_per_tick": 7}, EvidenceRuns: []int{1, 2}}},
		Runs: []result.DiagnosisRun{{ID: 1, Purpose: result.DiagnoseLoad, Size: 256, DeliveredPPS: 7000},
			{ID: 2, Purpose: result.DiagnoseLoad, Size: 512, DeliveredPPS: 7000, TickHz: 1000, FramesPerTick: 7, ArrivalsMs: arr}}}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Decode("diag.json", data)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Build("t", []Document{d})
	if err != nil {
		t.Fatal(err)
	}
	s := r.Sections[len(r.Sections)-1]
	if len(s.Charts) != 3 {
		t.Fatalf("%d charts, want the two rate charts and the arrivals", len(s.Charts))
	}
	if c := s.Charts[2]; c.Title != "Arrivals against time (run 2)" || !strings.Contains(c.Caption, "7 per tick every 1 ms") {
		t.Errorf("chart %q: %q", c.Title, c.Caption)
	}
	// Without kept arrivals, no chart.
	doc.Runs[1].ArrivalsMs = nil
	data, _ = json.Marshal(doc)
	d, _ = Decode("diag.json", data)
	if r, err := Build("t", []Document{d}); err != nil || len(r.Sections[len(r.Sections)-1].Charts) != 2 {
		t.Errorf("no arrivals: err %v", err)
	}
}
