package session

import (
	"fmt"
	"net/netip"

	"github.com/wirebench/wirebench/internal/hostdrops"
	"github.com/wirebench/wirebench/internal/result"
)

// SendPathDrops watches this host's send-path drop counters (hostdrops)
// over a UDP test to peer: a full egress qdisc drops our datagrams after
// the send call succeeded, and the receiver then counts them lost as if
// the path had lost them.
type SendPathDrops struct {
	peer   netip.Addr
	before hostdrops.Counters
}

// WatchSendPathDrops reads the counters at the start of the test.
func WatchSendPathDrops(peer netip.Addr) *SendPathDrops {
	return &SendPathDrops{peer: peer, before: hostdrops.Read(peer)}
}

// Done reads the counters at the end of the test (after the FINs) and
// returns what changed.
func (d *SendPathDrops) Done() LocalDrops {
	return LocalDrops(hostdrops.Delta(d.before, hostdrops.Read(d.peer)))
}

// LocalDrops is what this host's send-path drop counters counted over a
// test.
type LocalDrops hostdrops.Drops

// Apply fills r: the sender's local drops and their counters, the
// receiver's path loss (its loss minus the local drops, and minus a
// receiver's on this host that had no buffer: hostdrops.ReceiverOverflow,
// said unless the receiver counted its own), and a warning when this host
// dropped datagrams, or when there was loss and the counters could not be
// read. gso says our sockets sent with UDP segmentation offload: a qdisc
// that drops a whole GSO packet counts it once, however many datagrams it
// held, so the count is then a lower bound.
func (ld LocalDrops) Apply(r *result.Result, gso bool) {
	if r.Sender == nil {
		return
	}
	dr := hostdrops.Drops(ld)
	c := &result.LocalDropCounters{Interface: dr.Interface, Qdisc: dr.Qdisc, NotAvailable: dr.Why}
	if dr.SndbufOK {
		c.SndbufErrors = &dr.SndbufErrors
	}
	if dr.QdiscOK {
		c.QdiscDrops, c.TxDropped = &dr.QdiscDrops, &dr.TxDropped
	}
	r.Sender.LocalDropCounters = c
	rcv := r.Receiver
	if rcv != nil && rcv.HostDrops <= 0 && dr.ReceiverDropped(rcv.Lost) > 0 {
		r.Warn(dr.ReceiverOverflow(rcv.Lost))
	}
	local, ok := dr.Local()
	if !ok {
		if rcv != nil && rcv.Lost > 0 {
			r.Warn(fmt.Sprintf("the receiver counted %d datagrams lost; whether this host dropped some of them before they reached the wire cannot be told here (%s)", rcv.Lost, dr.Why))
		}
		return
	}
	r.Sender.LocalDrops = &local
	var pathLost int64
	if rcv != nil {
		pathLost = max(rcv.Lost-local-dr.ReceiverDropped(rcv.Lost-local), 0)
		rcv.PathLost = &pathLost
	}
	if local == 0 {
		return
	}
	msg := fmt.Sprintf("%d datagrams were dropped on this host before reaching the wire: %s", local, dr.Describe())
	if rcv != nil {
		msg += fmt.Sprintf("; of the %d the receiver counted lost, %d were lost here and %d on the path", rcv.Lost, min(local, rcv.Lost), pathLost)
	}
	msg += " (the counters are host-wide: other traffic from this host at the same time counts too)"
	if gso {
		msg += "; the datagrams left in UDP GSO packets of up to 64, and a qdisc that drops a whole GSO packet counts it once, so this host may have dropped more than counted (--no-gso counts each)"
	}
	r.Warn(msg)
}
