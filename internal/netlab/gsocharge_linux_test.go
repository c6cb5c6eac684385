//go:build linux

package netlab

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// TestGSOChargedPerFrame: the shaper charges every datagram of a UDP GSO
// batch its full wire size (1470 + 28 + 14 + 24 = 1536 bytes), for a batch
// larger than the bucket (44 datagrams in one send) and for batches
// smaller than it (4 datagrams a send), which tbf would pass whole without
// its one-frame mtu.
//
// Method, chosen so that the machine's load cannot move the answer: a
// lab wire of 8 kbit/s (1000 bytes/s) whose bucket, full after idle,
// holds 59,460 bytes. 44 datagrams are queued at once; 1.5 s later the
// bucket has paid for 59,460 + 1,500 = 60,960 bytes, which buys 39 frames
// at 1536 bytes (59,904) and 40 at 1512 (60,480, a frame charged without
// its Ethernet overhead) or at less. The count is the same for any
// reading between 1.02 and 1.98 s after the send, so a late reading
// changes nothing; tbf's packet counter gives it.
func TestGSOChargedPerFrame(t *testing.T) {
	requireLab(t)
	const (
		rate   = 8000  // bit/s: 1000 bytes/s
		burst  = 59460 // bytes; see above
		frames = 44
		want   = 39
	)
	for _, batch := range []int{frames, 4} {
		t.Run(fmt.Sprintf("%d datagrams per send", batch), func(t *testing.T) {
			l := newLab(t, Config{Name: "gsocharge", RateBPS: rate, Burst: burst, Latency: 20 * time.Second, Wire: WireTBF})
			srv := listenInB(t, l)
			dst := netip.AddrPortFrom(l.B.Addr, uint16(srv.LocalAddr().(*net.UDPAddr).Port))
			var c *net.UDPConn
			if err := l.A.Do(func() (err error) {
				c, err = net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(dst))
				return err
			}); err != nil {
				t.Fatalf("dial from A: %v", err)
			}
			defer c.Close()
			// One small datagram resolves B's address (ARP), then the
			// bucket refills: 60 + 66 bytes cost 0.13 s at 1000 bytes/s.
			if _, err := c.Write([]byte("arp")); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second)
			setGSO(t, c, 1470)
			_, p0 := tbfCounters(t, l.A)
			start := time.Now()
			buf := make([]byte, batch*1470)
			for sent := 0; sent < frames; sent += batch {
				if _, err := c.Write(buf); err != nil {
					t.Fatalf("GSO send: %v", err)
				}
			}
			time.Sleep(1500*time.Millisecond - time.Since(start))
			_, p1 := tbfCounters(t, l.A)
			late := time.Since(start)
			n := p1 - p0
			t.Logf("%d datagrams of 1470 bytes queued in sends of %d; %v later tbf had sent %d (want %d: 1536 bytes each)",
				frames, batch, late.Round(time.Millisecond), n, want)
			if late > 1950*time.Millisecond {
				t.Skipf("the reading came %v after the send, too late to tell 1512 from 1536 bytes a frame (machine overloaded)", late)
			}
			if n != want {
				t.Fatalf("tbf sent %d datagrams of a GSO batch from a full %d-byte bucket in %v, want %d: "+
					"a datagram was charged less than its 1536 bytes on the wire", n, burst, late.Round(time.Millisecond), want)
			}
		})
	}
}

