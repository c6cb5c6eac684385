package engine

import (
	"context"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/internal/tcpinfo"
)

// DrainLimit bounds how long DrainTCP waits for the peer to acknowledge
// what was written: what sits in our socket buffer and on the path when the
// last write returns leaves at the path's rate, which on a slow link can
// take longer than this; the figure then counts what was acknowledged by
// the limit and says so.
const DrainLimit = 2 * time.Second

// DrainOptions say how DrainTCP waits.
type DrainOptions struct {
	// Accepted says this end accepted the connection rather than opened
	// it (the kernel's count then holds no SYN).
	Accepted bool
	// Brief bounds the wait to a few round trips (4 smoothed RTTs, within
	// briefMin..briefMax) instead of DrainLimit, for a protocol whose peer
	// stops its clock and its count at a message that must follow the last
	// data at once (iperf3's TEST_END).
	Brief bool
	// Preamble is the number of bytes written on the connection before
	// the counted ones and not included in written (iperf3's 37-byte
	// cookie on a data stream): the kernel's acknowledged count holds
	// them, the delivered payload does not.
	Preamble int64
}

// The bounds of a Brief wait: the peer's clock runs on while we wait.
const (
	briefMin = 2 * time.Millisecond
	briefMax = 10 * time.Millisecond
)

// drainStall ends the wait early when the acknowledged count has not moved
// for this long (and for 8 smoothed RTTs): the peer stopped reading.
const drainStall = 500 * time.Millisecond

// drainPoll is how often TCP_INFO is read while waiting; it bounds the
// error of the end time (0.01 % of a 2 s test).
const drainPoll = 200 * time.Microsecond

// TCPDelivery is how much of what a TCP sender wrote its peer acknowledged,
// and when the last of it was seen acknowledged.
type TCPDelivery struct {
	// Known says the system reports acknowledged bytes (Linux TCP_INFO);
	// without it the other fields are unset and the sender can only count
	// what it wrote.
	Known bool
	// Acked is the payload the peer acknowledged; Written what was written.
	Acked, Written int64
	// End is when the last acknowledged byte was first seen acknowledged.
	End time.Time
	// Waited is how long the wait lasted after the last write.
	Waited time.Duration
	// Info is the last TCP_INFO read (MSS, retransmissions, RTT).
	Info tcpinfo.Info
}

// Drained says every written byte was acknowledged.
func (d TCPDelivery) Drained() bool { return d.Known && d.Acked >= d.Written }

// Warning says in plain words why the delivered figure falls short of the
// written one, or "" when nothing needs saying.
func (d TCPDelivery) Warning() string {
	switch {
	case !d.Known:
		return "this system does not report acknowledged bytes (TCP_INFO): the sender figure counts bytes written, which includes data still in the socket buffer and on the path when the test ended"
	case d.Acked < d.Written:
		return fmt.Sprintf("the peer had acknowledged %d of the %d bytes written when the wait for the rest ended after %v: the sender figure counts the acknowledged ones",
			d.Acked, d.Written, d.Waited.Round(time.Millisecond))
	}
	return ""
}

// DrainTCP waits, after the last write of written payload bytes on conn
// (the stream's header included), until the peer has acknowledged all of
// them, the acknowledged count stalls, DrainLimit passes or ctx is done,
// and returns what was acknowledged and when. The caller shuts the write
// side down first when the protocol allows (a FIN tells the peer the data
// ended). Where conn is not a TCP connection with TCP_INFO, it returns at
// once with Known false.
func DrainTCP(ctx context.Context, conn net.Conn, written int64, opt DrainOptions) TCPDelivery {
	d := TCPDelivery{Written: written}
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return d
	}
	rc, err := sc.SyscallConn() // once: the loop below polls every drainPoll
	if err != nil {
		return d
	}
	begin := time.Now()
	info, err := tcpinfo.ReadRaw(rc)
	if err != nil {
		return d
	}
	kernel := tcpinfo.Info.PayloadAcked
	if opt.Accepted {
		kernel = tcpinfo.Info.PayloadAckedAccepted
	}
	payload := func(i tcpinfo.Info) (uint64, bool) {
		n, ok := kernel(i)
		return n - min(n, uint64(max(opt.Preamble, 0))), ok
	}
	acked, ok := payload(info)
	if !ok {
		return d
	}
	d.Known, d.Info = true, info
	d.Acked, d.End = int64(acked), begin
	last := begin // when Acked last moved
	limit := DrainLimit
	if opt.Brief {
		limit = min(briefMax, max(briefMin, 4*info.RTT))
	}
	for d.Acked < written && ctx.Err() == nil {
		now := time.Now()
		stall := max(drainStall, 8*info.RTT)
		if now.Sub(begin) >= limit || now.Sub(last) >= stall {
			break
		}
		time.Sleep(drainPoll)
		if info, err = tcpinfo.ReadRaw(rc); err != nil {
			break
		}
		d.Info = info
		if a, _ := payload(info); int64(a) > d.Acked {
			now := time.Now()
			d.Acked, d.End, last = int64(a), now, now
		}
	}
	d.Acked = min(d.Acked, written)
	d.Waited = time.Since(begin)
	return d
}
