// Package hostdrops reads the counters of datagrams this host dropped on its
// send path, after a send call had accepted them and before they reached
// the wire: the drop counter of the root qdisc of the interface the route
// to the peer leaves by, and that interface's tx_dropped. A full qdisc (a
// shaper's queue) drops silently: the send call succeeds, and without these
// counters the receiver's loss would be taken for loss on the path. The
// kernel's UDP SndbufErrors (per network namespace) is read too, but only
// reported: it rises for such silent drops and also each time a
// non-blocking send finds the send buffer full and is retried later, which
// loses nothing. When the route to the peer is the loopback interface (the
// receiver is on this host), UDP RcvbufErrors is read too: the datagrams
// this host's receive buffers had no room for, the receiver's own socket's
// among them. Reading them is Linux-only; elsewhere every counter says it
// is not available.
package hostdrops

import (
	"bufio"
	"bytes"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Counters is a snapshot of the send-path drop counters for traffic to one
// destination.
type Counters struct {
	// SndbufErrors is the UDP (IPv4) or UDP6 SndbufErrors counter of this
	// network namespace; SndbufOK says whether it could be read.
	SndbufErrors uint64
	SndbufOK     bool
	// QdiscDrops is the drop counter of Interface's root qdisc (kind
	// Qdisc) and TxDropped the interface's own tx_dropped; QdiscOK says
	// whether both could be read.
	QdiscDrops uint64
	TxDropped  uint64
	QdiscOK    bool
	Interface  string
	Qdisc      string
	// RcvbufErrors is the UDP (IPv4) or UDP6 RcvbufErrors counter of this
	// network namespace, read when the route to the destination is the
	// loopback interface (RcvbufOK).
	RcvbufErrors uint64
	RcvbufOK     bool
	// Why says why a counter could not be read ("" when both were).
	Why string
}

// Read takes a snapshot for traffic to dst.
func Read(dst netip.Addr) Counters { return read(dst) }

// Drops is what the counters counted between two snapshots.
type Drops struct {
	SndbufErrors int64
	SndbufOK     bool
	RcvbufErrors int64 // the receiver is on this host (RcvbufOK): see Counters
	RcvbufOK     bool
	QdiscDrops   int64
	TxDropped    int64
	QdiscOK      bool
	Interface    string
	Qdisc        string
	Why          string
}

// Delta returns the change from before to after. A counter is only
// available when it was readable both times and on the same interface; a
// counter that went backwards (reset) is not available either.
func Delta(before, after Counters) Drops {
	d := Drops{Interface: after.Interface, Qdisc: after.Qdisc, Why: after.Why}
	if before.Why != "" && d.Why == "" {
		d.Why = before.Why
	}
	if before.SndbufOK && after.SndbufOK && after.SndbufErrors >= before.SndbufErrors {
		d.SndbufErrors, d.SndbufOK = int64(after.SndbufErrors-before.SndbufErrors), true
	}
	if before.RcvbufOK && after.RcvbufOK && after.RcvbufErrors >= before.RcvbufErrors {
		d.RcvbufErrors, d.RcvbufOK = int64(after.RcvbufErrors-before.RcvbufErrors), true
	}
	if before.QdiscOK && after.QdiscOK && before.Interface == after.Interface &&
		after.QdiscDrops >= before.QdiscDrops && after.TxDropped >= before.TxDropped {
		d.QdiscDrops, d.TxDropped, d.QdiscOK = int64(after.QdiscDrops-before.QdiscDrops), int64(after.TxDropped-before.TxDropped), true
	}
	return d
}

// Local returns how many datagrams were dropped on this host's send path
// (root qdisc drops plus the interface's tx_dropped), and whether the
// counters could be read. SndbufErrors is not part of it (see the package
// comment). The counters are host-wide (the whole interface), so traffic of
// other programs at the same time is included.
func (d Drops) Local() (int64, bool) {
	return d.QdiscDrops + d.TxDropped, d.QdiscOK
}

// ReceiverDropped is how many of lost datagrams a receiver on this host
// may have had no buffer for: the rise of RcvbufErrors, at most lost; 0
// when the receiver is elsewhere or the counter unread.
func (d Drops) ReceiverDropped(lost int64) int64 {
	if !d.RcvbufOK || lost <= 0 {
		return 0
	}
	return min(d.RcvbufErrors, lost)
}

// ReceiverOverflow is the warning that a receiver on this host, which
// counted lost datagrams lost, may have lost them at its own socket
// (ReceiverDropped), or "" when none can have been. The counter is
// host-wide: other sockets' overflows at the same time count too.
func (d Drops) ReceiverOverflow(lost int64) string {
	n := d.ReceiverDropped(lost)
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("the receiver is on this host, and this host's UDP receive buffers overflowed %d times during the test "+
		"(RcvbufErrors, host-wide): up to %d of the %d datagrams it counted lost found its socket's buffer full, a receiver "+
		"that did not keep up rather than loss on a path; give it a larger buffer (iperf -w, wirebench -w) or send slower",
		d.RcvbufErrors, n, lost)
}

// Describe says what the counters saw, for a warning: "root qdisc tbf on
// wbl-a dropped 12, wbl-a tx_dropped 0, UDP SndbufErrors rose by 12".
func (d Drops) Describe() string {
	var parts []string
	if d.QdiscOK {
		parts = append(parts, fmt.Sprintf("root qdisc %s on %s dropped %d, %s tx_dropped %d", d.Qdisc, d.Interface, d.QdiscDrops, d.Interface, d.TxDropped))
	}
	if d.SndbufOK {
		parts = append(parts, fmt.Sprintf("UDP SndbufErrors rose by %d", d.SndbufErrors))
	}
	if d.Why != "" {
		parts = append(parts, d.Why)
	}
	return strings.Join(parts, ", ")
}

// UDPTable parses the "Udp:" rows of a /proc/net/snmp file (a row of
// names, then a row of values) into counters by name.
func UDPTable(snmp []byte) (map[string]uint64, error) {
	var names []string
	sc := bufio.NewScanner(bytes.NewReader(snmp))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] != "Udp:" {
			continue
		}
		if names == nil {
			names = f
			continue
		}
		t := map[string]uint64{}
		for i, n := range names[1:] {
			if i+1 < len(f) {
				if v, err := strconv.ParseUint(f[i+1], 10, 64); err == nil {
					t[n] = v
				}
			}
		}
		return t, nil
	}
	return nil, fmt.Errorf("no Udp rows in the snmp table")
}
