package model

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/wirebench/wirebench/internal/linerate"
)

// Fate is what the model did with one datagram. Every datagram gets exactly
// one, so the counts of a run add up: in = forwarded + dropped, where
// forwarded includes the reordered, duplicated and corrupted ones.
type Fate int

// The fates.
const (
	Forwarded  Fate = iota // passed unchanged
	Dropped                // never delivered; see Reason
	Duplicated             // delivered twice, back to back
	Reordered              // held back behind the next 1–3 datagrams
	Corrupted              // delivered with one bit of its last byte flipped
)

// Reason says which part of the model dropped a datagram.
type Reason int

// The reasons.
const (
	NoDrop       Reason = iota
	ByLoss              // loss=
	ByBurst             // burst= (Gilbert–Elliott bad state)
	ByMax               // max=
	ByRateQueue         // rate= queue full
	ByService           // service= queue full
	ByTickQueue         // tick= queue full
	reasonsCount        // number of reasons
)

// ReasonNames are the JSON names of the reasons, indexed by Reason.
var ReasonNames = [...]string{"", "loss", "burst", "max", "rate_queue", "service_queue", "tick_queue"}

// Release tells the caller to send the datagram with handle H at time At
// (an offset from the start of the run): Copies times (1, or 2 when
// duplicated), with one bit flipped when Corrupt. Releases come out with At
// never decreasing, so the caller can keep them in one FIFO.
type Release struct {
	H       uint64
	At      time.Duration
	Copies  int
	Corrupt bool
}

// MaxHold is how long a reordered datagram waits for the datagrams it is to
// follow before it is released anyway.
const MaxHold = 50 * time.Millisecond

type held struct {
	rel    Release
	remain int           // passing datagrams still to let by
	until  time.Duration // released at the latest then
}

// Model applies a Spec to a stream of datagrams. It is owned by one
// goroutine (or guarded by the caller).
type Model struct {
	spec    Spec
	rng     *rand.Rand
	bad     bool // Gilbert–Elliott state
	stages  []stage
	lastOut time.Duration
	hold    []held
	wire    map[int]time.Duration // rate stage: line time per payload size
}

