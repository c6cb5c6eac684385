//go:build linux && netlab

package netlab

import (
	"fmt"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"
)

// TestShapingUDPGSO: a sender that hands the kernel UDP GSO batches
// (UDP_SEGMENT, 1470-byte datagrams) is charged each datagram's full 1536
// bytes of wire time, whatever the batch size: 4 datagrams (a batch
// smaller than tbf's 12,500-byte bucket, which tbf would pass whole
// without its one-frame mtu) and 44 (a 64 KB batch, which tbf always
// segments, and whose segments a size table would charge without their
// overhead).
//
// Method: tbf's own counters on A's egress, read twice while the sender
// keeps the queue full. tbf cannot have sent more wire time than its rate
// over the time between the readings plus one bucket, so
//
//	(bytes + 24 × packets) ≤ rate/8 × (t_after_2nd − t_before_1st) + burst
//
// where bytes are the skb lengths tbf counts (1512 per frame) and 24 is
// the Ethernet overhead. A batch charged the overhead once breaks it by
// 1.2 % (4 datagrams) to 1.6 % (44). Load can only make tbf send less, so
// this bound needs no retries; the figure's shortfall is only logged.
func TestShapingUDPGSO(t *testing.T) {
	requireLab(t)
	l := newLab(t, Config{Name: "shapegso", RateBPS: shapeRate})
	srv := listenInB(t, l)
	go func() { // drain, so that B answers no ICMP port unreachable
		buf := make([]byte, 65536)
		for {
			if _, err := srv.Read(buf); err != nil {
				return
			}
		}
	}()
	dst := netip.AddrPortFrom(l.B.Addr, uint16(srv.LocalAddr().(*net.UDPAddr).Port))
	for _, segs := range []int{4, 44} {
		t.Run(fmt.Sprintf("%d datagrams per batch", segs), func(t *testing.T) {
			shapingGSO(t, l, dst, segs)
		})
	}
}

// shapingGSO is TestShapingUDPGSO with batches of segs datagrams.
func shapingGSO(t *testing.T, l *Lab, dst netip.AddrPort, segs int) {
	var c *net.UDPConn
	if err := l.A.Do(func() (err error) {
		c, err = net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(dst))
		return err
	}); err != nil {
		t.Fatalf("dial from A: %v", err)
	}
	defer c.Close()
	setGSO(t, c, udpPayload)
	var stop atomic.Bool
	done := make(chan error, 1)
	go func() {
		batch := make([]byte, segs*udpPayload)
		for !stop.Load() {
			if _, err := c.Write(batch); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	defer func() {
		stop.Store(true)
		if err := <-done; err != nil {
			t.Errorf("GSO send: %v", err)
		}
	}()

	time.Sleep(700 * time.Millisecond) // the bucket empties, the queue fills
	t0 := time.Now()
	b0, p0 := tbfCounters(t, l.A)
	time.Sleep(3 * time.Second)
	b1, p1 := tbfCounters(t, l.A)
	elapsed := time.Since(t0)

	burst := l.Config.burst()
	wire := float64(b1-b0) + EthernetOverhead*float64(p1-p0)
	bound := shapeRate/8*elapsed.Seconds() + float64(burst)
	per := float64(b1-b0) / float64(p1-p0)
	t.Logf("%s: tbf sent %d packets, %d bytes (%.1f each) in %v: %.0f bytes of wire time with the overhead, %.2f %% of the %.0f the wire allows",
		loadAvg(), p1-p0, b1-b0, per, elapsed.Round(time.Millisecond), wire, 100*wire/bound, bound)
	if p1-p0 < 1000 {
		t.Fatalf("tbf sent only %d packets in %v: the sender did not keep the queue full", p1-p0, elapsed)
	}
	if wire > bound {
		t.Fatalf("tbf let %.0f bytes of wire time through where %.0f fit (%.2f %%): a GSO batch was charged its Ethernet overhead less than once per datagram",
			wire, bound, 100*wire/bound)
	}
	// Each packet tbf counts is a 1470-byte datagram's 1512-byte frame
	// (a few small ones from ARP may dilute the mean).
	if per < 1505 || per > 1512.01 {
		t.Errorf("%.1f bytes per packet: want 1512 (a 1470-byte datagram's frame)", per)
	}
}
