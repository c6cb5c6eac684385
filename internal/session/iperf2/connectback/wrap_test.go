package connectback

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2/udpstream"
	"github.com/wirebench/wirebench/internal/testutil/loopback"
	i2wire "github.com/wirebench/wirebench/internal/wire/iperf2"
)

// TestSenderHeaderAsksFor64BitIDs: a connect-back to a client that asked
// for 64-bit ids says its ids are 64-bit, in a header a receiver reads
// (and that asks for no connect-back of its own); to a client that did
// not, or in datagrams too short for it, there is none.
func TestSenderHeaderAsksFor64BitIDs(t *testing.T) {
	asked := i2wire.NewClientHeader(true, 1, 5001)
	b := SenderHeader(asked, 1470, 10*time.Second, 0, 1e6)
	h, _, err := i2wire.ParseClientHeader(b)
	if err != nil || h.Flags&i2wire.FlagSeqNo64b == 0 || h.Flags&i2wire.FlagVersion1 != 0 || h.BufLen != 1470 {
		t.Fatalf("header %+v (%v): want FlagSeqNo64b, no FlagVersion1, length 1470", h, err)
	}
	if d, ok := h.Duration(); !ok || d != 10*time.Second {
		t.Errorf("its duration %v, %v; want 10s", d, ok)
	}
	dg := append(make([]byte, 16), b...)
	if i2wire.ClientHeaderLen(h.WireFlags(true), true) != len(b) || i2wire.DetectUDPLayout(dg) != i2wire.LayoutModern {
		t.Errorf("a receiver would not find the header: flags %#x, %d bytes", h.WireFlags(true), len(b))
	}
	if SenderHeader(i2wire.ClientHeader{NumThreads: 1}, 1470, time.Second, 0, 1e6) != nil {
		t.Error("a header for a client that did not ask for 64-bit ids (iperf 2.0.5)")
	}
	if SenderHeader(asked, 75, time.Second, 0, 1e6) != nil {
		t.Error("a header in 75-byte datagrams, which cannot hold it")
	}
}

// TestListenerReads32BitIDsAcrossTheWrap: a connect-back without the
// header that says 64-bit ids (18-byte datagrams, iperf 2.0.5's 12-byte
// layout; and one with it, 1470 bytes, past 2^32) is counted exactly, and
// ends at its FIN, wherever its ids lie: across 2^31, with the FIN just
// below it (its bits read as data are a few ids ahead) and in (2^30, 2^31)
// (far ahead), where reading the FIN as data left the client waiting out
// the deadline with a partial count.
func TestListenerReads32BitIDsAcrossTheWrap(t *testing.T) {
	const n = 3000 // data datagrams, the FIN after them
	type stream struct {
		layout i2wire.Layout
		length int
		ids    idWidth
	}
	streams := []stream{{i2wire.LayoutModern, 18, ids32}, {i2wire.LayoutLegacy, 18, ids32}, {i2wire.LayoutModern, 1470, ids64},
		{i2wire.LayoutModern, 1470, idsUnannounced}}
	for _, base := range []int64{1<<31 - n/2, 1<<31 - n - 4, 3 << 29, 5<<31 - n/2} {
		for _, s := range streams {
			if base > 1<<32 && s.ids != ids64 {
				continue // 32-bit ids from past 2^32: a receiver cannot know the wraps before
			}
			t.Run(fmt.Sprintf("%#x/%v/%dB", base, s.layout, s.length), func(t *testing.T) {
				udpstream.SetTestIDBase(base)
				t.Cleanup(func() { udpstream.SetTestIDBase(0) })
				runConnectBack(t, s.layout, s.length, s.ids, n, nil)
			})
		}
	}
}

// TestListenerLossAtTheWrap: where ids are lost at 2^31 a 32-bit id can
// read both as data and as the FIN. An iperf 2.1 server's connect-back
// (no header, its upper id words written all the same) is read by them: a
// FIN just above 2^31 after a lost tail, whose data reading is nearer,
// ends the test with exact counts.
func TestListenerLossAtTheWrap(t *testing.T) {
	const n = 200
	w := int64(1) << 31
	cases := []struct {
		name string
		base int64
		lost func(id int64) bool
	}{
		{"FIN at 2^31+2 after the last 7 lost", w + 1 - n, func(id int64) bool { return id >= w-5 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			udpstream.SetTestIDBase(c.base)
			t.Cleanup(func() { udpstream.SetTestIDBase(0) })
			runConnectBack(t, i2wire.LayoutModern, 1470, idsUnannounced, n, c.lost)
		})
	}
}

// idWidth is how a played sender writes its ids.
type idWidth int

const (
	ids32          idWidth = iota // the lower 32 bits, filler above (iperf 2.0.5, zperf)
	ids64                         // 64 bits, as our connect-back's header says (SenderHeader)
	idsUnannounced                // 64 bits, no header: an iperf 2.1 server's connect-back
)

