package iperf2

import (
	"net/netip"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

// TestFINBacklogAnsweredOnce reproduces what a busy server saw with 200
// real clients (TestGarbageSoak): an iperf 2.1 client re-sends its FIN
// every 10 ms until a report arrives, so while the server's reader is held
// up, FINs queue in the socket. Answering each of them with a send of its
// own cost the reader, under CPU contention, its turn to run after each
// send, and pushed the answers to the FINs still queued beyond the
// client's 2 s wait. Here the reader is held (by the test hook) while the
// client's data, FIN and 30 re-sent FINs queue up; once released, the
// client must get exactly one report, with the right counts, and a FIN
// sent after that report (as if it were lost) must be answered again. The
// reader is held past finLagWarn, so the server must also log that it read
// the FIN late.
func TestFINBacklogAnsweredOnce(t *testing.T) {
	ts := startServer(t, robustConfig())
	c := udpSock(t, ts)
	held, release := make(chan struct{}), make(chan struct{})
	var src netip.AddrPort
	if ap, err := netip.ParseAddrPort(c.LocalAddr().String()); err == nil {
		src = ap
	}
	first := true
	hookFn := func(point string, peer netip.AddrPort) {
		if point != "udp-datagram" || peer != src || !first {
			return
		}
		first = false // the reader goroutine is the only caller
		close(held)
		<-release
	}
	session.SetTestHook(hookFn)
	defer session.SetTestHook(nil)

	send(t, c, modernDatagram(1, 200, 0))
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the server never handled the first datagram")
	}
	const data, resent = 10, 30
	for id := int64(2); id <= data; id++ {
		send(t, c, modernDatagram(id, 200, 0))
	}
	for k := range int64(1 + resent) { // the FIN, then its re-sends, as iperf 2.1 numbers them
		send(t, c, modernDatagram(-(data+1+k), 200, 0))
	}
	time.Sleep(finLagWarn + 100*time.Millisecond) // a reader this far behind says so
	close(release)

	reports := readReports(t, c, 2*time.Second)
	if len(reports) != 1 {
		t.Fatalf("%d reports for 1 FIN and %d re-sent FINs that all arrived before the first report was sent, want 1", len(reports), resent)
	}
	ts.waitLog("this server's UDP reader is behind")
	r := reports[0]
	if r.Datagrams != data+1 || r.Errors != 0 {
		t.Errorf("report: total %d, lost %d; want total %d, lost 0", r.Datagrams, r.Errors, data+1)
	}

	// The report "was lost": the client's next FIN comes after it left,
	// and is answered.
	send(t, c, modernDatagram(-(data+2+resent), 200, 0))
	if again := readReports(t, c, 5*time.Second); len(again) == 0 {
		t.Fatal("a FIN sent after the report left was not answered")
	}
}

// readReports reads the server reports that reach c within d (it returns
// early, after 300 ms of silence, once one has arrived).
func readReports(t *testing.T, c interface {
	Read([]byte) (int, error)
	SetReadDeadline(time.Time) error
}, d time.Duration) []iperf2.ServerReport {
	t.Helper()
	var out []iperf2.ServerReport
	end := time.Now().Add(d)
	buf := make([]byte, 2048)
	for {
		wait := time.Until(end)
		if len(out) > 0 {
			wait = min(wait, 300*time.Millisecond)
		}
		if wait <= 0 {
			return out
		}
		_ = c.SetReadDeadline(time.Now().Add(wait))
		n, err := c.Read(buf)
		if err != nil {
			return out
		}
		r, _, err := iperf2.ParseServerReport(buf[:n])
		if err != nil {
			t.Fatalf("a %d-byte reply that is not a server report: %v", n, err)
		}
		out = append(out, r)
	}
}
