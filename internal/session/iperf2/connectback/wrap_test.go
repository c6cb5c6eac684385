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
		hdr    bool
	}
	streams := []stream{{i2wire.LayoutModern, 18, false}, {i2wire.LayoutLegacy, 18, false}, {i2wire.LayoutModern, 1470, true}}
	for _, base := range []int64{1<<31 - n/2, 1<<31 - n - 4, 3 << 29, 5<<31 - n/2} {
		for _, s := range streams {
			if base > 1<<32 && !s.hdr {
				continue // 32-bit ids from past 2^32: a receiver cannot know the wraps before
			}
			t.Run(fmt.Sprintf("%#x/%v/%dB", base, s.layout, s.length), func(t *testing.T) {
				udpstream.SetTestIDBase(base)
				t.Cleanup(func() { udpstream.SetTestIDBase(0) })
				runConnectBack(t, s.layout, s.length, s.hdr, n)
			})
		}
	}
}

// runConnectBack plays a server's connect-back of n data datagrams and
// its FIN towards a Listener, and checks what the Listener counted.
func runConnectBack(t *testing.T, l i2wire.Layout, length int, hdr bool, n int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lo := netip.MustParseAddr("127.0.0.1")
	cfg := &session.ClientConfig{UDP: true, Length: length, ListenPort: loopback.FreePort(t)}
	b, err := Listen(ctx, cfg, lo)
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
	if hdr {
		spec.Header = SenderHeader(i2wire.NewClientHeader(true, 1, 0), length, time.Second, 0, 1e6)
	}
	dg := spec.Template(func(p []byte) { clear(p) })
	first := udpstream.FirstID(l)
	for id := first; id < first+n; id++ {
		put(dg, l, id, hdr)
		if _, err := c.Write(dg); err != nil {
			t.Fatal(err)
		}
		if id%64 == 0 {
			time.Sleep(200 * time.Microsecond) // a socket buffer's worth at a time: loopback drops none
		}
	}
	// The FIN, re-sent until the report comes back, as a server does.
	finID := -(first + n)
	reply := make([]byte, 2048)
	got := false
	for k := 0; k < 50 && !got; k++ {
		put(dg, l, finID-int64(k), hdr)
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
	if r.Packets != n+1 || r.Lost != 0 || r.OutOfOrder != 0 || r.Total != first+n {
		t.Errorf("counted %d datagrams, %d lost, %d out of order, highest id %d; sent %d and the FIN, ids %d..%d",
			r.Packets, r.Lost, r.OutOfOrder, r.Total, n, first, first+n)
	}
	for _, w := range b.Warnings() {
		if strings.Contains(w, "did not finish") || strings.Contains(w, "after the FIN") || strings.Contains(w, "never sent a FIN") {
			t.Errorf("warning: %s", w)
		}
	}
}

// put writes id into datagram dg as a sender of layout l writes it: the
// upper word too when its header says so (hdr), else as a 32-bit sender,
// whose upper word (modern layout) is filler.
func put(dg []byte, l i2wire.Layout, id int64, hdr bool) {
	if hdr {
		i2wire.PutDatagram(dg, l, id, time.Now())
		return
	}
	i2wire.PutDatagram(dg, l, int64(int32(uint32(id))), time.Now())
	if l == i2wire.LayoutModern {
		copy(dg[12:16], "zzzz")
	}
}
