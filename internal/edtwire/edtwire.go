// Package edtwire is a user-space Ethernet wire with departure times: a
// forwarder for a router namespace that reads every frame arriving on one
// interface, gives it the time at which a real wire of a given rate would
// have finished sending it, and sends it out of another interface at that
// time.
//
// The departure schedule is absolute: a frame of L bytes (Ethernet header
// included, padded to 60, plus 24 bytes of preamble, FCS and inter-frame
// gap) arriving at time a leaves at
//
//	depart = max(a, previous departure in that direction) + (L+24)·8/rate
//
// so no frame leaves before its own serialization time (a burst after idle
// is spread out as on a wire), and a send that happens late (a busy
// machine) loses no wire time: the frames that are due leave together and
// the next ones keep their places on the schedule. A frame whose departure
// would be more than Config.Latency after its arrival is dropped, as tbf
// drops what would wait longer than its latency.
//
// The forwarder rewrites the Ethernet addresses (source: the egress
// interface's, destination: the next host's), decrements the IPv4 TTL
// (with an incremental header checksum update, RFC 1624) or IPv6 hop
// limit, and passes the kernel's checksum-offload state along (packet
// sockets with PACKET_VNET_HDR), so a frame whose transport checksum was
// left to the "hardware" by the sender still arrives valid. The kernel in
// the router namespace must not forward itself (IP forwarding off there).
//
// A frame that still carries several segments (a GSO skb, if the sender's
// interface lets one through) is forwarded whole but charged as the frames
// it stands for; Stats.GSOFrames counts them.
//
// Each direction runs on an OS thread of its own that waits (ppoll, 1 ns
// timer slack) until a frame arrives or the next one is due; the thread
// asks for nice -15, or with EDTWIRE_SCHED=fifo in the environment for
// SCHED_FIFO priority 10 (an experiment knob; Stats.Sched says what it
// got). What it cannot get is the CPU when the machine is overloaded:
// Stats' lateness, read lag and idle time show how far it kept up.
//
// The package works on Linux only; elsewhere Open returns ErrNotSupported.
package edtwire

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"
)

// ErrNotSupported is returned by Open on systems other than Linux.
var ErrNotSupported = errors.New("edtwire: the departure-time wire needs Linux packet sockets")

// Wire constants (the same as netlab's recipe).
const (
	// MinFrame is the shortest Ethernet frame without FCS: shorter ones are
	// padded to it on a real wire.
	MinFrame = 60
	// Overhead is what the wire adds per frame: preamble and start
	// delimiter 8, FCS 4, inter-frame gap 12.
	Overhead = 24
	// DefaultLatency is the longest a frame may wait for the wire when
	// Config.Latency is zero.
	DefaultLatency = 20 * time.Millisecond
)

// Link is one direction of the wire.
type Link struct {
	// Name labels the direction in Stats ("a>b").
	Name string
	// In and Out are the interfaces (in the namespace Open runs in) the
	// frames arrive on and leave by.
	In, Out string
	// DstMAC is the Ethernet address of the next host on Out.
	DstMAC net.HardwareAddr
	// Dst lists the destination addresses forwarded this way; every other
	// frame arriving on In (ARP, neighbour discovery, traffic for the
	// router itself) is left to the kernel.
	Dst []netip.Addr
	// RateBPS is the wire rate in bit/s; 0 forwards at once, unshaped.
	RateBPS uint64
}

// Config describes a wire: its directions and their queue limit.
type Config struct {
	Links []Link
	// Latency is the longest a frame may wait; 0 means DefaultLatency.
	Latency time.Duration
}

func (c Config) latency() time.Duration {
	if c.Latency == 0 {
		return DefaultLatency
	}
	return c.Latency
}

// Validate reports the first invalid field of c.
func (c Config) Validate() error {
	if len(c.Links) == 0 {
		return errors.New("edtwire: no links")
	}
	if c.Latency < 0 {
		return fmt.Errorf("edtwire: latency %v: must not be negative", c.Latency)
	}
	for _, l := range c.Links {
		switch {
		case l.In == "" || l.Out == "":
			return fmt.Errorf("edtwire: link %q: want both interfaces", l.Name)
		case len(l.DstMAC) != 6:
			return fmt.Errorf("edtwire: link %q: destination MAC %v is not an Ethernet address", l.Name, l.DstMAC)
		case len(l.Dst) == 0:
			return fmt.Errorf("edtwire: link %q: no destination addresses", l.Name)
		}
	}
	return nil
}

