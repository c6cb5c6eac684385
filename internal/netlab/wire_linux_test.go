//go:build linux

package netlab

import (
	"context"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/internal/edtwire"
)

// TestExactWireForwards: with Config.Wire = WireExact, A and B reach each
// other (IPv4 and IPv6, both ways) through the forwarder in R and not
// through R's kernel: R forwards nothing itself and sends no ICMP, the
// forwarder counts every frame, and every frame it sees is one Ethernet
// frame (the senders' GSO batches were cut into frames before R), charged
// its length plus 24 bytes.
func TestExactWireForwards(t *testing.T) {
	requireLab(t)
	l := newLab(t, Config{Name: "exactfwd", RateBPS: 100e6, Wire: WireExact, IPv6: true, ShapeBothWays: true})
	if l.R == nil {
		t.Fatal("the exact wire made no router")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, dst := range []string{l.B.Addr.String(), l.B.Addr6.String()} {
		if out, err := l.A.Command(ctx, "ping", "-c", "2", "-i", "0.2", "-W", "5", dst).CombinedOutput(); err != nil {
			t.Fatalf("ping %s from A through the exact wire: %v\n%s", dst, err, out)
		}
	}
	before := wireStat(t, l, "a>b")

	// UDP GSO: 20 sends of 4 datagrams of 1470 bytes, each send one skb
	// at A's socket.
	srv := listenInB(t, l)
	if err := srv.SetReadBuffer(4 << 20); err != nil {
		t.Fatal(err)
	}
	c := dialFromA(t, l, srv)
	setGSO(t, c, 1470)
	const sends, per = 20, 4
	batch := make([]byte, per*1470)
	for i := 0; i < sends; i++ {
		if _, err := c.Write(batch); err != nil {
			t.Fatalf("GSO send: %v", err)
		}
	}
	buf := make([]byte, 65536)
	srv.SetReadDeadline(time.Now().Add(10 * time.Second))
	for got := 0; got < sends*per; got++ {
		n, err := srv.Read(buf)
		if err != nil {
			t.Fatalf("B read %d of %d datagrams: %v", got, sends*per, err)
		}
		if n != 1470 {
			t.Fatalf("datagram of %d bytes at B, want %d", n, 1470)
		}
	}
	after := wireStat(t, l, "a>b")
	frames, wire := after.Frames-before.Frames, after.WireBytes-before.WireBytes
	t.Logf("a>b after the GSO sends: %v", after)
	if frames != sends*per || wire != sends*per*1536 {
		t.Errorf("the wire forwarded %d frames charged %d bytes for %d datagrams, want %d frames of 1536 bytes",
			frames, wire, sends*per, sends*per)
	}

	// TCP (TSO at A's socket): 4 MB A→B.
	tcpOnce(t, l, 4<<20)
	for _, s := range l.WireStats() {
		t.Logf("%v", s)
		if s.MaxFrame > l.Config.MTU+EthernetHeader || s.GSOFrames != 0 {
			t.Errorf("%s: a frame of %d bytes (%d GSO frames) reached R: a sender's batch was not cut into frames", s.Name, s.MaxFrame, s.GSOFrames)
		}
		if s.Dropped != 0 || s.SendErrors != 0 || s.TTLExpired != 0 {
			t.Errorf("%s: unexpected losses: %v", s.Name, s)
		}
		if s.WireBytes < s.Bytes+edtwire.Overhead*s.Frames {
			t.Errorf("%s: charged %d bytes for %d frames of %d bytes: less than each frame plus 24", s.Name, s.WireBytes, s.Frames, s.Bytes)
		}
	}
	checkRouterQuiet(t, l)
}

// wireStat returns the exact wire's counters of direction name.
func wireStat(t *testing.T, l *Lab, name string) edtwire.Stats {
	t.Helper()
	for _, s := range l.WireStats() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no wire direction %q", name)
	return edtwire.Stats{}
}

// tcpOnce sends n bytes over TCP from A to B and waits until B has them.
// B's receive buffer is 64 KiB (set on the listener, so the connection's
// window never opens wider): the flow never has more in flight than a
// shaped wire's queue holds (20 ms at 100 Mbit/s is 250 kB), so no frame
// of it is the wire's to drop, however the flow's bursts fall; a window
// opened by autotuning overflowed it in a CI run under load.
func tcpOnce(t *testing.T, l *Lab, n int) {
	t.Helper()
	var ln net.Listener
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, 64<<10) }); err != nil {
			return err
		}
		return serr
	}}
	if err := l.B.Do(func() (err error) {
		ln, err = lc.Listen(context.Background(), "tcp", net.JoinHostPort(l.B.Addr.String(), "0"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan int, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			got <- -1
			return
		}
		defer conn.Close()
		conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		total := 0
		buf := make([]byte, 1<<16)
		for {
			k, err := conn.Read(buf)
			total += k
			if err != nil {
				got <- total
				return
			}
		}
	}()
	var c net.Conn
	if err := l.A.Do(func() (err error) {
		c, err = net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
		return err
	}); err != nil {
		t.Fatalf("dial from A: %v", err)
	}
	c.SetWriteDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write(make([]byte, n)); err != nil {
		t.Fatalf("TCP write: %v", err)
	}
	c.Close()
	if total := <-got; total != n {
		t.Fatalf("B received %d of %d TCP bytes", total, n)
	}
}

// checkRouterQuiet checks that R's kernel forwarded nothing and sent no
// ICMP error (forwarding is off there: it drops its copy of each frame
// silently), and that forwarding is indeed off.
func checkRouterQuiet(t *testing.T, l *Lab) {
	t.Helper()
	var fwd []byte
	if err := l.R.Do(func() (err error) {
		fwd, err = os.ReadFile("/proc/sys/net/ipv4/ip_forward")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(fwd)) != "0" {
		t.Errorf("ip_forward in R is %q, want 0", fwd)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := l.R.Command(ctx, "cat", "/proc/net/snmp").Output()
	if err != nil {
		t.Fatal(err)
	}
	ip, icmp := snmpRow(string(out), "Ip:"), snmpRow(string(out), "Icmp:")
	t.Logf("R: Ip ForwDatagrams %s InAddrErrors %s, Icmp OutMsgs %s OutDestUnreachs %s",
		ip["ForwDatagrams"], ip["InAddrErrors"], icmp["OutMsgs"], icmp["OutDestUnreachs"])
	if ip["ForwDatagrams"] != "0" || icmp["OutDestUnreachs"] != "0" {
		t.Errorf("R's kernel forwarded %s datagrams and sent %s ICMP unreachables, want none",
			ip["ForwDatagrams"], icmp["OutDestUnreachs"])
	}
}

// snmpRow returns the named row of /proc/net/snmp as name → value.
func snmpRow(snmp, row string) map[string]string {
	var names, values []string
	for _, line := range strings.Split(snmp, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == row {
			if names == nil {
				names = f
			} else {
				values = f
			}
		}
	}
	m := map[string]string{}
	for i := 1; i < len(names) && i < len(values); i++ {
		m[names[i]] = values[i]
	}
	return m
}
