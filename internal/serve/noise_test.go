package serve

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
)

func rawResult(proto, dialect string, packets, bytes int64, seconds float64) *result.Result {
	r := result.New("server")
	r.Test.Protocol, r.Test.Dialect = proto, dialect
	r.Receiver = &result.Receiver{Packets: packets, Bytes: bytes, Seconds: seconds}
	return r
}

// TestHeaderlessNoiseIsCountedNotSaved: a header-less test that does not
// look like a test (a few datagrams from a new source, a connection that
// says nothing) is printed and counted in the log, not saved; one with a
// rate and a duration is saved, as is any test with a header, and
// --keep-raw saves every one. Before, every one was saved.
func TestHeaderlessNoiseIsCountedNotSaved(t *testing.T) {
	cases := []struct {
		name string
		r    *result.Result
		save bool
	}{
		{"one 12-byte datagram", rawResult(result.UDP, session.DialectRaw, 1, 12, 0), false},
		{"9 datagrams over 5 s", rawResult(result.UDP, session.DialectRaw, 9, 9*1470, 5), false},
		{"500 datagrams over 0.5 s", rawResult(result.UDP, session.DialectRaw, 500, 500*1470, 0.5), false},
		{"a silent connection", rawResult(result.TCP, session.DialectRaw, 0, 0, 4), false},
		{"no receiver at all", func() *result.Result {
			r := rawResult(result.UDP, session.DialectRaw, 0, 0, 0)
			r.Receiver = nil
			return r
		}(), false},
		{"an ESP-IDF test", rawResult(result.UDP, session.DialectRaw, 850, 850*1470, 10), true},
		{"10 datagrams over 1 s", rawResult(result.UDP, session.DialectRaw, 10, 10*1470, 1), true},
		{"a header-less TCP test", rawResult(result.TCP, session.DialectRaw, 0, 1<<20, 10), true},
		{"one iperf 2 datagram", rawResult(result.UDP, session.DialectIperf2, 1, 1470, 0), true},
		{"a raw test that failed", func() *result.Result {
			r := rawResult(result.UDP, session.DialectRaw, 1, 12, 0)
			r.Error = "internal error"
			return r
		}(), true},
	}
	for _, keep := range []bool{false, true} {
		var saved []string
		var logs []string
		c := Config{Printer: NewPrinter(io.Discard, Text, 0, false), Apply: func(*result.Result) {}, KeepRaw: keep,
			Logf: func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) },
			Save: func(r *result.Result) (int64, string) {
				saved = append(saved, r.Test.Peer)
				return int64(len(saved)), ""
			}}
		var cfg session.ServerConfig
		stop := saveAndPrint(&cfg, c, func(int, int64, string) {})
		want, skipped := []string{}, 0
		for i, tc := range cases {
			tc.r.Test.Peer = tc.name
			cfg.OnResult(i+1, tc.r)
			if tc.save || keep {
				want = append(want, tc.name)
			} else {
				skipped++
			}
		}
		stop()
		if strings.Join(saved, "|") != strings.Join(want, "|") {
			t.Errorf("keep-raw %v: saved %q, want %q", keep, saved, want)
		}
		wantLogs := 0
		if skipped > 0 {
			wantLogs = 1 // the 1st; the 10th would be the next
		}
		if len(logs) != wantLogs || wantLogs == 1 && !strings.Contains(logs[0], "not saved: header-less tests that did not look like tests (UDP: under 10 datagrams or 1 s; TCP: no data): 1 so far") {
			t.Errorf("keep-raw %v: logs %q", keep, logs)
		}
	}
}

func TestNoiseCountLogsAtPowersOfTen(t *testing.T) {
	var c noiseCount
	var said []string
	for range 1000 {
		c.skipped(func(f string, a ...any) { said = append(said, fmt.Sprint(a[len(a)-1])) })
	}
	if strings.Join(said, ",") != "1,10,100,1000" {
		t.Errorf("logged at %v", said)
	}
}