// Stats are one direction's counters.
type Stats struct {
	Name string `json:"name"`
	// Frames and Bytes count forwarded frames and their lengths (Ethernet
	// header included, no FCS); WireBytes is what they were charged
	// (padding and the 24 bytes of overhead included).
	Frames    uint64 `json:"frames"`
	Bytes     uint64 `json:"bytes"`
	WireBytes uint64 `json:"wire_bytes"`
	// MaxFrame is the longest frame seen (a GSO frame is longer than the
	// MTU plus 14).
	MaxFrame int `json:"max_frame"`
	// GSOFrames counts frames that carried several segments.
	GSOFrames uint64 `json:"gso_frames,omitempty"`
	// Dropped counts frames that would have waited longer than the
	// latency (the queue was full).
	Dropped uint64 `json:"dropped"`
	// TTLExpired counts frames dropped because their TTL or hop limit ran
	// out (no ICMP is sent).
	TTLExpired uint64 `json:"ttl_expired,omitempty"`
	// SendErrors counts frames the kernel refused to send.
	SendErrors uint64 `json:"send_errors,omitempty"`
	// SocketDrops counts frames the kernel dropped before the forwarder
	// read them (its receive buffer was full).
	SocketDrops uint64 `json:"socket_drops,omitempty"`
	// Late is how late frames left after their departure times: the mean
	// and the largest, and how many left more than 100 µs late.
	LateMean time.Duration `json:"late_mean_ns"`
	// ReadLagMax is the longest a frame waited in the kernel before the
	// forwarder read it (it is scheduled at its arrival all the same).
	ReadLagMax time.Duration `json:"read_lag_max_ns"`
	// Idle is how long the wire had nothing to send between its first
	// and its latest frame.
	Idle time.Duration `json:"idle_ns"`
	// Sched is the forwarder thread's scheduling ("nice -15", "fifo 10").
	Sched     string        `json:"sched"`
	LateMax   time.Duration `json:"late_max_ns"`
	Late100us uint64        `json:"late_over_100us"`
}

// String is a one-line summary.
func (s Stats) String() string {
	return fmt.Sprintf("%s: %d frames, %d bytes (%d on the wire), max frame %d, gso %d, dropped %d, ttl %d, send errors %d, socket drops %d, late mean %v max %v, >100µs %d, read lag max %v, idle %v, sched %s",
		s.Name, s.Frames, s.Bytes, s.WireBytes, s.MaxFrame, s.GSOFrames, s.Dropped, s.TTLExpired,
		s.SendErrors, s.SocketDrops, s.LateMean, s.LateMax, s.Late100us, s.ReadLagMax, s.Idle, s.Sched)
}

// WireBytes returns the bytes of wire time a frame of n bytes (Ethernet
// header included, no FCS) takes: padded to MinFrame, plus Overhead.
func WireBytes(n int) int {
	return max(n, MinFrame) + Overhead
}

// gsoWireBytes returns the wire bytes of a frame of n bytes that carries
// segments of at most gsoSize payload bytes behind hdr bytes of headers
// (Ethernet to transport): each segment repeats the headers and pays its
// own overhead.
func gsoWireBytes(n, hdr, gsoSize int) (wire, segs int) {
	if gsoSize <= 0 || hdr <= 0 || n <= hdr {
		return WireBytes(n), 1
	}
	segs = (n - hdr + gsoSize - 1) / gsoSize
	return n + (segs-1)*hdr + segs*Overhead, segs
}

// schedule is one direction's departure clock, in nanoseconds of
// CLOCK_MONOTONIC.
type schedule struct {
	rate  uint64 // bit/s; 0 = unshaped
	limit int64  // longest wait, ns
	last  int64  // departure of the previous frame
	idle  int64  // time with nothing to send since the first frame
}

// admit returns the departure time of a frame of wire bytes arriving at
// now, or ok false (and no change to the schedule) if it would wait
// longer than the limit.
func (s *schedule) admit(now int64, wire int) (depart int64, ok bool) {
	if s.rate == 0 {
		return now, true
	}
	start := max(now, s.last)
	if s.last != 0 && now > s.last {
		s.idle += now - s.last
	}
	depart = start + int64(uint64(wire)*8*1e9/s.rate)
	if depart-now > s.limit {
		return 0, false
	}
	s.last = depart
	return depart, true
}
