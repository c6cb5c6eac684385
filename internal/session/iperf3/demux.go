package iperf3

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/udpio"
	i3wire "github.com/wirebench/wirebench/internal/wire/iperf3"
)

// i3Demux routes the datagrams of one UDP socket to iperf3 streams by
// source address.
type i3Demux struct {
	hub  *i3Hub
	conn udpio.Conn // writes must be safe with a concurrent reader and senders

	mu      sync.Mutex
	streams map[netip.AddrPort]*i3SrvStream

	// fed are the streams fed in the read in hand, owed a publish at its
	// end (flush); only the one reader goroutine touches it.
	fed []*i3UDPRecv
}

// flush publishes the counts of the streams fed in one read.
func (d *i3Demux) flush() {
	for _, u := range d.fed {
		u.publish()
	}
	clear(d.fed)
	d.fed = d.fed[:0]
}

// match reports whether a new source's first datagram is an iperf3 UDP
// connect message for a test waiting for streams from its address.
func (d *i3Demux) match(b []byte) bool {
	return len(b) == 4 && i3wire.IsUDPConnectMsg(b)
}

// datagram handles one datagram. A connect message that opens a stream is
// answered here, on d.conn, before the stream is added (so never after the
// test's data); the return value is always nil.
func (d *i3Demux) datagram(src netip.AddrPort, b []byte, at time.Time) []byte {
	d.mu.Lock()
	st := d.streams[src]
	d.mu.Unlock()
	if st != nil && !st.t.ended.Load() {
		if st.urx != nil && st.urx.feed(b, at) {
			d.fed = append(d.fed, st.urx)
		}
		return nil
	}
	if len(b) != 4 || !i3wire.IsUDPConnectMsg(b) {
		return nil
	}
	h := d.hub
	h.mu.Lock()
	t := h.pendingUDPLocked(src.Addr())
	if t != nil {
		// Reply before the stream counts: adding the last stream starts
		// the test, and a 3.12 client that reads one of our data
		// datagrams where it waits for this reply gives up ("unable to
		// read from stream socket"; seen in 3 of 30 UDP --bidir runs).
		if _, err := d.conn.WriteBatch([]udpio.Message{{Buf: []byte(i3wire.UDPConnectReply), Addr: src}}); err != nil {
			h.s.Log("i3-reply", fmt.Sprintf("iperf3: udp connect reply to %s: %v", src, err))
		}
		st = &i3SrvStream{uconn: d.conn, dst: src}
		t.addStreamLocked(st)
		if !st.send {
			st.uconn = nil
		}
	}
	h.mu.Unlock()
	if t == nil {
		h.s.Log("i3-udp", fmt.Sprintf("iperf3: ignored a udp connect from %s: no test from that address waits for streams", src))
		return nil
	}
	d.mu.Lock()
	d.streams[src] = st
	d.mu.Unlock()
	return nil
}

// done reports whether src's stream has ended, and forgets it then.
func (d *i3Demux) done(src netip.AddrPort) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	st := d.streams[src]
	if st == nil || st.t.ended.Load() {
		delete(d.streams, src)
		return true
	}
	return false
}

// serve reads iperf3's own UDP socket.
func (d *i3Demux) serve(ctx context.Context) {
	sweep := func(time.Time) bool {
		d.mu.Lock()
		for src, st := range d.streams {
			if st.t.ended.Load() {
				delete(d.streams, src)
			}
		}
		d.mu.Unlock()
		return true
	}
	err := engine.ReceiveUDP(ctx, d.conn, engine.UDPReceiveConfig{Batch: 64, Tick: session.SweepEvery, OnTick: sweep, OnBatch: d.flush}, func(m *udpio.Message) bool {
		defer func() {
			// The name is built only on a panic: not per datagram.
			if v := recover(); v != nil {
				d.hub.s.LogPanic("iperf3: udp from "+m.Addr.String(), v)
			}
		}()
		if reply := d.datagram(m.Addr, m.Buf[:m.N], m.Time); reply != nil {
			if _, err := d.conn.WriteBatch([]udpio.Message{{Buf: reply, Addr: m.Addr}}); err != nil {
				d.hub.s.Log("i3-reply", fmt.Sprintf("iperf3: udp connect reply to %s: %v", m.Addr, err))
			}
		}
		return true
	})
	if err != nil && ctx.Err() == nil {
		d.hub.s.Log("i3-udp-read", fmt.Sprintf("iperf3: reading the udp socket: %v", err))
	}
}
