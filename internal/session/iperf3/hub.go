package iperf3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirebench/wirebench/internal/engine"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/sockopt"
	"github.com/wirebench/wirebench/internal/stats"
	"github.com/wirebench/wirebench/internal/udpio"
	i3wire "github.com/wirebench/wirebench/internal/wire/iperf3"
)

// i3Hub holds the iperf3 tests of one server, by cookie.
type i3Hub struct {
	s   *session.Server
	cfg Config

	mu    sync.Mutex
	tests map[i3wire.Cookie]*i3Test
	order []*i3Test // registration order, for matching UDP streams
}

// accept serves iperf3's own TCP port.
func (h *i3Hub) accept(ctx context.Context, ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			h.s.Log("i3-accept", fmt.Sprintf("iperf3: accepting a connection: %v", err))
			time.Sleep(10 * time.Millisecond)
			continue
		}
		forget := h.s.NoteAccept(c)
		h.s.Go("iperf3: "+c.RemoteAddr().String(), func() {
			defer forget()
			defer c.Close()
			h.serveConn(ctx, c, nil)
		})
	}
}

// serveConn reads the cookie of a new connection (first holds bytes
// already read) and treats it as a data stream of a test waiting for
// streams, or as a new control connection.
func (h *i3Hub) serveConn(ctx context.Context, c net.Conn, first []byte) {
	peer := session.PeerOf(c)
	buf := make([]byte, i3wire.CookieSize)
	n := copy(buf, first)
	_ = c.SetReadDeadline(time.Now().Add(h.s.Config().HeaderTimeout))
	if _, err := io.ReadFull(c, buf[n:]); err != nil {
		h.s.Log("i3-cookie", fmt.Sprintf("iperf3: %s: reading the cookie: %v", peer, err))
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	ck, err := i3wire.ParseCookie(buf)
	if err != nil {
		h.s.Log("i3-cookie", fmt.Sprintf("iperf3: %s: %v", peer, err))
		return
	}
	h.mu.Lock()
	t := h.tests[ck]
	h.mu.Unlock()
	if t != nil {
		t.attachTCP(ctx, c)
		return
	}
	h.control(ctx, c, ck, peer)
}

// register adds a new test unless MaxTests are running.
func (h *i3Hub) register(t *i3Test) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.tests) >= h.s.Config().MaxTests || h.tests[t.cookie] != nil {
		return false
	}
	h.tests[t.cookie] = t
	h.order = append(h.order, t)
	return true
}

func (h *i3Hub) unregister(t *i3Test) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.tests, t.cookie)
	h.order = slices.DeleteFunc(h.order, func(o *i3Test) bool { return o == t })
}

// pendingUDP returns the oldest test from addr that waits for UDP streams.
// Tests from one address that create streams at the same moment cannot be
// told apart (the connect message carries no cookie); the oldest wins.
// startAccepting opens t to its data streams (parameters p). iperf3's UDP
// connect message carries no cookie, so its streams are told apart only by
// source address: a UDP test waits (up to i3StepTimeout) while another UDP
// test from the same address is taking streams, so that two tests from one
// host never share them out between each other.
func (h *i3Hub) startAccepting(ctx context.Context, t *i3Test, p *i3wire.Params) error {
	udp := p.Protocol == i3wire.ProtoUDP
	deadline := time.Now().Add(i3StepTimeout)
	for {
		h.mu.Lock()
		if !udp || h.pendingUDPLocked(t.peer.Addr()) == nil {
			t.p, t.udp, t.need, t.accepting = p, udp, p.TotalStreams(), true
			h.mu.Unlock()
			return nil
		}
		h.mu.Unlock()
		if time.Now().After(deadline) {
			return fmt.Errorf("another UDP test from %v took its streams for over %v", t.peer.Addr(), i3StepTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (h *i3Hub) pendingUDPLocked(addr netip.Addr) *i3Test {
	for _, t := range h.order {
		if t.accepting && t.udp && t.peer.Addr() == addr && len(t.streams) < t.need {
			return t
		}
	}
	return nil
}

// i3Test is one iperf3 test on the server.
type i3Test struct {
	hub    *i3Hub
	cookie i3wire.Cookie
	peer   netip.AddrPort
	p      *i3wire.Params
	udp    bool

	// Guarded by hub.mu while streams are being created.
	accepting bool
	need      int
	streams   []*i3SrvStream
	ready     chan struct{} // closed when every stream arrived
	done      chan struct{} // closed when the test is over
	ended     atomic.Bool
	free      func() // gives back its admission (source slot, --max-tests place), once

	// sockWarn holds what went wrong applying the client's socket
	// options (guarded by hub.mu); sockBufs the buffer sizes the kernel
	// reported for the first TCP stream.
	sockWarn []string
	sockBufs sockopt.Buffers
}

// i3SrvStream is one data stream of a server test.
type i3SrvStream struct {
	t      *i3Test
	id     int64
	send   bool // the server sends on it
	tcp    net.Conn
	uconn  udpio.Conn
	dst    netip.AddrPort
	urx    *i3UDPRecv
	c      stats.Counters
	tcpRes engine.TCPResult
	udpRes engine.UDPSendResult
	retr   i3Retr // TCP retransmissions, when we send
	seq    uint64 // TCP: the server's accept order
	err    error
	totals i3UDPTotals
}

func (st *i3SrvStream) counters() *stats.Counters {
	if st.urx != nil {
		return &st.urx.rx.C
	}
	return &st.c
}

// addStreamLocked adds a stream in the order the client connected them
// (TCP: accept order, st.seq; UDP: arrival order, as the datagrams are
// read one by one), and numbers every stream as the client does: with
// --bidir the first P streams are the client's sending ones. The cookies
// of TCP streams are read concurrently, so a later stream may be added
// first; ids and roles are settled before the test starts.
func (t *i3Test) addStreamLocked(st *i3SrvStream) {
	k := len(t.streams)
	for k > 0 && t.streams[k-1].seq > st.seq {
		k--
	}
	t.streams = slices.Insert(t.streams, k, st)
	p := t.p.StreamsPerDirection()
	for i, s := range t.streams {
		s.t, s.id = t, i3StreamID(i)
		s.send = t.p.Reverse || (t.p.Bidirectional && i >= p)
	}
	if t.udp && !st.send {
		st.urx = newI3UDPRecv(t.p.UDPCounters64Bit)
	}
	if len(t.streams) == t.need {
		t.accepting = false
		close(t.ready)
	}
}

// attachTCP makes c a data stream of t, or denies it, and holds it until
// the test is over.
func (t *i3Test) attachTCP(ctx context.Context, c net.Conn) {
	h := t.hub
	h.mu.Lock()
	ok := t.accepting && !t.udp
	h.mu.Unlock()
	// The client's socket options (TOS, window) go on before the stream
	// joins the test: the last stream to join starts the data, and with -R
	// a packet sent before them would leave with the default TOS.
	if ok {
		t.applySocket(c)
	}
	h.mu.Lock()
	ok = ok && t.accepting
	if ok {
		t.addStreamLocked(&i3SrvStream{tcp: c, seq: h.s.AcceptOrder(c)})
	}
	h.mu.Unlock()
	if !ok {
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = c.Write([]byte{i3wire.AccessDenied.Byte()})
		return
	}
	select {
	case <-t.done:
	case <-ctx.Done():
	}
}
