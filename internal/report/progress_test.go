package report

import (
	"strings"
	"testing"
)

func TestProgressNotTerminal(t *testing.T) {
	var b strings.Builder
	p := NewProgress(&b)
	if p.Live() {
		t.Fatal("a strings.Builder taken for a terminal")
	}
	p.Line("one")
	p.Line("two")
	p.Done()
	if got := b.String(); got != "one\ntwo\n" {
		t.Errorf("got %q, want a plain line per step and nothing to clear", got)
	}
}
