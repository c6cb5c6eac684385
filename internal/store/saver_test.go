package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestSaverKeepsTheStoreToSize: a Saver with Keep prunes at its first save
// and every PruneEvery saves after, so the store never holds more than
// Keep + PruneEvery - 1 runs, and the runs kept are the newest.
func TestSaverKeepsTheStoreToSize(t *testing.T) {
	ctx := context.Background()
	url := filepath.Join(t.TempDir(), "runs.db")
	s := &Saver{URL: url, Keep: 10, Warn: func(w string) { t.Errorf("warning: %s", w) }}
	defer s.Close()
	start := time.Now().Add(-time.Hour)
	var last int64
	for i := range PruneEvery + 1 {
		id, w := s.Save(ctx, KindTest, "t", "s", start.Add(time.Duration(i)*time.Second), map[string]int{"i": i})
		if id == 0 {
			t.Fatalf("save %d: %s", i, w)
		}
		last = id
	}
	st, err := s.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.List(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 10 || runs[len(runs)-1].ID != last || s.Pruned() != PruneEvery+1-10 {
		t.Fatalf("%d runs kept (newest %d, want %d), %d pruned: want the newest 10 and %d pruned", len(runs), runs[len(runs)-1].ID, last, s.Pruned(), PruneEvery+1-10)
	}
}
