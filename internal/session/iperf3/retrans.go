package iperf3

import (
	"net"
	"syscall"

	"github.com/wirebench/wirebench/internal/tcpinfo"
	i3wire "github.com/wirebench/wirebench/internal/wire/iperf3"
)

// i3Retr is the retransmission count of one TCP stream we send on, as
// iperf3 reports it: the kernel's total for the stream's socket
// (TCP_INFO tcpi_total_retrans) when the sending ends.
type i3Retr struct {
	n  int64
	ok bool // the system told us (Linux TCP_INFO)
}

// read takes the count from c; where TCP_INFO cannot be read it stays
// unknown.
func (r *i3Retr) read(c net.Conn) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return
	}
	info, err := tcpinfo.Read(sc)
	if err != nil {
		return
	}
	r.n, r.ok = int64(info.TotalRetrans), true
}

// i3SetRetrans fills sender_has_retransmits and each stream's retransmits
// the way iperf3 3.12 does in its results exchange (send_results): −1 from
// an end that only receives; otherwise 1 when this end sends TCP and knows
// every sending stream's count, else 0. A stream's retransmits is its
// count when we send on it and the flag is 1, −1 otherwise. The peer
// prints a "Retr" column from these when the flag is non-zero, so −1 there
// would print as 4294967295. res.Streams, send and retr are index-aligned.
func i3SetRetrans(res *i3wire.Results, udp bool, send []bool, retr []i3Retr) {
	sends, known := false, true
	for k, s := range send {
		if s {
			sends = true
			known = known && retr[k].ok
		}
	}
	switch {
	case !sends:
		res.SenderHasRetransmits = -1
	case !udp && known:
		res.SenderHasRetransmits = 1
	default:
		res.SenderHasRetransmits = 0
	}
	for k := range res.Streams {
		res.Streams[k].Retransmits = -1
		if send[k] && res.SenderHasRetransmits == 1 {
			res.Streams[k].Retransmits = retr[k].n
		}
	}
}
