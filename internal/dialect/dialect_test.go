package dialect

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/session"
)

// TestNames keeps the order --dialect's help and errors list them in, the
// default first.
func TestNames(t *testing.T) {
	want := []string{"iperf2", "iperf2-legacy", "raw", "iperf3"}
	if got := Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	if Names()[0] != Default {
		t.Errorf("the first row is %q, not the default %q", Names()[0], Default)
	}
}

// TestRowsComplete: every row names its port, server protocol and code,
// and asks the peer to send back exactly when its wire has a header.
func TestRowsComplete(t *testing.T) {
	for _, d := range All() {
		if d.DefaultPort < 1 || d.DefaultPort > 65535 || d.Run == nil || d.Prepare == nil || d.Speakers == "" {
			t.Errorf("%s: incomplete row %+v", d.Name, d)
		}
		if d.Server != ServerIperf2 && d.Server != ServerIperf3 {
			t.Errorf("%s: server protocol %q", d.Name, d.Server)
		}
		if asks := d.Download != "" && d.BidirTCP != "" && d.BidirUDP != ""; asks != d.Header {
			t.Errorf("%s: header %v but download %q, bidir %q/%q", d.Name, d.Header, d.Download, d.BidirTCP, d.BidirUDP)
		}
	}
}

func TestLookup(t *testing.T) {
	if d, ok := Lookup(""); !ok || d.Name != session.DialectIperf2 {
		t.Errorf(`Lookup("") = %q, %v; want the default`, d.Name, ok)
	}
	if d, ok := Lookup("iperf3"); !ok || d.DefaultPort != 5201 || d.Server != ServerIperf3 {
		t.Errorf("Lookup(iperf3) = %+v, %v", d, ok)
	}
	if _, ok := Lookup("iperf9"); ok {
		t.Error("Lookup(iperf9) found a row")
	}
	if Known("") || !Known("raw") || Known("iperf9") {
		t.Error(`Known: want "" and iperf9 unknown, raw known`)
	}
}

// TestPrepareByRow: each dialect's defaults come from its own row's code.
func TestPrepareByRow(t *testing.T) {
	for name, port := range map[string]int{"iperf2": 5001, "iperf2-legacy": 5001, "raw": 5001, "iperf3": 5201, "": 5001} {
		cfg, err := Prepare(session.ClientConfig{Host: "127.0.0.1", Dialect: name})
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		if cfg.Port != port {
			t.Errorf("%q: port %d, want %d", name, cfg.Port, port)
		}
	}
	// Only the iperf3 row takes --bidir.
	if _, err := Prepare(session.ClientConfig{Host: "127.0.0.1", Dialect: "iperf3", Bidir: true}); err != nil {
		t.Errorf("iperf3 --bidir: %v", err)
	}
	if _, err := Prepare(session.ClientConfig{Host: "127.0.0.1", Dialect: "iperf2", Bidir: true}); !session.IsConfigError(err) {
		t.Errorf("iperf2 --bidir: %v, want a config error", err)
	}
}

// TestUnknownDialect: a config error naming the dialects, before any
// packet leaves.
func TestUnknownDialect(t *testing.T) {
	cfg := session.ClientConfig{Host: "127.0.0.1", Dialect: "iperf9"}
	const want = `unknown dialect "iperf9" (want iperf2, iperf2-legacy, raw or iperf3)`
	if _, err := Prepare(cfg); !session.IsConfigError(err) || err.Error() != want {
		t.Errorf("Prepare: %v, want a config error %q", err, want)
	}
	if r, err := RunClient(context.Background(), cfg); r != nil || !session.IsConfigError(err) || !strings.Contains(err.Error(), "iperf9") {
		t.Errorf("RunClient: %v, %v; want no result and a config error", r, err)
	}
}