// TestFilledGSOChargedPerFrame: on the filled wire, HTB charges every
// datagram of a UDP GSO batch as a frame of its own: the traffic class
// counts 44 packets of 1512 bytes (1470 + 28 + 14; the rate table adds the
// wire's 24 to each) for one 44-datagram send, not one packet of them all.
// HTB's per-packet charge is then exactly tbf's (TestGSOChargedPerFrame),
// and the rates say the same (TestShapingUDPGSO). No timing: the counters
// are read once the batch has left.
func TestFilledGSOChargedPerFrame(t *testing.T) {
	requireLab(t)
	l := newLab(t, Config{Name: "fillgso", RateBPS: 100e6})
	// No IPv6 from A: its MLD reports (90 bytes) would land in the count.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if out, err := l.A.Command(ctx, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf."+l.A.Ifname+".disable_ipv6=1").CombinedOutput(); err != nil {
		t.Fatalf("disabling IPv6 in A: %v: %s", err, out)
	}
	srv := listenInB(t, l)
	dst := netip.AddrPortFrom(l.B.Addr, uint16(srv.LocalAddr().(*net.UDPAddr).Port))
	var c *net.UDPConn
	if err := l.A.Do(func() (err error) {
		c, err = net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(dst))
		return err
	}); err != nil {
		t.Fatalf("dial from A: %v", err)
	}
	defer c.Close()
	// One small datagram resolves B's address first; B reading it means
	// no ARP frame or queued datagram can land in the count below.
	if _, err := c.Write([]byte("arp")); err != nil {
		t.Fatal(err)
	}
	if err := srv.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := srv.ReadFrom(make([]byte, 64)); err != nil {
		t.Fatalf("the first datagram did not reach B: %v", err)
	}
	waitClassIdle(t, l.A)
	setGSO(t, c, 1470)
	b0, p0 := classCounters(t, l.A, fillTrafficClass)
	if _, err := c.Write(make([]byte, 44*1470)); err != nil {
		t.Fatalf("GSO send: %v", err)
	}
	waitClassIdle(t, l.A)
	b1, p1 := classCounters(t, l.A, fillTrafficClass)
	t.Logf("one send of 44 datagrams: the traffic class sent %d packets, %d bytes", p1-p0, b1-b0)
	if p1-p0 != 44 || b1-b0 != 44*1512 {
		t.Fatalf("the traffic class sent %d packets, %d bytes for one 44-datagram GSO send, want 44 of 1512 bytes", p1-p0, b1-b0)
	}
}

// classCounters returns the bytes and packets HTB class id on h's lab
// interface has sent.
func classCounters(t *testing.T, h *Host, id string) (bytes, packets uint64) {
	t.Helper()
	link, err := h.sys.nl.LinkByName(h.Ifname)
	if err != nil {
		t.Fatal(err)
	}
	cls, err := h.sys.nl.ClassList(link, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cls {
		a := c.Attrs()
		if netlink.HandleStr(a.Handle) == id && a.Statistics != nil && a.Statistics.Basic != nil {
			return a.Statistics.Basic.Bytes, uint64(a.Statistics.Basic.Packets)
		}
	}
	t.Fatalf("no class %s with statistics on %s in %s", id, h.Ifname, h.Name)
	return 0, 0
}

// waitClassIdle waits (at most 10 s) until the traffic class on h's lab
// interface has nothing queued.
func waitClassIdle(t *testing.T, h *Host) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, p := classCounters(t, h, fillTrafficClass)
		time.Sleep(50 * time.Millisecond)
		if _, q := classCounters(t, h, fillTrafficClass); q == p {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the traffic class did not go idle in 10 s")
		}
	}
}

// setGSO turns on UDP GSO (UDP_SEGMENT) with size-byte segments on c.
func setGSO(t *testing.T, c *net.UDPConn, size int) {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_UDP, unix.UDP_SEGMENT, size)
	}); err != nil || serr != nil {
		t.Skipf("UDP_SEGMENT: %v %v", err, serr)
	}
}

// tbfCounters returns the bytes and packets the tbf on h's lab interface
// has sent, read over netlink (in well under a millisecond, so that the
// time between two readings is known closely).
func tbfCounters(t *testing.T, h *Host) (bytes, packets uint64) {
	t.Helper()
	link, err := h.sys.nl.LinkByName(h.Ifname)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := h.sys.nl.QdiscList(link)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if q.Type() == "tbf" && q.Attrs().Statistics != nil && q.Attrs().Statistics.Basic != nil {
			return q.Attrs().Statistics.Basic.Bytes, uint64(q.Attrs().Statistics.Basic.Packets)
		}
	}
	t.Fatalf("no tbf with statistics on %s in %s", h.Ifname, h.Name)
	return 0, 0
}
