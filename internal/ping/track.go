package ping

import (
	"net"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

// Outcome classifies an incoming message or a send.
type Outcome int

// Outcomes.
const (
	OutcomeForeign     Outcome = iota // not an answer to one of our probes
	OutcomeReply                      // first intact reply, within the timeout
	OutcomeLate                       // first reply, after the timeout
	OutcomeDuplicate                  // a further reply to an answered probe
	OutcomeCorrupt                    // a reply whose payload differs from what was sent
	OutcomeTooBig                     // needs fragmentation: EMSGSIZE on send, or ICMP frag-needed/packet-too-big
	OutcomeUnreachable                // an ICMP error (unreachable, time exceeded) about our probe
	OutcomeSendError                  // the send failed for another reason
)

var outcomeNames = [...]string{"foreign", "reply", "late", "duplicate", "corrupt", "needs fragmentation", "unreachable", "send error"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unknown"
}

// probe is one echo request sent.
type probe struct {
	seq      int
	size     int
	tx       Sent      // what the send call returned
	txAt     time.Time // the kernel's transmit timestamp, once taken
	deadline time.Time
	answered bool // a reply (in time or late) has been counted
	closed   bool // nothing more is awaited: answered, or failed at once
	res      *result.PingSize
}

// tracker matches replies to probes by identifier and sequence number.
// It is owned by one goroutine.
type tracker struct {
	id     int
	target net.IP
	probes map[int]*probe // by 16-bit sequence number
}

func newTracker(id int, target net.IP) *tracker {
	return &tracker{id: id & 0xffff, target: target, probes: make(map[int]*probe)}
}

func (t *tracker) add(p *probe) { t.probes[p.seq&0xffff] = p }

// match decides what a parsed message means, updates the probe it belongs
// to and returns the outcome with that probe (nil when foreign).
func (t *tracker) match(r Reply, from net.IP, at time.Time) (Outcome, *probe) {
	if r.Kind == KindOther || r.ID != t.id {
		return OutcomeForeign, nil
	}
	p := t.probes[r.Seq&0xffff]
	if p == nil {
		return OutcomeForeign, nil
	}
	switch r.Kind {
	case KindTooBig:
		p.closed = true
		return OutcomeTooBig, p
	case KindUnreachable:
		p.closed = true
		return OutcomeUnreachable, p
	}
	if t.target != nil && from != nil && !from.Equal(t.target) {
		return OutcomeForeign, nil
	}
	switch {
	case p.answered:
		return OutcomeDuplicate, p
	case !PayloadMatches(r.Payload, p.seq&0xffff, p.size):
		return OutcomeCorrupt, p
	case at.After(p.deadline):
		p.answered, p.closed = true, true
		return OutcomeLate, p
	}
	p.answered, p.closed = true, true
	return OutcomeReply, p
}
