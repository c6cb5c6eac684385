package serve

import (
	"io"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
)

// Each ended test is saved and the dashboard told the run id the store
// gave it (or, id 0, the store's warning), by the test's own number.
func TestSaveAndPrintSaysEachRunID(t *testing.T) {
	next := int64(40)
	c := Config{Printer: NewPrinter(io.Discard, Text, 0, false), Apply: func(*result.Result) {},
		Save: func(r *result.Result) (int64, string) {
			if r.Error != "" {
				return 0, "the store is full"
			}
			next++
			return next, ""
		}}
	type said struct {
		id  int
		run int64
		w   string
	}
	var got []said
	var cfg session.ServerConfig
	stop := saveAndPrint(&cfg, c, func(id int, run int64, w string) { got = append(got, said{id, run, w}) })
	cfg.OnResult(3, result.New("server"))
	bad := result.New("server")
	bad.Error = "x"
	cfg.OnResult(5, bad)
	cfg.OnResult(6, result.New("server"))
	stop()
	want := []said{{3, 41, ""}, {5, 0, "the store is full"}, {6, 42, ""}}
	if len(got) != len(want) {
		t.Fatalf("said %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("said %+v, want %+v", got[i], want[i])
		}
	}
}
