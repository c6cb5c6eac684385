package echo

import (
	"bytes"
	"context"
	"net"
	"net/netip"
	"testing"
	"time"
)

// fakeConn is a net.Conn that reads from a fixed input and records what is
// written; deadlines are ignored and reading past the input gives EOF.
type fakeConn struct {
	in  *bytes.Reader
	out bytes.Buffer
}

func (c *fakeConn) Read(b []byte) (int, error)       { return c.in.Read(b) }
func (c *fakeConn) Write(b []byte) (int, error)      { return c.out.Write(b) }
func (c *fakeConn) Close() error                     { return nil }
func (c *fakeConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *fakeConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *fakeConn) SetDeadline(time.Time) error      { return nil }
func (c *fakeConn) SetReadDeadline(time.Time) error  { return nil }
func (c *fakeConn) SetWriteDeadline(time.Time) error { return nil }

// serveBytes runs ServeTCP over b as a connection's input (the first four
// bytes read beforehand, as session.Server does) and returns what it wrote.
func serveBytes(t *testing.T, s *Server, b []byte) []byte {
	t.Helper()
	c := &fakeConn{in: bytes.NewReader(b)}
	first := make([]byte, min(4, len(b)))
	_, _ = c.in.Read(first)
	s.ServeTCP(context.Background(), c, first)
	return c.out.Bytes()
}

func TestServeTCP(t *testing.T) {
	req := func(id uint64, n int) []byte {
		return Append(nil, Message{Kind: KindRequest, Len: n, ID: id, Sent: int64(id) * 10})
	}
	rep := func(id uint64, n int) []byte {
		return Append(nil, Message{Kind: KindReply, Len: n, ID: id, Sent: int64(id) * 10})
	}
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	tests := []struct {
		name     string
		in       []byte
		want     []byte
		requests int64
		bad      int64
	}{
		{"one request then EOF", req(1, 64), rep(1, 64), 1, 0},
		{"three sizes", cat(req(1, 24), req(2, 5000), req(3, MaxLen)), cat(rep(1, 24), rep(2, 5000), rep(3, MaxLen)), 3, 0},
		{"bye ends the stream", cat(req(1, 30), Append(nil, Message{Kind: KindBye}), req(2, 30)), rep(1, 30), 1, 0},
		{"replies are not echoed", cat(rep(1, 30), req(2, 30)), rep(2, 30), 1, 0},
		{"garbage after a request", cat(req(1, 30), []byte("!WBE\x09garbage-garbage-garbage")), rep(1, 30), 1, 1},
		{"cut mid-message", cat(req(1, 30), req(2, 100)[:50]), rep(1, 30), 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewServer(ServerConfig{})
			got := serveBytes(t, s, tt.in)
			if !bytes.Equal(got, tt.want) {
				t.Errorf("echoed %d bytes, want %d", len(got), len(tt.want))
			}
			if s.Requests() != tt.requests || s.Malformed() != tt.bad {
				t.Errorf("requests %d malformed %d, want %d and %d", s.Requests(), s.Malformed(), tt.requests, tt.bad)
			}
		})
	}
}

