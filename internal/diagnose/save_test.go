package diagnose

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/compare"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/store"
)

// TestMainSavesEachRun: every run is saved as a test labelled
// diagnose=ID, the diagnosis after them; the findings' evidence and the
// verdict name the saved runs, which compare reads.
func TestMainSavesEachRun(t *testing.T) {
	db := filepath.Join(t.TempDir(), "results.db")
	s := &Setup{Config: planConfig(t), Runner: &fakeDevice{fps: 7000, maxSize: 3000},
		Test: result.DiagnosisTest{Mode: "reflect", Host: "127.0.0.1", Port: 5001}}
	// Five runs saved before: the diagnosis's saved ids are not its own
	// numbers 1, 2, ...
	before := &store.Saver{URL: db}
	for range 5 {
		if _, w := before.Save(context.Background(), result.KindTest, "x", "earlier", time.Now(), result.New("client")); w != "" {
			t.Fatal(w)
		}
	}
	before.Close()
	var out, errs bytes.Buffer
	if err := Main(context.Background(), &out, &errs, s, Options{DB: db, JSON: true, Labels: []string{"device=fake"}}); err != nil {
		t.Fatal(err)
	}
	var doc result.Diagnosis
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key, id, _ := strings.Cut(doc.Test.LabelKey, "=")
	runs, err := st.List(context.Background(), store.Filter{Labels: map[string]string{key: id, "device": "fake"}})
	if err != nil {
		t.Fatal(err)
	}
	var saved []int
	for _, r := range runs {
		switch {
		case r.Kind == result.KindDiagnosis && r.ID == doc.RunID:
		case r.Kind == result.KindTest:
			saved = append(saved, int(r.ID))
		default:
			t.Errorf("saved run %d of kind %s", r.ID, r.Kind)
		}
	}
	if len(saved) != len(doc.Runs) || saved[0] != 6 || len(runs) != len(doc.Runs)+1 {
		t.Fatalf("%d runs saved for %d diagnosis runs (diagnosis run %d)", len(runs), len(doc.Runs), doc.RunID)
	}
	for i, run := range doc.Runs {
		if run.ID != saved[i] || run.SavedID != int64(saved[i]) {
			t.Errorf("run %d: saved as %d, the diagnosis says %d/%d", i, saved[i], run.ID, run.SavedID)
		}
	}
	if len(doc.Findings) == 0 {
		t.Fatal("no findings")
	}
	for _, f := range doc.Findings {
		for _, e := range f.EvidenceRuns {
			if !slices.Contains(saved, e) {
				t.Errorf("%s: evidence run %d is no saved run (%v)", f.Kind, e, saved)
			}
		}
	}
	// The frame-rate finding rests on the largest sizes' load runs; its
	// first saved run compares as a test: 7,000 datagrams/s of 1470 B.
	full, err := st.Get(context.Background(), int64(doc.Findings[0].EvidenceRuns[0]))
	if err != nil {
		t.Fatal(err)
	}
	kind, ms, err := compare.Metrics(full.Result)
	if err != nil || kind != result.KindTest || len(ms) == 0 {
		t.Fatalf("compare reads kind %q, metrics %+v, error %v", kind, ms, err)
	}
	if !strings.Contains(doc.Verdict, "runs "+itoa(doc.Findings[0].EvidenceRuns[0])) {
		t.Errorf("verdict %q does not name saved run %d", doc.Verdict, doc.Findings[0].EvidenceRuns[0])
	}
	t.Logf("%s; %s = %v", doc.Verdict, ms[0].Name, ms[0].Value)
}

func itoa(v int) string { b, _ := json.Marshal(v); return string(b) }