// New returns a model for spec, with its random fates drawn from seed.
func New(spec Spec, seed uint64) *Model {
	m := &Model{spec: spec, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	q := queueLimit{bytes: spec.QueueBytes, wait: spec.QueueTime}
	if q.bytes == 0 && q.wait == 0 {
		q.wait = DefaultQueueTime
	}
	if spec.Service > 0 {
		m.stages = append(m.stages, &serviceStage{queue: queue{limit: q}, slot: time.Duration(float64(time.Second) / spec.Service),
			buffer: spec.Buffer, perBuffer: spec.PerBuffer})
	}
	if spec.Rate > 0 {
		m.wire = map[int]time.Duration{}
		m.stages = append(m.stages, &rateStage{queue: queue{limit: q}, wireTime: m.wireTime})
	}
	if spec.TickPeriod > 0 {
		m.stages = append(m.stages, &tickStage{queue: queue{limit: q}, period: spec.TickPeriod, budget: spec.TickBudget})
	}
	return m
}

// Arrive runs one datagram of size payload bytes that arrived at now
// through the model and appends to dst what is to be sent: its own release
// (unless dropped or held back) and those of held datagrams that now follow
// it. data says whether it is a data datagram (an iperf2 id above 0); a
// datagram that is not releases everything held back before it, so a test's
// last data never arrives after its FIN.
func (m *Model) Arrive(dst []Release, now time.Duration, h uint64, size int, data bool) ([]Release, Fate, Reason) {
	if m.spec.Max > 0 && size > m.spec.Max {
		return dst, Dropped, ByMax
	}
	if r := m.lossDraw(); r != NoDrop {
		return dst, Dropped, r
	}
	fate := m.fateDraw()
	at := now
	for _, s := range m.stages {
		var ok bool
		if at, ok = s.admit(at, size); !ok {
			return dst, Dropped, s.reason()
		}
	}
	if m.spec.Delay > 0 {
		d := m.spec.Delay
		if m.spec.Jitter > 0 {
			d += time.Duration((m.rng.Float64()*2 - 1) * float64(m.spec.Jitter))
		}
		at += d
	}
	at = max(at, m.lastOut)
	rel := Release{H: h, At: at, Copies: 1}
	switch fate {
	case Duplicated:
		rel.Copies = 2
	case Corrupted:
		rel.Corrupt = true
	case Reordered:
		if data {
			m.hold = append(m.hold, held{rel: rel, remain: 1 + m.rng.IntN(3), until: at + MaxHold})
			return dst, Reordered, NoDrop
		}
		fate = Forwarded
	}
	if !data {
		dst = m.releaseHeld(dst, at, true)
	}
	m.lastOut = at
	dst = append(dst, rel)
	if data {
		dst = m.releaseHeld(dst, at, false)
	}
	return dst, fate, NoDrop
}

// releaseHeld counts one passing datagram against every held one (or, with
// all, releases them all) and appends those whose turn has come at time at.
func (m *Model) releaseHeld(dst []Release, at time.Duration, all bool) []Release {
	kept := m.hold[:0]
	for _, h := range m.hold {
		h.remain--
		if all || h.remain <= 0 {
			h.rel.At = at
			dst = append(dst, h.rel)
			continue
		}
		kept = append(kept, h)
	}
	m.hold = kept
	return dst
}

// Expire appends the held datagrams whose MaxHold ran out by now.
func (m *Model) Expire(dst []Release, now time.Duration) []Release {
	kept := m.hold[:0]
	for _, h := range m.hold {
		if h.until <= now {
			h.rel.At = max(now, m.lastOut)
			m.lastOut = h.rel.At
			dst = append(dst, h.rel)
			continue
		}
		kept = append(kept, h)
	}
	m.hold = kept
	return dst
}

// NextExpiry returns when the first held datagram expires; ok is false when
// nothing is held.
func (m *Model) NextExpiry() (at time.Duration, ok bool) {
	for i, h := range m.hold {
		if i == 0 || h.until < at {
			at = h.until
		}
	}
	return at, len(m.hold) > 0
}

// Flush appends every held datagram, released at now (the run is ending).
func (m *Model) Flush(dst []Release, now time.Duration) []Release {
	return m.releaseHeld(dst, max(now, m.lastOut), true)
}

// lossDraw decides random loss: the Gilbert–Elliott state steps once per
// datagram, then the uniform loss applies.
func (m *Model) lossDraw() Reason {
	if b := m.spec.Burst; b != nil {
		if m.bad {
			if m.rng.Float64() < 1/b.Bad {
				m.bad = false
			}
		} else if m.rng.Float64() < 1/b.Good {
			m.bad = true
		}
		if m.bad && m.rng.Float64() < b.Loss {
			return ByBurst
		}
	}
	if m.spec.Loss > 0 && m.rng.Float64() < m.spec.Loss {
		return ByLoss
	}
	return NoDrop
}

// fateDraw picks at most one of reorder, dup and corrupt with one draw.
func (m *Model) fateDraw() Fate {
	s := m.spec
	if s.Reorder+s.Dup+s.Corrupt == 0 {
		return Forwarded
	}
	u := m.rng.Float64()
	switch {
	case u < s.Reorder:
		return Reordered
	case u < s.Reorder+s.Dup:
		return Duplicated
	case u < s.Reorder+s.Dup+s.Corrupt:
		return Corrupted
	}
	return Forwarded
}

// wireTime is the line time of one UDP/IPv4 datagram of payload bytes on
// the rate stage's medium at the model's rate.
func (m *Model) wireTime(payload int) time.Duration {
	if d, ok := m.wire[payload]; ok {
		return d
	}
	bits := float64(payload+28) * 8
	if b, err := linerate.Analyze(m.spec.Overhead, linerate.Stack{Transport: linerate.UDP}, payload); err == nil {
		bits = b.WireBits // on USB: bus slots, clocked here at the model's rate
	}
	d := time.Duration(math.Round(bits / m.spec.Rate * float64(time.Second)))
	if len(m.wire) < 4096 {
		m.wire[payload] = d
	}
	return d
}
