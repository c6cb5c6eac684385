package client

import (
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/probe"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/units"
)

// prepared is cfg to 192.0.2.1 as it will run (its dialect's defaults).
func prepared(t *testing.T, cfg session.ClientConfig) session.ClientConfig {
	t.Helper()
	cfg.Host, cfg.UDP = "192.0.2.1", true
	p, err := dialect.Prepare(cfg)
	if err != nil {
		t.Fatalf("Prepare(%+v): %v", cfg, err)
	}
	return p
}

// TestStreamDatagrams: the estimate is each stream's share of the rate
// over -t and -O, or of -n in -l-byte datagrams (rounded up, as sent).
func TestStreamDatagrams(t *testing.T) {
	for _, c := range []struct {
		name   string
		cfg    session.ClientConfig
		n, pps float64
	}{
		{"rate over -t", session.ClientConfig{Rate: units.Rate{Value: 1e6, PPS: true}, Duration: time.Hour}, 3.6e9, 1e6},
		{"-P 4 shares it", session.ClientConfig{Rate: units.Rate{Value: 1e6, PPS: true}, Duration: time.Hour, Parallel: 4}, 9e8, 2.5e5},
		{"-O adds to -t", session.ClientConfig{Dialect: session.DialectIperf3, Rate: units.Rate{Value: 1000, PPS: true},
			Duration: 10 * time.Second, Omit: 5 * time.Second}, 15000, 1000},
		{"bits per second at -l", session.ClientConfig{Rate: units.Rate{Value: 8e6}, Length: 1000, Duration: 10 * time.Second}, 10000, 1000},
		{"-n at -l, rounded up", session.ClientConfig{Bytes: 10001, Length: 1000, Rate: units.Rate{Value: 10, PPS: true}}, 11, 10},
		{"-n shared by -P 2", session.ClientConfig{Bytes: 4000, Length: 1000, Parallel: 2, Rate: units.Rate{Value: 10, PPS: true}}, 2, 5},
	} {
		n, pps := streamDatagrams(prepared(t, c.cfg))
		if n != c.n || pps != c.pps {
			t.Errorf("%s: %v datagrams at %v/s, want %v at %v/s", c.name, n, pps, c.n, c.pps)
		}
	}
}

