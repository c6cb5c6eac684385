package engine

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/stats"
	"github.com/wirebench/wirebench/internal/tcpinfo"
)

// tcpPair returns a connected loopback pair: the dialled end and the
// accepted end.
func tcpPair(t *testing.T) (dialled, accepted net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		got <- c
	}()
	d, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	a := <-got
	if a == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { d.Close(); a.Close() })
	return d, a
}

// TestDrainTCPDelivered: a sender on either end of the connection gets
// every byte it wrote back as acknowledged once the reader read them.
func TestDrainTCPDelivered(t *testing.T) {
	for _, accepted := range []bool{false, true} {
		d, a := tcpPair(t)
		snd, rcv := d, a
		if accepted {
			snd, rcv = a, d
		}
		go func() { _, _ = io.Copy(io.Discard, rcv) }()
		res, err := SendTCP(context.Background(), snd, TCPSendConfig{Buffer: make([]byte, 64<<10), Bytes: 5<<20 + 7}, new(stats.Counters))
		if err != nil {
			t.Fatal(err)
		}
		_ = snd.(*net.TCPConn).CloseWrite()
		del := DrainTCP(context.Background(), snd, res.Bytes, DrainOptions{Accepted: accepted})
		if !del.Known {
			t.Skip("no acknowledged-byte count on this kernel")
		}
		if !del.Drained() || del.Acked != res.Bytes || del.Warning() != "" {
			t.Errorf("accepted=%v: acked %d of %d (waited %v, warning %q)", accepted, del.Acked, res.Bytes, del.Waited, del.Warning())
		}
		if del.End.Before(res.End) || del.Info.SndMSS == 0 {
			t.Errorf("accepted=%v: end %v before the last write %v, or no MSS (%d)", accepted, del.End, res.End, del.Info.SndMSS)
		}
	}
}

// TestDrainTCPStalled: when the peer stops reading, the wait ends on the
// stall bound, and the figure and warning say how much was acknowledged.
func TestDrainTCPStalled(t *testing.T) {
	d, _ := tcpPair(t) // nobody reads the accepted end
	_ = d.(*net.TCPConn).SetWriteBuffer(1 << 20)
	res, _ := SendTCP(context.Background(), d, TCPSendConfig{Buffer: make([]byte, 64<<10), Duration: 300 * time.Millisecond}, new(stats.Counters))
	start := time.Now()
	del := DrainTCP(context.Background(), d, res.Bytes, DrainOptions{})
	if !del.Known {
		t.Skip("no acknowledged-byte count on this kernel")
	}
	if took := time.Since(start); took > DrainLimit+time.Second {
		t.Errorf("the wait took %v, bound %v", took, DrainLimit)
	}
	if del.Drained() || del.Acked >= res.Bytes || !strings.Contains(del.Warning(), "acknowledged") {
		t.Errorf("acked %d of %d written, warning %q", del.Acked, res.Bytes, del.Warning())
	}
}

// TestDrainNotTCP: a connection without TCP_INFO is reported as unknown,
// with the warning that the figure counts bytes written.
func TestDrainNotTCP(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	del := DrainTCP(context.Background(), a, 10, DrainOptions{})
	if del.Known || !strings.Contains(del.Warning(), "bytes written") {
		t.Errorf("pipe: %+v, warning %q", del, del.Warning())
	}
}

// TestIntervalsTCPInfo: a flow with TCP connections carries their TCP_INFO
// figures in each interval; one without has none.
func TestIntervalsTCPInfo(t *testing.T) {
	d, a := tcpPair(t)
	go func() { _, _ = io.Copy(io.Discard, a) }()
	var c stats.Counters
	start := time.Now()
	iv := NewIntervals(start, 0, nil, &Flow{Counters: []*stats.Counters{&c}, TCP: []net.Conn{d}}, &Flow{Name: "x", Counters: []*stats.Counters{&c}})
	if _, err := d.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	ivs := iv.Stop(time.Now())
	if len(ivs) != 2 {
		t.Fatalf("%d intervals", len(ivs))
	}
	if f := ivs[0].TCP; f == nil || f.MSS <= 0 || f.CwndBytes <= 0 || f.RTTMicros <= 0 || f.Retransmits < 0 {
		t.Errorf("TCP flow's interval figures %+v", f)
	}
	if ivs[1].TCP != nil {
		t.Errorf("flow without connections has TCP figures %+v", ivs[1].TCP)
	}
}

// TestDrainTCPPreamble: bytes written before the counted ones (iperf3's
// cookie) are not delivered payload. With a peer that stopped reading, the
// acknowledged payload is exactly what the peer's kernel received less the
// preamble, never the preamble more.
func TestDrainTCPPreamble(t *testing.T) {
	const preamble = 37
	d, a := tcpPair(t) // nobody reads the accepted end
	_ = d.(*net.TCPConn).SetWriteBuffer(1 << 20)
	if _, err := d.Write(make([]byte, preamble)); err != nil {
		t.Fatal(err)
	}
	res, _ := SendTCP(context.Background(), d, TCPSendConfig{Buffer: make([]byte, 64<<10), Duration: 300 * time.Millisecond}, new(stats.Counters))
	del := DrainTCP(context.Background(), d, res.Bytes, DrainOptions{Preamble: preamble})
	if !del.Known {
		t.Skip("no acknowledged-byte count on this kernel")
	}
	rc, err := a.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	info, err := tcpinfo.ReadRaw(rc)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := info.PayloadReceived()
	if !ok {
		t.Skip("no received-byte count on this kernel")
	}
	if del.Drained() || del.Acked != int64(got)-preamble {
		t.Errorf("acked payload %d of %d written; the peer's kernel received %d bytes, %d of them preamble", del.Acked, res.Bytes, got, preamble)
	}
}
