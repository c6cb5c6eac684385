//go:build linux

package netlab

import (
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/wirebench/wirebench/internal/proccpu"
)

// TestFillerDeepIdle: once the lab's traffic has left the filled wire
// idle for FillFor, the filler sends nothing more and uses next to no CPU
// (its wire's bucket is emptied instead); traffic wakes it, it fills again
// and goes back to deep idle; when it stops it gives the wire its bucket
// back. Before issue 38 it sent about 10,000 frames a second for as long
// as the lab idled. The CPU bound (5 % of a core, over windows of 2 s of
// CPU time, not of wall time) is generous: the deep idle costs a wake-up
// every fillWake, and this test process does nothing else meanwhile.
func TestFillerDeepIdle(t *testing.T) {
	requireLab(t)
	l := newLab(t, Config{Name: "idle", RateBPS: 100e6})
	f := l.sys.filler
	if f == nil || len(f.links) != 1 {
		t.Fatalf("want a filler on one link, have %+v", f)
	}
	full := f.links[0].wire.Buffer
	before := quietWindow(t, l)

	// Traffic wakes it: it fills after the traffic, then idles deeply again.
	var c net.PacketConn
	if err := l.A.Do(func() (err error) {
		c, err = net.ListenPacket("udp", netip.AddrPortFrom(l.A.Addr, 0).String())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.WriteTo(make([]byte, 1000), net.UDPAddrFromAddrPort(netip.AddrPortFrom(l.B.Addr, 9))); err != nil {
		t.Fatal(err)
	}
	after := quietWindow(t, l)
	if after.Idles <= before.Idles || after.Frames <= before.Frames {
		t.Errorf("after one datagram the filler did not fill and idle again: before %v, after %v", before, after)
	}

	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got := wireBuffer(t, l.A); got != full {
		t.Errorf("after Close the wire's bucket is %d ticks, want it back at %d", got, full)
	}
}

// quietWindow waits (up to 40 s) for a window of 2 s in which the filler
// of l sent nothing and stayed in deep idle, checks that the wire's bucket
// is empty and that this process used under 5 % of a core then, and
// returns the filler's counters.
func quietWindow(t *testing.T, l *Lab) FillStats {
	t.Helper()
	for try := 1; try <= 20; try++ {
		s0, u0 := l.FillStats()[0], readSelf(t)
		time.Sleep(2 * time.Second)
		s1, u1 := l.FillStats()[0], readSelf(t)
		if s1.Idles == 0 || s1.Idles != s0.Idles || s1.Frames != s0.Frames {
			t.Logf("try %d: not idle yet: %v then %v", try, s0, s1)
			continue
		}
		cpu, wall := u1.CPU-u0.CPU, u1.Age-u0.Age
		t.Logf("quiet: %v; this process used %v of CPU in %v", s1, cpu, wall)
		if wall > 0 && cpu.Seconds() > 0.05*wall.Seconds() {
			t.Errorf("the idle lab's filler used %v of CPU in %v, over 5 %% of a core", cpu, wall)
		}
		if b := wireBuffer(t, l.A); b != 0 {
			t.Errorf("in deep idle the wire's bucket is %d ticks, want 0", b)
		}
		if s1.Errors != 0 {
			t.Errorf("the filler counted errors: %v", s1)
		}
		return s1
	}
	t.Fatalf("the filler never stayed idle for 2 s: %v", l.FillStats())
	return FillStats{}
}

func readSelf(t *testing.T) proccpu.Usage {
	t.Helper()
	u, err := proccpu.Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// wireBuffer returns the bucket (HTB buffer, in ticks) of the wire class
// on h's veth end.
func wireBuffer(t *testing.T, h *Host) uint32 {
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
		if hc, ok := c.(*netlink.HtbClass); ok && hc.Handle == wireHandle {
			return hc.Buffer
		}
	}
	t.Fatalf("no wire class on %s", h.Ifname)
	return 0
}
