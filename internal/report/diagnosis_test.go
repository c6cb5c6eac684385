package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
)

func diagnosisDoc() *result.Diagnosis {
	return &result.Diagnosis{Schema: result.Schema, Kind: result.KindDiagnosis,
		Test:    result.DiagnosisTest{Mode: "reflect", Host: "127.0.0.1", Port: 5001, Medium: "eth100"},
		Verdict: "Verdict: the device is frame-rate limited at 7,000 frames/s (7 per 1 ms tick).\nEvidence: runs 1-2.",
		Findings: []result.DiagnosisFinding{
			{Kind: result.FindingFrameRate, Confidence: result.ConfidenceHigh, Figures: map[string]float64{"frames_per_second": 7000}, EvidenceRuns: []int{1, 2}, Text: "flat"},
			{Kind: result.FindingHost, Confidence: result.ConfidenceMedium, Figures: map[string]float64{}, Words: map[string]string{"side": "receiver"}, EvidenceRuns: []int{2}, Text: "ours"},
		},
		CannotTell: []string{"a loss floor: no run at a low rate was made"},
		Runs: []result.DiagnosisRun{{ID: 1, Purpose: result.DiagnoseLoad, Size: 1470, AskedPPS: 20000, SentPPS: 19000, DeliveredPPS: 7000, LossPercent: 63, RTTMinMs: 0.2, RTTLateMs: 200, TickHz: 1000, FramesPerTick: 7},
			{ID: 2, Purpose: result.DiagnoseLoad, Size: 256, AskedPPS: 20000, SentPPS: 20000, DeliveredPPS: 7000}}}
}

func TestWriteDiagnosis(t *testing.T) {
	var b bytes.Buffer
	if err := WriteDiagnosis(&b, diagnosisDoc()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"diagnose: reflect at 127.0.0.1 port 5001, medium eth100, 2 runs", "Verdict: the device is frame-rate limited",
		"frame_rate_limit (high confidence; frames_per_second=7000): flat", "host_limit (medium confidence; side=receiver)",
		"Cannot tell:\n  a loss floor", "7 per 1 ms", "0.2-200.0"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
}

// A diagnosis through a device's shell says so in its first line.
func TestWriteDiagnosisDevice(t *testing.T) {
	d := diagnosisDoc()
	d.Test.Mode, d.Test.DUT = "wirebench", "telnet:127.0.0.1:2323"
	d.Device = &result.SweepDeviceSession{Spec: d.Test.DUT, Shell: "zephyr", Transcript: []string{}}
	var b bytes.Buffer
	if err := WriteDiagnosis(&b, d); err != nil {
		t.Fatal(err)
	}
	if want := "runs in 0 s, through the device's shell at telnet:127.0.0.1:2323 (zephyr)\n"; !strings.Contains(b.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, b.String())
	}
}

func TestWriteDiagnosisCSV(t *testing.T) {
	var b bytes.Buffer
	if err := WriteDiagnosisCSV(&b, diagnosisDoc()); err != nil {
		t.Fatal(err)
	}
	want := "kind,confidence,figure,value,evidence_runs,text\nframe_rate_limit,high,frames_per_second,7000,1 2,flat\nhost_limit,medium,side,receiver,2,ours\n"
	if b.String() != want {
		t.Errorf("CSV\n%s\nwant\n%s", b.String(), want)
	}
}

func TestSavedDiagnosisShown(t *testing.T) {
	doc, err := json.Marshal(diagnosisDoc())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteSavedResult(&b, &result.Run{Kind: result.KindDiagnosis, Result: doc}, result.RunConfig{}, SavedRenderers{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Verdict: the device is frame-rate limited") {
		t.Errorf("a saved diagnosis is not shown as its text:\n%s", b.String())
	}
}