// TestWrapNotice: the notice is given exactly when a stream's ids reach
// the first one the peer cannot read (2^31 for iperf 2 peers reading
// 32-bit ids, 2^32 for iperf3 without 64-bit counters), in the
// directions the peer receives, and says when, what follows and what to do.
func TestWrapNotice(t *testing.T) {
	pps := func(r float64) units.Rate { return units.Rate{Value: r, PPS: true} }
	const w31, w32 = 1 << 31, 1 << 32
	for _, c := range []struct {
		name string
		cfg  session.ClientConfig
		want []string // "" when no notice is due
	}{
		{"iperf2 at 1470 B: 64-bit ids", session.ClientConfig{Dialect: session.DialectIperf2, Length: 1470, Rate: pps(1e6), Duration: 10 * time.Hour}, nil},
		{"iperf2 at 64 B: one short of 2^31", session.ClientConfig{Dialect: session.DialectIperf2, Length: 64, Bytes: (w31 - 1) * 64, Rate: pps(1e6)}, nil},
		{"iperf2 at 64 B: reaches 2^31", session.ClientConfig{Dialect: session.DialectIperf2, Length: 64, Bytes: w31 * 64, Rate: pps(1e6)},
			[]string{"about 2,147,483,648 datagrams", "from datagram 2,147,483,648 (after about 35m47s at 1,000,000 datagrams/s)",
				"-l 64 cuts the header", "-l of at least 76 bytes", "wirebench server extends them"}},
		{"iperf2 at 76 B: 64-bit ids", session.ClientConfig{Dialect: session.DialectIperf2, Length: 76, Rate: pps(1e6), Duration: 10 * time.Hour}, nil},
		{"iperf2-legacy from 0: 2^31 ids fit", session.ClientConfig{Dialect: session.DialectIperf2Legacy, Length: 100, Bytes: w31 * 100, Rate: pps(1e6)}, nil},
		{"iperf2-legacy: one more", session.ClientConfig{Dialect: session.DialectIperf2Legacy, Length: 100, Bytes: (w31 + 1) * 100, Rate: pps(1e6)},
			[]string{"from datagram 2,147,483,649", "iperf 2.0.5's header cannot ask", "the iperf2 dialect towards an iperf 2.1 or later peer"}},
		{"raw over an hour", session.ClientConfig{Dialect: session.DialectRaw, Length: 1470, Rate: pps(1e6), Duration: time.Hour},
			[]string{"about 3,600,000,000 datagrams", "raw datagrams carry no header"}},
		{"-P 2 halves each stream's", session.ClientConfig{Dialect: session.DialectRaw, Length: 1470, Rate: pps(1e6), Duration: time.Hour, Parallel: 2}, nil},
		{"iperf2 -R at 64 B: we read the ids", session.ClientConfig{Dialect: session.DialectIperf2, Length: 64, Rate: pps(1e6), Duration: time.Hour, Reverse: true}, nil},
		{"iperf3 under 2^32", session.ClientConfig{Dialect: session.DialectIperf3, Length: 100, Rate: pps(1e6), Duration: time.Hour}, nil},
		{"iperf3 past 2^32", session.ClientConfig{Dialect: session.DialectIperf3, Length: 100, Bytes: w32 * 100, Rate: pps(1e6)},
			[]string{"from datagram 4,294,967,296 (after about 1h11m35s", "wrap to 0", "add --udp-counters-64bit"}},
		{"iperf3 64-bit counters", session.ClientConfig{Dialect: session.DialectIperf3, Length: 100, Bytes: w32 * 100, Rate: pps(1e6), UDPCounters64Bit: true}, nil},
		{"iperf3 -R: we read the ids", session.ClientConfig{Dialect: session.DialectIperf3, Length: 100, Bytes: w32 * 100, Rate: pps(1e6), Reverse: true}, nil},
		{"iperf3 --bidir: the peer reads ours", session.ClientConfig{Dialect: session.DialectIperf3, Length: 100, Bytes: w32 * 100, Rate: pps(1e6), Bidir: true},
			[]string{"wrap to 0"}},
	} {
		got := WrapNotice(prepared(t, c.cfg))
		if (got != "") != (c.want != nil) {
			t.Errorf("%s: notice %q, want one: %v", c.name, got, c.want != nil)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: notice %q lacks %q", c.name, got, w)
			}
		}
	}
}

// TestAnnounceSaysTheNoticeOnce: Announce says the notice once, after the
// probe's line when a probe chose the dialect, and nothing for a test
// whose ids fit.
func TestAnnounceSaysTheNoticeOnce(t *testing.T) {
	var lines []string
	say := func(f string, a ...any) {
		lines = append(lines, strings.TrimSpace(strings.ReplaceAll(f, "%s", a[0].(string))))
	}
	long := prepared(t, session.ClientConfig{Dialect: session.DialectRaw, Length: 1470, Rate: units.Rate{Value: 1e6, PPS: true}, Duration: time.Hour})
	Announce(say, probe.DialectChoice{Dialect: session.DialectIperf2, By: probe.ChosenByFlag}, long)
	if len(lines) != 1 || !strings.Contains(lines[0], "ids pass 2^31") {
		t.Fatalf("said %q, want the notice once", lines)
	}
	lines = nil
	long.Duration = time.Second
	Announce(say, probe.DialectChoice{Dialect: session.DialectIperf2, By: probe.ChosenByFlag}, long)
	if len(lines) != 0 {
		t.Fatalf("said %q for a one-second test", lines)
	}
}

func TestGroupDigits(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 2147483648: "2,147,483,648", -1234567: "-1,234,567"} {
		if got := groupDigits(n); got != want {
			t.Errorf("groupDigits(%d) = %q, want %q", n, got, want)
		}
	}
}
