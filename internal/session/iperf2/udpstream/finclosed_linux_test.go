package udpstream

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/udpio"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

// TestFinReportAfterTheServerStopped: a one-shot server sends its report
// and closes its socket; our next FIN meets the closed port, and the
// kernel reports that refusal on our next read, ahead of the report
// already queued. The report is still read. The client used to send
// another FIN at each refusal, meet the closed port again each time, and
// give up after 201 FINs with the report unread (seen in CI against a
// pScheduler participant's one-shot server).
func TestFinReportAfterTheServerStopped(t *testing.T) {
	srv, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := udpio.Dial(context.Background(), "udp", srv.LocalAddr().String(), "", udpio.Options{})
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	defer conn.Close()
	s := &Sender{Layout: iperf2.LayoutModern, Length: 100}
	tmpl := s.Template(session.FillPattern)
	// The server's report on a test of 3 datagrams, as it answers a FIN.
	rx := NewReceiverAs(netip.MustParseAddrPort("127.0.0.1:9"), iperf2.LayoutModern, true, time.Now())
	for id := int64(1); id <= 3; id++ {
		d := append([]byte(nil), tmpl...)
		iperf2.PutDatagram(d, iperf2.LayoutModern, id, time.Now())
		rx.Feed(d, time.Now())
	}
	fin := append([]byte(nil), tmpl...)
	iperf2.PutDatagram(fin, iperf2.LayoutModern, -4, time.Now())
	report := rx.Feed(fin, time.Now())
	client := net.UDPAddrFromAddrPort(conn.LocalAddr())
	if _, err := srv.WriteToUDP(report, client); err != nil {
		t.Fatal(err)
	}
	srv.Close() // stopped: our FIN meets a closed port
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := s.Finish(ctx, conn, netip.AddrPort{}, tmpl, 3)
	if err != nil || out.Report == nil {
		t.Fatalf("after %d FINs over %v: report %v, error %v; want the report queued before the refusal", out.FINs, out.Elapsed, out.Report, err)
	}
	if out.FINs != 1 || out.Report.Datagrams != 4 {
		t.Errorf("%d FINs, report of %d datagrams; want 1 FIN and the report's 4", out.FINs, out.Report.Datagrams)
	}
}
