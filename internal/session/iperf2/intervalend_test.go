package iperf2

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/units"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

// slowReportServer is an iperf2 UDP server that answers the first FIN
// after delay, as one behind a queue does.
func slowReportServer(t *testing.T, delay time.Duration) *net.UDPAddr {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 2048)
		var n, bytes uint64
		for {
			m, from, err := c.ReadFromUDP(buf)
			if err != nil {
				return
			}
			id, _, _, ok := iperf2.ParseDatagram(buf[:m], iperf2.LayoutModern, true)
			if !ok {
				continue
			}
			n++
			bytes += uint64(m)
			if iperf2.IsFIN(id) {
				time.Sleep(delay)
				rep := iperf2.ServerReport{TotalBytes: bytes, Datagrams: uint64(-id), Errors: uint64(-id) - n, Stop: time.Second}
				_, _ = c.WriteToUDP(rep.AppendModern(nil, nil), from)
				return
			}
		}
	}()
	return c.LocalAddr().(*net.UDPAddr)
}

// TestNoIntervalPastTheEnd (issue 19, point 6): a server report that comes
// 800 ms late (a queue in front of the server) adds no interval row after
// the test's end, and the intervals kept are exactly the ones printed.
func TestNoIntervalPastTheEnd(t *testing.T) {
	addr := slowReportServer(t, 800*time.Millisecond)
	var mu sync.Mutex
	var printed []result.Interval
	cfg := session.ClientConfig{Host: "127.0.0.1", Port: addr.Port, UDP: true, Rate: units.Rate{Value: 500, PPS: true}, Length: 1000,
		Duration: time.Second, Interval: 250 * time.Millisecond,
		OnInterval: func(in result.Interval) { mu.Lock(); printed = append(printed, in); mu.Unlock() }}
	r, err := runClient(deadlineCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.Receiver == nil {
		t.Fatalf("no report: %q", r.Warnings)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, in := range r.Intervals {
		t.Logf("%.3f-%.3f %d datagrams", in.Start, in.End, in.Packets)
		// The last row ends with the last data datagram: at the test's
		// end, or as late as a sender held up on a loaded host sent it,
		// never with the report's arrival 0.8 s later.
		if in.Start >= 1.0-1e-9 || in.End > 1.0+0.5 {
			t.Errorf("interval %.3f-%.3f runs past the 1 s test", in.Start, in.End)
		}
	}
	if len(printed) != len(r.Intervals) {
		t.Fatalf("printed %d intervals, kept %d", len(printed), len(r.Intervals))
	}
	var sum int64
	for i := range printed {
		if printed[i] != r.Intervals[i] {
			t.Errorf("interval %d printed %+v, kept %+v", i, printed[i], r.Intervals[i])
		}
		sum += printed[i].Packets
	}
	if sum != r.Sender.Packets-1 {
		t.Errorf("the intervals count %d datagrams, the sender %d data datagrams", sum, r.Sender.Packets-1)
	}
}

// printedLog keeps the rows printed, by test number (0: the client's).
type printedLog struct {
	mu   sync.Mutex
	rows map[int][]result.Interval
}

func (p *printedLog) add(id int, in result.Interval) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rows == nil {
		p.rows = map[int][]result.Interval{}
	}
	p.rows[id] = append(p.rows[id], in)
}

// samePrinted fails unless the rows kept are exactly the rows printed and
// none starts at or after the test's end.
func samePrinted(t *testing.T, who string, printed, kept []result.Interval, dur time.Duration) {
	t.Helper()
	if len(printed) != len(kept) {
		t.Fatalf("%s: printed %d rows %+v, kept %d %+v", who, len(printed), printed, len(kept), kept)
	}
	for i := range kept {
		if printed[i] != kept[i] {
			t.Errorf("%s: row %d printed %+v, kept %+v", who, i, printed[i], kept[i])
		}
		if kept[i].Start >= dur.Seconds()-1e-9 {
			t.Errorf("%s: row %.3f-%.3f starts at or after the %v test's end", who, kept[i].Start, kept[i].End, dur)
		}
	}
}

// TestPrintedIntervalsAreKept (issue 19, point 6): for each kind of test,
// the interval rows the client and the server keep are exactly those they
// printed, the last one too, and none starts at or after the test's end.
func TestPrintedIntervalsAreKept(t *testing.T) {
	var srv printedLog
	ts := startI3Server(t, session.ServerConfig{Interval: 100 * time.Millisecond,
		OnInterval: func(id int, in result.Interval) { srv.add(id, in) },
		// A group of parallel streams prints its SUM rows, which it keeps.
		OnGroupInterval: func(id int, streams []session.StreamInterval, sum *result.Interval) {
			if sum != nil {
				srv.add(id, *sum)
			} else if len(streams) == 1 {
				srv.add(id, streams[0].Interval)
			}
		}}, Iperf3Config{})
	seen := 0 // the server's results checked so far
	for _, tc := range []struct {
		name string
		cfg  session.ClientConfig
	}{
		{"iperf2 tcp", session.ClientConfig{}},
		{"iperf2 tcp -R", session.ClientConfig{Reverse: true}},
		{"iperf2 tcp full duplex", session.ClientConfig{FullDuplex: true}},
		{"iperf2 udp", session.ClientConfig{UDP: true, Rate: units.Rate{Value: 2000, PPS: true}, Length: 1000}},
		{"iperf2 tcp -P 2", session.ClientConfig{Parallel: 2}},
		{"iperf2 udp -P 2", session.ClientConfig{UDP: true, Rate: units.Rate{Value: 2000, PPS: true}, Length: 1000, Parallel: 2}},
		{"iperf3 tcp", session.ClientConfig{Dialect: session.DialectIperf3}},
		{"iperf3 tcp -R", session.ClientConfig{Dialect: session.DialectIperf3, Reverse: true}},
		{"iperf3 tcp --bidir", session.ClientConfig{Dialect: session.DialectIperf3, Bidir: true}},
		{"iperf3 udp", session.ClientConfig{Dialect: session.DialectIperf3, UDP: true, Rate: units.Rate{Value: 2000, PPS: true}, Length: 1000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cli printedLog
			srv.mu.Lock()
			srv.rows = nil // this test's rows only
			srv.mu.Unlock()
			cfg := tc.cfg
			cfg.Host, cfg.Port, cfg.Duration, cfg.Interval = "127.0.0.1", ts.port, 400*time.Millisecond, 100*time.Millisecond
			if cfg.Dialect == session.DialectIperf3 {
				// iperf3 tells its server whole seconds: a server knows
				// where a 1 s test ends, not a 0.4 s one.
				cfg.Duration = time.Second
			}
			cfg.OnInterval = func(in result.Interval) { cli.add(0, in) }
			r, err := runClient(deadlineCtx(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			samePrinted(t, "client", cli.rows[0], r.Intervals, cfg.Duration)
			if !cfg.UDP && !cfg.FullDuplex && !cfg.Bidir {
				// Nothing counted is left out of the rows: they add up to
				// the summary (over the whole test).
				var sum int64
				for _, in := range r.Intervals {
					sum += in.Bytes
				}
				want := receiverOf(t, r).Bytes
				if !cfg.Reverse && r.Sender != nil {
					// A sender's rows count what it wrote, its summary what
					// was acknowledged, which it says when less.
					want = r.Sender.Bytes
					if r.Sender.BytesWritten != 0 {
						want = r.Sender.BytesWritten
					}
				}
				if sum != want {
					t.Errorf("the client's rows add up to %d bytes, its summary %d", sum, want)
				}
			}
			deadline := time.Now().Add(guard)
			for {
				got := ts.Results()[seen:]
				if len(got) > 0 {
					seen++
					srv.mu.Lock()
					ids := len(srv.rows)
					var printed []result.Interval
					for _, rows := range srv.rows {
						printed = rows
					}
					srv.mu.Unlock()
					if ids != 1 {
						t.Fatalf("the server printed rows for %d tests, want 1", ids)
					}
					samePrinted(t, "server", printed, got[0].Intervals, cfg.Duration)
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("no server result within %v", guard)
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
}
