package iperf2

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/wirebench/wirebench/internal/session/iperf2/udpstream"
)

// endedKeep is how long the server remembers a UDP test after it forgot
// it (finishedKeep after its end): a copy of one of its datagrams that the
// network delivers that late opens no new test.
const endedKeep = time.Minute

// endedTest is a forgotten UDP test as remembered (udpstream.Ended), until
// when (monotonic).
type endedTest struct {
	udpstream.Ended
	until time.Time
}

// forgetUDP forgets src's finished test t, remembering what tells a late
// copy of its datagrams apart for endedKeep. At most MaxTests are
// remembered: the expired go first, then any. s.udpMu is held.
func (s *server) forgetUDP(src netip.AddrPort, t *udpTest, now time.Time) {
	delete(s.udpTests, src)
	s.udpFinished--
	if t.reverse || t.refused {
		return // what came from the source were hellos, or nothing counted
	}
	if len(s.udpEnded) >= s.cfg.MaxTests {
		for a, e := range s.udpEnded {
			if now.After(e.until) {
				delete(s.udpEnded, a)
			}
		}
	}
	for a := range s.udpEnded {
		if len(s.udpEnded) < s.cfg.MaxTests {
			break
		}
		delete(s.udpEnded, a)
	}
	s.udpEnded[src] = endedTest{Ended: t.rx.Ended(), until: now.Add(endedKeep)}
}

// repeatsEnded reports whether datagram b, from src, which has no test
// here, is a late copy of a datagram of src's forgotten test (logged,
// counted per cause by the server's log); start are the datagrams to feed
// a new test before b, when b turned out to start one. s.udpMu is held.
func (s *server) repeatsEnded(src netip.AddrPort, b []byte, at time.Time) (start []udpstream.Held, isCopy bool) {
	e, ok := s.udpEnded[src]
	if !ok {
		return nil, false
	}
	if s.arrived.After(e.until) || !e.Repeats(b) {
		delete(s.udpEnded, src)
		return nil, false
	}
	start, stream := e.Hold(b, at, s.arrived)
	if stream {
		delete(s.udpEnded, src)
		return start, false
	}
	s.udpEnded[src] = e
	s.Log("repeat", fmt.Sprintf("udp: took a datagram from %s for a late copy of one of its ended test (an id it had reached, sent before its end): no new test", src))
	s.trace(src, "a late copy of a datagram of the ended test: held")
	return nil, true
}

// endedHandles handles datagram b from src, which has no test here, when
// src's forgotten test accounts for it: a late copy (ignored), or the
// datagram that showed the copies before it were a new test's start (they
// are fed to it first, then b). s.udpMu is held.
func (s *server) endedHandles(ctx context.Context, tests map[netip.AddrPort]*udpTest, src netip.AddrPort, b []byte, at time.Time) bool {
	start, isCopy := s.repeatsEnded(src, b, at)
	if isCopy || len(start) == 0 {
		return isCopy
	}
	s.feedHeld(ctx, tests, src, start)
	s.iperf2Datagram(ctx, tests, src, tests[src], b, at)
	return true
}

// feedHeld feeds datagrams held for a test from src to src's test (the
// first opens it), each at its own arrival; s.arrived is then the datagram
// in hand's again. s.udpMu is held.
func (s *server) feedHeld(ctx context.Context, tests map[netip.AddrPort]*udpTest, src netip.AddrPort, held []udpstream.Held) {
	defer func(arrived time.Time) { s.arrived = arrived }(s.arrived)
	for _, h := range held {
		s.arrived = h.Arrived
		s.iperf2Datagram(ctx, tests, src, tests[src], h.B, h.At)
	}
}
