package udpstream

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/wire/iperf2"
)

// TestDiagnosisTimerBound feeds a test the arrivals of seed 000's case —
// 7 datagrams back to back every 1 ms, 7000 frames/s — with the arrival
// times given (a device's timer is exact; a test sender sleeping on a busy
// two-core machine is not), and expects the receiver to say
// the path looks timer-bound. The detector itself is tested in tickdiag.
func TestDiagnosisTimerBound(t *testing.T) {
	h := iperf2.NewClientHeader(true, 1, 5001)
	tmpl := (&Sender{Layout: iperf2.LayoutModern, Header: h.AppendUDPTo(nil), Length: 1470}).Template(session.FillPattern)
	base := time.Unix(1_700_000_000, 0)
	peer := netip.MustParseAddrPort("127.0.0.1:40000")
	var rx *Receiver
	id := int64(1)
	for burst := 0; burst < 1500; burst++ {
		for k := 0; k < 7; k++ {
			at := base.Add(time.Duration(burst)*time.Millisecond + time.Duration(k)*12*time.Microsecond)
			iperf2.PutDatagram(tmpl, iperf2.LayoutModern, id, at.Add(-50*time.Microsecond))
			if rx == nil {
				rx = NewReceiver(peer, tmpl, at)
			}
			rx.Feed(tmpl, at)
			id++
		}
	}
	if rx.rx.Seq.Received() != id-1 {
		t.Fatalf("received %d, want %d", rx.rx.Seq.Received(), id-1)
	}
	d := rx.Diagnose()
	if !strings.Contains(d, "timer") || !strings.Contains(d, "1 ms") {
		t.Fatalf("no 1 ms timer diagnosis for bursts of 7 every 1 ms: %q", d)
	}
	// The same frame rate, evenly spaced, is quiet.
	smooth := NewReceiver(peer, tmpl, base)
	for i := int64(1); i <= 10500; i++ {
		at := base.Add(time.Duration(i) * time.Second / 7000)
		iperf2.PutDatagram(tmpl, iperf2.LayoutModern, i, at)
		smooth.Feed(tmpl, at)
	}
	if d := smooth.Diagnose(); d != "" {
		t.Fatalf("diagnosis on an evenly spaced 7000 frames/s: %q", d)
	}
}
