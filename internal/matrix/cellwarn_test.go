package matrix

import (
	"context"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/calc"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
)

// A -r download cell takes the connect-back flow's figures: its warnings
// are that flow's and its own placement's, never those of the forward test
// -r runs first (an iperf 2.0.5 peer reports nothing of a TCP test it
// received, so that test is placed on what was sent).
func TestTradeoffDownloadCellCarriesItsOwnWarnings(t *testing.T) {
	const fwdOnly = "the server sent no report of our test"
	const backOnly = "the server's connect-back test did not finish in time; its counts are partial"
	f := &fakeSession{reply: func(cfg session.ClientConfig, _ int) (*result.Result, error) {
		r := fakeResult(cfg, 90e6, 0, 100)
		if cfg.Tradeoff {
			r.Test.Mode = "tradeoff"
			r.Receiver = nil // the forward test: sender's count only
			r.Warn(fwdOnly)
			r.Warn(backOnly)
			r.Reverse.Warnings = []string{backOnly}
		}
		return r, nil
	}}
	link, err := calc.LinkOptions{Medium: "eth100"}.Placer()
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := Options{Seconds: 1, Proto: result.TCP, Dialect: session.DialectIperf2Legacy, DialectGiven: true}.Config("127.0.0.1", link)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Pause = 0
	m, err := Run(context.Background(), f, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var down []string
	for _, w := range m.Warnings {
		if s, ok := strings.CutPrefix(w, "tcp download: "); ok {
			down = append(down, s)
		}
		if strings.Contains(w, fwdOnly) {
			t.Errorf("warning %q: the forward test -r runs first fills no cell", w)
		}
	}
	d := m.Cells[1]
	if d.Direction != result.MatrixDownload || d.Basis != "receiver" || d.PercentOfLine == nil {
		t.Fatalf("download cell %+v: want the connect-back's receiver count, placed", d)
	}
	for _, w := range down {
		if strings.Contains(w, "goodput is unknown") {
			t.Errorf("download warning %q, but the cell's basis is %s", w, d.Basis)
		}
	}
	if !contains(down, backOnly) || !strings.Contains(strings.Join(down, "\n"), "TCP is placed assuming full-size segments") {
		t.Errorf("download warnings %q: want the connect-back's own and its placement's", down)
	}
	if d.Result.Link != nil {
		t.Errorf("the test's own Link %+v: the forward test was placed, though no cell shows it", d.Result.Link)
	}
}
