//go:build linux

package labtest

// Loss at our own sender (issue 16, item 3): with the 100 Mbit/s shaper on
// the sending namespace's own egress, datagrams the shaper's queue drops
// never reach the wire, and the send call that handed them over succeeded.
// The receiver counts them lost all the same; the client must attribute
// them to this host (local_drops, from the qdisc and interface counters)
// and leave only the rest to the path. And with the system's default send
// buffer (no forced 4 MiB any more) the recipe's 20 ms queue is longer than
// what the socket may have queued, so the sender blocks instead of being
// dropped: no silent loss at all.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testutil/resultcheck"

	"github.com/wirebench/wirebench/internal/netlab"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/units"
)

// labDropsOffer is the "-u -b 100M": 100 Mbit/s of payload, more
// than a 100 Mbit/s Ethernet wire carries (95.70 Mbit/s of 1470-byte
// payloads).
const labDropsOffer = 100e6

// TestLabLocalDropsAttributed: tbf's queue on A's egress is 2 ms long
// (25 kB at 100 Mbit/s), shorter than what the default send buffer lets
// the socket queue, so the queue overflows and drops on A itself. Every
// datagram the receiver lost was lost on a host — A's qdisc, or B's socket
// buffer (the server's host_drops) — and the client must say so: local
// drops at least the loss not explained by B, path loss what is left.
func TestLabLocalDropsAttributed(t *testing.T) {
	cfg := netlab.Config{Name: "sessdrop", RateBPS: labRate, Burst: labBurst, Latency: 2 * time.Millisecond}
	runDropsTest(t, cfg, func(lab *netlab.Lab, cr, sr *result.Result) error {
		rv, snd := cr.Receiver, cr.Sender
		if rv == nil || rv.Source != "peer-report" {
			return fmt.Errorf("the client has no server report: %+v", rv)
		}
		if rv.Lost == 0 {
			return fmt.Errorf("nothing was lost: the 2 ms queue did not overflow, so this try shows no attribution")
		}
		if snd.LocalDrops == nil || snd.LocalDropCounters == nil {
			return fmt.Errorf("the client read no send-path drop counters: %+v", snd.LocalDropCounters)
		}
		c := snd.LocalDropCounters
		if c.Interface != lab.A.Ifname || c.Qdisc != "htb" || c.QdiscDrops == nil || c.TxDropped == nil || c.SndbufErrors == nil {
			t.Errorf("counters %+v: want the root htb of %s, its tx_dropped and SndbufErrors", c, lab.A.Ifname)
		}
		local := *snd.LocalDrops
		explained := local + sr.Receiver.HostDrops
		if local == 0 || explained < rv.Lost {
			return fmt.Errorf("lost %d, but only %d dropped here and %d by the server's socket: the loss was put on the path", rv.Lost, local, sr.Receiver.HostDrops)
		}
		if rv.PathLost == nil || *rv.PathLost != max(rv.Lost-local, 0) {
			return fmt.Errorf("path_lost %v, want lost %d − local drops %d", rv.PathLost, rv.Lost, local)
		}
		if !resultcheck.HasWarning(cr, fmt.Sprintf("%d datagrams were dropped on this host before reaching the wire", local)) {
			return fmt.Errorf("no local-drop warning: %q", cr.Warnings)
		}
		return nil
	})
}

// TestLabOwnEgressNoSilentDrops: the recipe's 20 ms queue (250 kB) is
// longer than what the default send buffer lets one socket queue, so at
// -b 100M into the 100 Mbit/s wire the sender is held back (and says the
// rate the link took) instead of losing datagrams on its own host.
func TestLabOwnEgressNoSilentDrops(t *testing.T) {
	runDropsTest(t, netlab.Config{Name: "sessback", RateBPS: labRate, Burst: labBurst}, func(_ *netlab.Lab, cr, sr *result.Result) error {
		if cr.Sender.LocalDrops == nil {
			return fmt.Errorf("the client read no send-path drop counters: %+v", cr.Sender.LocalDropCounters)
		}
		if n := *cr.Sender.LocalDrops; n != 0 {
			return fmt.Errorf("%d datagrams dropped on the sending host: the send buffer outran the 20 ms queue", n)
		}
		if rv := cr.Receiver; rv == nil || rv.Lost != sr.Receiver.HostDrops {
			return fmt.Errorf("receiver %+v lost datagrams that neither host dropped", rv)
		}
		// Held back, it says so: as the rate the link took when the queue
		// alone held it (sender.behind.queue_held), or, when its thread
		// also waited for the CPU on this shared machine, as the warning
		// that it fell behind.
		if bh := cr.Sender.Behind; (bh == nil || !bh.QueueHeld) && !resultcheck.HasWarning(cr, "fell behind") {
			return fmt.Errorf("the wire held the sender back, but it said neither the rate the link took nor that it fell behind: behind %+v, warnings %q", bh, cr.Warnings)
		}
		return nil
	})
}

// runDropsTest runs "-u -b 100M" for 2 s from A to our server in B over a
// lab built as cfg says, and checks each try's client and server results
// (see attempt).
func runDropsTest(t *testing.T, cfg netlab.Config, check func(lab *netlab.Lab, cr, sr *result.Result) error) {
	t.Helper()
	requireLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	lab := newLabConfig(t, ctx, cfg)
	srv := startServer(t, ctx, lab)
	attempt(t, func(try int) error {
		cr, sr, err := srv.runClient(ctx, lab, session.ClientConfig{
			UDP: true, Rate: units.Rate{Value: labDropsOffer}, Length: labUDPLen, Duration: 2 * time.Second,
		})
		if err != nil {
			return err
		}
		logDrops(t, try, cr, sr)
		return check(lab, cr, sr)
	})
}

func logDrops(t *testing.T, try int, cr, sr *result.Result) {
	t.Helper()
	c := cr.Sender.LocalDropCounters
	t.Logf("try %d: %s; offered %.2f Mbit/s, sent %d; receiver lost %d (server socket drops %d); local drops %v, counters %+v",
		try, loadAvg(), cr.Sender.BitsPerSecond/1e6, cr.Sender.Packets, cr.Receiver.Lost, sr.Receiver.HostDrops, deref(cr.Sender.LocalDrops), c)
	if c != nil {
		t.Logf("try %d: qdisc drops %v, tx_dropped %v, SndbufErrors %v; warnings %q", try, deref(c.QdiscDrops), deref(c.TxDropped), deref(c.SndbufErrors), cr.Warnings)
	}
}

func deref(p *int64) any {
	if p == nil {
		return "n/a"
	}
	return *p
}
