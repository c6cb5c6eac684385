package session

import (
	"fmt"
	"runtime"
	"time"

	"github.com/wirebench/wirebench/internal/cpuuse"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/sharedcause"
)

// FillCPU sets r.CPU to the process's CPU use since a, and warns when this host's CPU was the
// limit of a test that ran its course (an error says why one ended early). Nothing is set when
// the platform cannot say.
func FillCPU(r *result.Result, a cpuuse.Sample) {
	u, ok := cpuuse.Between(a, cpuuse.Now())
	if !ok {
		return
	}
	total, user, sys := u.Percent()
	remote := (*result.RemoteCPU)(nil)
	if r.CPU != nil {
		remote = r.CPU.Remote
	}
	r.CPU = &result.CPU{UserSeconds: u.User.Seconds(), SystemSeconds: u.System.Seconds(),
		Percent: total, UserPercent: user, SystemPercent: sys, Remote: remote}
	if w := cpuLimitOf(r, runtime.NumCPU()).warning(); w != "" && r.Error == "" {
		r.Warn(w)
	}
}

// cpuLimit is the evidence for "this host's CPU was the limit".
type cpuLimit struct {
	Percent float64 // the process's CPU use, percent of one core
	Streams int     // streams moving data on this side: one goroutine each
	Cores   int     // cores of this host
	// Short says the test fell short of what it asked for: a paced UDP
	// sender below 98 % of its target rate, a UDP receiver that lost
	// datagrams or had its socket buffer overflow, or an unpaced TCP
	// sender (whose rate is whatever the slowest part allows).
	Short bool
	What  string // how it fell short, for the message
}

// busyPercent is the share of each usable core above which the CPU counts
// as saturated.
const busyPercent = 90

// bound reports whether the rule fires: the process used at least 90 % of
// the cores its data streams can occupy (one per stream, at most the host's
// cores) while the test fell short.
func (c cpuLimit) bound() bool {
	usable := min(max(c.Streams, 1), max(c.Cores, 1))
	return c.Short && c.Percent >= busyPercent*float64(usable)
}

// warning is the rule's message, or "".
func (c cpuLimit) warning() string {
	if !c.bound() {
		return ""
	}
	return sharedcause.CPULimitWarning(c.Percent, c.Streams, c.Cores, c.What)
}

// cpuLimitOf gathers the evidence from a result with its CPU filled in.
func cpuLimitOf(r *result.Result, cores int) cpuLimit {
	c := cpuLimit{Percent: r.CPU.Percent, Streams: max(r.Test.Streams, 1), Cores: cores}
	if r.Test.Direction == result.DirBidir {
		c.Streams *= 2
	}
	udp := r.Test.Protocol == result.UDP
	sending := r.Sender != nil && r.Sender.Seconds > 0
	switch {
	case udp && sending && r.Test.RateBPS > 0 && r.Sender.BitsPerSecond < 0.98*r.Test.RateBPS:
		c.Short = true
		c.What = fmt.Sprintf("sending %.1f%% of the rate asked for", 100*r.Sender.BitsPerSecond/r.Test.RateBPS)
	case udp && r.Receiver != nil && r.Receiver.Source == "local" && (r.Receiver.Lost > 0 || r.Receiver.HostDrops > 0):
		c.Short = true
		// GRO: the kernel counts a dropped coalesced packet once.
		drops := dropCount(r.Receiver.HostDrops, r.Receiver.JitterMethod == result.JitterPerBatch)
		c.What = fmt.Sprintf("receiving with %d datagrams lost and %s dropped by our socket buffer", r.Receiver.Lost, drops)
	case !udp && sending:
		c.Short = true
		c.What = "sending TCP as fast as it could"
	}
	return c
}

// cpuStart is an open test's CPU sample and the other tests open at some
// moment of its life: the process's CPU time counts theirs too.
type cpuStart struct {
	at cpuuse.Sample
	// The tests it overlaps are counted, not listed (a set per test was
	// quadratic: 35 MiB with 1000 tests open): open is how many were
	// open at its start, starts and joins the server's counters then
	// (every test started later overlaps it; see cpuJoined for joins).
	open          int
	starts, joins uint64
}

// noteCPU samples the process's CPU time at test id's start, and notes it
// and every open test as overlapping. A stream that joins a group is
// forgotten then (cpuJoined); anything else left open is forgotten after a
// day, so the map stays bounded.
func (s *Server) noteCPU(id int) {
	now := cpuuse.Now()
	s.cpuMu.Lock()
	defer s.cpuMu.Unlock()
	if s.cpuAt == nil {
		s.cpuAt = map[int]*cpuStart{}
	}
	if len(s.cpuAt) > 4*s.cfg.MaxTests {
		for k, v := range s.cpuAt {
			if now.At.Sub(v.at.At) > 24*time.Hour {
				delete(s.cpuAt, k)
			}
		}
	}
	s.cpuStarts++
	s.cpuAt[id] = &cpuStart{at: now, open: len(s.cpuAt), starts: s.cpuStarts, joins: s.cpuJoins}
}

// cpuJoined forgets the CPU sample of a stream that joined group test gid:
// its CPU is the group's, and it overlapped no other test by being part of
// the same one.
func (s *Server) cpuJoined(id, gid int) {
	if id == gid {
		return
	}
	s.cpuMu.Lock()
	defer s.cpuMu.Unlock()
	st := s.cpuAt[id]
	delete(s.cpuAt, id)
	if st != nil && s.cpuAt[gid] != nil {
		// The stream and its group are both open, so every test open
		// now overlapped both: each counted the stream and the group
		// as two others, and now counts them as one. Tests started
		// later never see the stream.
		s.cpuJoins++
	}
}

// fillTestCPU sets r.CPU for server test id from its start sample, with
// OtherTests saying how many other tests ran at the same time: the figure
// is the process's, so it counts their CPU too.
func (s *Server) fillTestCPU(id int, r *result.Result) {
	s.cpuMu.Lock()
	st, ok := s.cpuAt[id]
	delete(s.cpuAt, id)
	var others int
	if ok {
		others = max(st.open+int(s.cpuStarts-st.starts)-int(s.cpuJoins-st.joins), 0)
	}
	s.cpuMu.Unlock()
	if !ok {
		return
	}
	FillCPU(r, st.at)
	if r.CPU != nil {
		r.CPU.OtherTests = others
	}
}

// cpuSoFar is the process's CPU use since test id began, in percent of one
// core (total, user, system), for iperf3's cpu_util; zeros when unknown.
func (s *Server) cpuSoFar(id int) (total, user, system float64) {
	s.cpuMu.Lock()
	st := s.cpuAt[id]
	s.cpuMu.Unlock()
	if st == nil {
		return 0, 0, 0
	}
	if u, ok := cpuuse.Between(st.at, cpuuse.Now()); ok {
		return u.Percent()
	}
	return 0, 0, 0
}
