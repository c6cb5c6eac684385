package wirecap

import (
	"net"
	"testing"
	"time"
)

// TestPortFilter: with a port filter only that port's packets arrive, IPv4
// and IPv6, each stamped with when the kernel received it.
func TestPortFilter(t *testing.T) {
	for _, host := range []string{"127.0.0.1", "::1"} {
		want, err := net.ListenPacket("udp", net.JoinHostPort(host, "0"))
		if err != nil {
			t.Fatal(err)
		}
		other, err := net.ListenPacket("udp", net.JoinHostPort(host, "0"))
		if err != nil {
			t.Fatal(err)
		}
		wantPort := uint16(want.LocalAddr().(*net.UDPAddr).Port)
		c := Start(t, "lo", wantPort)
		before := time.Now()
		for _, dst := range []net.Addr{want.LocalAddr(), other.LocalAddr(), want.LocalAddr()} {
			if _, err := other.WriteTo([]byte("wirecap"), dst); err != nil {
				t.Fatal(err)
			}
		}
		after := time.Now()
		time.Sleep(100 * time.Millisecond)
		pkts := c.Stop()
		want.Close()
		other.Close()
		if len(pkts) != 2 {
			t.Fatalf("%s: %d packets captured, want the 2 to port %d: %+v", host, len(pkts), wantPort, pkts)
		}
		for _, p := range pkts {
			if p.Dst.Port() != wantPort || p.Payload != 7 || p.IPv6 != (host == "::1") {
				t.Errorf("%s: captured %+v", host, p)
			}
			// The stamp is the wall clock's, to the kernel's resolution.
			if p.At.Before(before.Add(-time.Millisecond)) || p.At.After(after.Add(time.Millisecond)) {
				t.Errorf("%s: stamped %v, sent between %v and %v", host, p.At, before, after)
			}
		}
	}
}

// TestStopKeepsQueuedPackets: every packet that passed lo's receive path
// before Stop is kept, however far behind the reading goroutine was. The
// receiving socket has read all of them, so all of them were queued for the
// capture; Stop is called at once, with no pause for the reader.
func TestStopKeepsQueuedPackets(t *testing.T) {
	const n = 500
	for round := range 5 {
		rx, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		tx, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		c := Start(t, "lo", uint16(rx.LocalAddr().(*net.UDPAddr).Port))
		buf := make([]byte, 64)
		for i := range n {
			if _, err := tx.WriteTo([]byte{byte(i >> 8), byte(i)}, rx.LocalAddr()); err != nil {
				t.Fatal(err)
			}
			_ = rx.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, _, err := rx.ReadFrom(buf); err != nil {
				t.Fatalf("datagram %d sent but not received: %v", i, err)
			}
		}
		pkts := c.Stop()
		st := c.Stats()
		rx.Close()
		tx.Close()
		t.Logf("round %d: %d packets, %d of them read only at Stop; %+v", round, len(pkts), st.Drained, st)
		if st.Lost() {
			t.Fatalf("the capture reports its own loss: %+v", st)
		}
		if len(pkts) != n {
			t.Fatalf("round %d: %d packets captured, want all %d", round, len(pkts), n)
		}
		for i, p := range pkts {
			if got := int(p.Head[0])<<8 | int(p.Head[1]); got != i {
				t.Fatalf("packet %d carries %d: out of order or missing", i, got)
			}
		}
	}
}

// TestWait: Wait returns as soon as the packets it waits for are in, and
// false after its timeout when they never come.
func TestWait(t *testing.T) {
	rx, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	c := Start(t, "lo", uint16(rx.LocalAddr().(*net.UDPAddr).Port))
	if _, err := rx.WriteTo([]byte("x"), rx.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	if !c.Wait(10*time.Second, func(p []Packet) bool { return len(p) == 1 }) {
		t.Fatalf("the packet sent never reached the capture: %+v", c.Packets())
	}
	if c.Wait(100*time.Millisecond, func(p []Packet) bool { return len(p) == 2 }) {
		t.Fatal("Wait reported a second packet that was never sent")
	}
	c.Stop()
}
