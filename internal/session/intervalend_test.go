package session

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
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
	cfg := ClientConfig{Host: "127.0.0.1", Port: addr.Port, UDP: true, Rate: units.Rate{Value: 500, PPS: true}, Length: 1000,
		Duration: time.Second, Interval: 250 * time.Millisecond,
		OnInterval: func(in result.Interval) { mu.Lock(); printed = append(printed, in); mu.Unlock() }}
	r, err := RunClient(deadlineCtx(t), cfg)
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
