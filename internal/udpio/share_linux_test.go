package udpio

import (
	"context"
	"errors"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestShareAddr: a listener opened up with ShareAddr still keeps a second
// plain bind out, lets a socket bound with SharedControl and connected to
// one peer take that peer's datagrams while others still come to the
// listener, and QueueEmpty tells a queued datagram from none.
func TestShareAddr(t *testing.T) {
	for _, c := range []struct{ network, addr, peer string }{
		{"udp4", "127.0.0.1:0", "127.0.0.1:0"},
		{"udp", "[::]:0", "127.0.0.1:0"}, // dual-stack listener, IPv4 peer
	} {
		t.Run(c.network+" "+c.addr, func(t *testing.T) {
			ln := listen(t, c.network, c.addr, Options{GRO: true, Control: SharedControl(nil)})
			if err := ShareAddr(ln); err != nil {
				t.Fatal(err)
			}
			port := int(ln.LocalAddr().Port())
			// A socket without SO_REUSEPORT still cannot take the port.
			if pc, err := net.ListenPacket(c.network, ln.LocalAddr().String()); err == nil {
				pc.Close()
				t.Fatal("a plain bind took the listener's port")
			} else if !errors.Is(err, syscall.EADDRINUSE) {
				t.Fatalf("a plain bind: %v, want EADDRINUSE", err)
			}
			if empty, ok := QueueEmpty(ln); !ok || !empty {
				t.Fatalf("QueueEmpty of an idle listener = %v, %v; want true, true", empty, ok)
			}
			a := dialFrom(t, c.peer, port)
			b := dialFrom(t, c.peer, port)
			mustWrite(t, a, "a1")
			waitQueued(t, ln)
			if empty, ok := QueueEmpty(ln); !ok || empty {
				t.Fatalf("QueueEmpty with a datagram queued = %v, %v; want false, true", empty, ok)
			}
			got := readOne(t, ln)
			if got != "a1" {
				t.Fatalf("listener read %q, want a1", got)
			}
			// The socket of a's own: bound where the listener is.
			local := ln.LocalAddr().String()
			own, err := Dial(context.Background(), "udp", a.LocalAddr().String(), local, Options{Control: SharedControl(nil)})
			if err != nil {
				t.Fatal(err)
			}
			defer own.Close()
			mustWrite(t, a, "a2")
			mustWrite(t, b, "b1")
			if got := readOne(t, own); got != "a2" {
				t.Errorf("own socket read %q, want a2", got)
			}
			if got := readOne(t, ln); got != "b1" {
				t.Errorf("listener read %q, want b1 (another peer's)", got)
			}
		})
	}
}

func dialFrom(t *testing.T, peer string, port int) *net.UDPConn {
	t.Helper()
	la, _ := net.ResolveUDPAddr("udp4", peer)
	c, err := net.DialUDP("udp4", la, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func mustWrite(t *testing.T, c *net.UDPConn, s string) {
	t.Helper()
	if _, err := c.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
}

// waitQueued waits (bounded) until c's socket has a datagram queued.
func waitQueued(t *testing.T, c Conn) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if empty, ok := QueueEmpty(c); ok && !empty {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no datagram queued within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

func readOne(t *testing.T, c Conn) string {
	t.Helper()
	msgs := []Message{{Buf: make([]byte, 2048)}}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := c.ReadBatch(msgs)
	if err != nil || n != 1 {
		t.Fatalf("read: %d, %v", n, err)
	}
	return string(msgs[0].Buf[:msgs[0].N])
}

// TestSharedUnconnectedTakesNothing: a socket that joined the listener's
// group but is not connected (the moment between an own socket's bind and
// its connect) takes no datagram of any peer: every one reaches the
// listener.
func TestSharedUnconnectedTakesNothing(t *testing.T) {
	ln := listen(t, "udp4", "127.0.0.1:0", Options{Control: SharedControl(nil)})
	if err := ShareAddr(ln); err != nil {
		t.Fatal(err)
	}
	idle := listen(t, "udp4", ln.LocalAddr().String(), Options{Control: SharedControl(nil)})
	port := int(ln.LocalAddr().Port())
	const n = 200
	for i := range n {
		mustWrite(t, dialFrom(t, "127.0.0.1:0", port), "d"+strconv.Itoa(i))
	}
	for i := 0; i < n; i++ {
		readOne(t, ln)
	}
	if empty, ok := QueueEmpty(idle); !ok || !empty {
		t.Fatalf("the unconnected group member has datagrams queued (empty %v, ok %v); want none", empty, ok)
	}
}