// fakeClock is a settable clock.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestDatagram(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	var logs []string
	s := NewServer(ServerConfig{IdleTimeout: 5 * time.Second, Now: clk.now, OnLog: func(m string) { logs = append(logs, m) }})
	p := s.UDPProtocol()
	a := netip.MustParseAddrPort("127.0.0.1:4000")
	b := netip.MustParseAddrPort("127.0.0.1:4001")

	req := Append(nil, Message{Kind: KindRequest, Len: 100, ID: 7, Sent: 99})
	if !p.Match(req) || p.Match(req[:99]) || p.Match(Append(nil, Message{Kind: KindReply, Len: 100})) {
		t.Fatal("Match: want a whole request claimed, a cut one and a reply not")
	}
	reply := p.Datagram(a, req, clk.t)
	want := Append(nil, Message{Kind: KindReply, Len: 100, ID: 7, Sent: 99})
	if !bytes.Equal(reply, want) {
		t.Fatalf("reply % x\nwant  % x", reply, want)
	}
	if req[5] != byte(KindRequest) {
		t.Fatal("Datagram changed the request buffer")
	}
	if p.Datagram(a, []byte("!WBE junk"), clk.t) != nil || s.Malformed() != 1 || len(logs) != 1 {
		t.Fatalf("junk: want no reply, one malformed, one log; got %d, %v", s.Malformed(), logs)
	}
	_ = p.Datagram(b, req, clk.t)
	if p.Done(a) || p.Done(b) || s.Sources() != 2 {
		t.Fatal("fresh sources are done")
	}
	// b says bye: done at once. a goes silent: done after the idle timeout.
	_ = p.Datagram(b, Append(nil, Message{Kind: KindBye}), clk.t)
	if !p.Done(b) {
		t.Error("a source that said bye is not done")
	}
	clk.t = clk.t.Add(5 * time.Second)
	if p.Done(a) {
		t.Error("done at exactly the idle timeout")
	}
	clk.t = clk.t.Add(time.Millisecond)
	if !p.Done(a) || s.Sources() != 0 {
		t.Errorf("silent source not forgotten: %d sources left", s.Sources())
	}
	if s.Requests() != 2 {
		t.Errorf("requests %d, want 2", s.Requests())
	}
}

// Each client's session is reported once as it ends, with its requests
// and how it ended: TCP by bye, EOF or a malformed message, a bare bye as a
// connect probe, UDP by bye or silence.
func TestSessionsReported(t *testing.T) {
	var got []Session
	now := time.Unix(1000, 0)
	s := NewServer(ServerConfig{IdleTimeout: time.Second, Now: func() time.Time { return now }, OnSession: func(ss Session) { got = append(got, ss) }})
	req := func(id uint64, n int) []byte { return Append(nil, Message{Kind: KindRequest, Len: n, ID: id}) }
	bye := Append(nil, Message{Kind: KindBye})
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	serveBytes(t, s, cat(req(1, 30), req(2, 40), bye))
	serveBytes(t, s, cat(req(1, 64)))
	serveBytes(t, s, bye)
	serveBytes(t, s, cat(req(1, 30), []byte("!WBE\x09garbage-garbage-garbage")))
	a, b := netip.MustParseAddrPort("127.0.0.1:1000"), netip.MustParseAddrPort("127.0.0.1:1001")
	for i := range 3 {
		s.Datagram(a, req(uint64(i), 100), now)
	}
	s.Datagram(a, bye, now)
	s.Datagram(b, req(9, 50), now)
	if !s.Done(a) || s.Done(b) {
		t.Fatal("a said bye and must be done; b is only quiet for 0 s")
	}
	now = now.Add(2 * time.Second)
	if !s.Done(b) {
		t.Fatal("b was silent past the idle timeout")
	}
	want := []Session{
		{Kind: SessionTCP, Requests: 2, Bytes: 70, End: EndBye},
		{Kind: SessionTCP, Requests: 1, Bytes: 64, End: EndEOF},
		{Kind: SessionConnect, End: EndBye},
		{Kind: SessionTCP, Requests: 1, Bytes: 30, End: EndError},
		{Kind: SessionUDP, Peer: a, Requests: 3, Bytes: 300, End: EndBye},
		{Kind: SessionUDP, Peer: b, Requests: 1, Bytes: 50, End: EndIdle},
	}
	if len(got) != len(want) {
		t.Fatalf("%d sessions reported, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Kind != w.Kind || g.Requests != w.Requests || g.Bytes != w.Bytes || g.End != w.End || (w.Peer.IsValid() && g.Peer != w.Peer) {
			t.Errorf("session %d = %+v, want %+v", i, g, w)
		}
	}
}
