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