// runConnectBack plays a server's connect-back of n data datagrams (those
// lost says lost are not sent) and its FIN towards a Listener, and checks
// what the Listener counted.
func runConnectBack(t *testing.T, l i2wire.Layout, length int, ids idWidth, n int64, lost func(int64) bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lo := netip.MustParseAddr("127.0.0.1")
	cfg := &session.ClientConfig{UDP: true, Length: length, ListenPort: loopback.FreePort(t)}
	b, err := Listen(ctx, cfg, lo, lo)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	iv := engine.NewIntervals(time.Now(), 0, nil)
	iv.Run(ctx)
	b.Start(ctx, iv, true)
	c, err := net.Dial("udp", net.JoinHostPort(lo.String(), strconv.Itoa(cfg.ListenPort)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	spec := &udpstream.Sender{Layout: l, Length: length}
	if ids == ids64 {
		spec.Header = SenderHeader(i2wire.NewClientHeader(true, 1, 0), length, time.Second, 0, 1e6)
	}
	dg := spec.Template(func(p []byte) { clear(p) })
	if ids == idsUnannounced {
		copy(dg[16:], "6789012345") // iperf 2.1's payload pattern, no header
	}
	first := udpstream.FirstID(l)
	var dropped int64
	for id := first; id < first+n; id++ {
		if lost != nil && lost(id) {
			dropped++
			continue
		}
		put(dg, l, id, ids)
		if _, err := c.Write(dg); err != nil {
			t.Fatal(err)
		}
		if id%64 == 0 {
			// The listener's 16 MiB buffer (forced, as root) holds the
			// whole stream; pauses spread it where it cannot be forced.
			time.Sleep(200 * time.Microsecond)
		}
	}
	// The FIN, re-sent until the report comes back, as a 2.1 server does
	// (up to 200 times; here 100 ms apart, so a slow reader has 20 s).
	finID := -(first + n)
	reply := make([]byte, 2048)
	got := false
	for k := 0; k < 200 && !got; k++ {
		put(dg, l, finID-int64(k), ids)
		_, _ = c.Write(dg)
		_ = c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		m, err := c.Read(reply)
		got = err == nil && m > 0
	}
	if !got {
		t.Fatal("no report came back for the connect-back's FIN: it was not read as one")
	}
	f := b.Wait(ctx, time.Second)
	if f == nil || f.Receiver == nil {
		t.Fatalf("no connect-back flow; warnings %q", b.Warnings())
	}
	r := f.Receiver
	// The FIN counts as datagram |id| (iperf's rule): n+1 datagrams, the
	// highest first+n.
	if r.Packets != n+1-dropped || r.Lost != dropped || r.OutOfOrder != 0 || r.Total != first+n {
		t.Errorf("counted %d datagrams, %d lost, %d out of order, highest id %d; sent %d of %d and the FIN, ids %d..%d",
			r.Packets, r.Lost, r.OutOfOrder, r.Total, n-dropped, n, first, first+n)
	}
	for _, w := range b.Warnings() {
		if strings.Contains(w, "did not finish") || strings.Contains(w, "after the FIN") || strings.Contains(w, "never sent a FIN") {
			t.Errorf("warning: %s", w)
		}
	}
}

// put writes id into datagram dg as a sender of layout l and ids writes
// it.
func put(dg []byte, l i2wire.Layout, id int64, ids idWidth) {
	if ids != ids32 {
		i2wire.PutDatagram(dg, l, id, time.Now())
		return
	}
	i2wire.PutDatagram(dg, l, int64(int32(uint32(id))), time.Now())
	if l == i2wire.LayoutModern {
		copy(dg[12:16], "zzzz")
	}
}

// TestListenMovesOffTheServersPortOnThisHost: with -L left at the server's
// port, a server on this host (loopback, or our own address) holds that
// port, or (a TCP-only server and a UDP test) our own datagrams would
// arrive at the listener: it takes a free port and says which. A server
// elsewhere gets the port asked for.
func TestListenMovesOffTheServersPortOnThisHost(t *testing.T) {
	lo := netip.MustParseAddr("127.0.0.1")
	for _, c := range []struct {
		name          string
		server, local netip.Addr
		moves         bool
	}{
		{"loopback", lo, lo, true},
		{"ipv6 loopback", netip.MustParseAddr("::1"), netip.MustParseAddr("::1"), true},
		{"our own address", netip.MustParseAddr("198.18.0.1"), netip.MustParseAddr("198.18.0.1"), true},
		{"another host", netip.MustParseAddr("198.18.0.2"), netip.MustParseAddr("198.18.0.1"), false},
	} {
		for _, udp := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s udp=%v", c.name, udp), func(t *testing.T) {
				port := loopback.FreePort(t)
				cfg := &session.ClientConfig{UDP: udp, Length: 1470, Port: port, ListenPort: port}
				b, err := Listen(context.Background(), cfg, c.server, c.local)
				if err != nil {
					if c.name == "ipv6 loopback" {
						t.Skipf("no IPv6 here: %v", err)
					}
					t.Fatal(err)
				}
				defer b.Close()
				if moved := cfg.ListenPort != port; moved != c.moves || cfg.ListenPort == 0 || b.port != cfg.ListenPort {
					t.Errorf("listening on %d (the listener says %d) for a server at %s port %d: want it moved: %v", cfg.ListenPort, b.port, c.server, port, c.moves)
				}
			})
		}
	}
}
