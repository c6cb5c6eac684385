package ping

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"
)

// SocketKind names the kind of ICMP socket in use.
type SocketKind string

// Socket kinds.
const (
	SocketAuto         SocketKind = ""             // try raw, then unprivileged
	SocketRaw          SocketKind = "raw"          // ip4:icmp / ip6:ipv6-icmp
	SocketUnprivileged SocketKind = "unprivileged" // udp4 / udp6 ICMP datagram socket
)

// Timestamp sources recorded in SocketInfo.RxTimestamps and TxTimestamps.
const (
	// TimestampKernel: receive times from SO_TIMESTAMPNS; transmit times
	// from SO_TIMESTAMPING (when the first IP packet of an echo request
	// entered the host's queueing layer, after the payload was copied).
	TimestampKernel = "kernel"
	// TimestampUser: time.Now right after the receive call returned, or
	// right before the send call.
	TimestampUser = "userspace"
)

// SocketInfo says what socket the pinger got and what it can do.
type SocketInfo struct {
	Kind    SocketKind `json:"kind"`
	Network string     `json:"network"` // as given to icmp.ListenPacket: "ip4:icmp", "udp4", …
	// Source is the address or interface the socket is bound to (-I);
	// "" when it is bound to neither.
	Source string `json:"source,omitempty"`
	// ID is the echo identifier the kernel puts on our requests for an
	// unprivileged socket (the socket's "port"); 0 for raw sockets, where
	// the pinger chooses it.
	ID int `json:"-"`
	// RxTimestamps is TimestampKernel when receive times come from the
	// kernel, else TimestampUser.
	RxTimestamps string `json:"rx_timestamps"`
	// RxTimestampsWhy says why kernel timestamps are not in use.
	RxTimestampsWhy string `json:"rx_timestamps_why,omitempty"`
	// TxTimestamps is TimestampKernel when the socket asked the kernel for
	// transmit timestamps, else TimestampUser. Whether each probe got one
	// is counted per size (SizeResult.KernelTx).
	TxTimestamps string `json:"tx_timestamps"`
	// TxTimestampsWhy says why kernel transmit timestamps are not in use.
	TxTimestampsWhy string `json:"tx_timestamps_why,omitempty"`
	// DF is whether the don't-fragment setting can be controlled.
	DF bool `json:"df_supported"`
	// CountsDrops is whether the socket reports the messages it drops
	// for want of receive buffer (SO_RXQ_OVFL).
	CountsDrops bool `json:"counts_drops"`
}

// Packet is one message read from a Conn.
type Packet struct {
	Data []byte    // the ICMP message, IP header removed
	From net.IP    // the sender
	At   time.Time // receive time: kernel timestamp when Kernel is set
	// Kernel is set when At came from the kernel.
	Kernel bool
	// Drops is how many messages the socket has dropped since it was
	// opened (its receive buffer was full), when HasDrops.
	Drops    uint32
	HasDrops bool
	// Reply, when set, is an ICMP error the kernel reported through the
	// socket's error queue (unprivileged sockets), already parsed; Data
	// is then empty and From is the host that reported it.
	Reply *Reply
}

// Sent is what WriteTo knows of a message it sent.
type Sent struct {
	// At is the time taken immediately before the send system call.
	At time.Time
	// key identifies the send to the Conn's TxStamper, when stamped.
	key     txKey
	stamped bool
}

// txKey names one send to the kernel's timestamp counter: the counter's
// value, and how many times the counter has been reset before it.
type txKey struct{ gen, n uint32 }

// TxStamper is implemented by a Conn that can tell when the kernel put a
// message on the wire.
type TxStamper interface {
	// TxTime returns the kernel's transmit timestamp of s, when one has
	// come and is plausible (not before s.At).
	TxTime(s Sent) (time.Time, bool)
}

// Conn is an open ICMP socket for one address family.
//
// ReadPacket may be called from one goroutine while WriteTo, SetDF and
// PathMTU are called from another; Close unblocks a pending ReadPacket,
// which then returns net.ErrClosed. No method may be used after Close
// except Close, which then returns an error.
type Conn interface {
	// WriteTo sends the ICMP message b to dst and returns the time taken
	// immediately before the send system call. A payload too big for the
	// path with DF set fails with an error matching syscall.EMSGSIZE.
	WriteTo(b []byte, dst net.IP) (Sent, error)
	// ReadPacket reads the next ICMP message, waiting until the deadline
	// set with SetReadDeadline.
	ReadPacket(buf []byte) (Packet, error)
	SetReadDeadline(t time.Time) error
	// SetDF turns don't-fragment on or off for later sends. It returns an
	// error matching ErrNotSupported where the system cannot do it.
	SetDF(on bool) error
	Info() SocketInfo
	Close() error
}

// TTLSetter is a Conn that can set the time-to-live (IPv4) or hop limit
// (IPv6) of the probes it sends.
type TTLSetter interface {
	SetTTL(ttl int) error
}

// OpenFunc opens one kind of ICMP socket (SocketRaw or SocketUnprivileged)
// for IPv4 or IPv6.
type OpenFunc func(kind SocketKind, v6 bool) (Conn, error)

// ErrNotSupported is returned for what this system cannot do.
var ErrNotSupported = errors.New("not supported on this system")

// ErrNoPermission is matched (errors.Is) by the error Open returns when
// neither a raw nor an unprivileged ICMP socket is permitted.
var ErrNoPermission = errors.New("no ICMP socket permitted")

// NoPermissionError says why neither socket kind could be opened and what
// to change.
type NoPermissionError struct {
	RawErr, DgramErr error
	// GroupRange is the value of net.ipv4.ping_group_range, when known.
	GroupRange string
}

func (e *NoPermissionError) Error() string {
	rng := ""
	if e.GroupRange != "" {
		rng = fmt.Sprintf(" (net.ipv4.ping_group_range is %q)", e.GroupRange)
	}
	return fmt.Sprintf("no ICMP socket permitted: raw socket: %v; unprivileged ICMP socket: %v%s. "+
		"To ping, do one of: run as root; grant CAP_NET_RAW (sudo setcap cap_net_raw+ep /path/to/wirebench); "+
		"or allow unprivileged ICMP sockets: sudo sysctl -w net.ipv4.ping_group_range=\"0 2147483647\"",
		e.RawErr, e.DgramErr, rng)
}

// Is makes errors.Is(err, ErrNoPermission) true.
func (e *NoPermissionError) Is(target error) bool { return target == ErrNoPermission }

// Open opens an ICMP socket of the kind asked for; SocketAuto tries a raw
// socket and then an unprivileged one. open nil means the system's sockets.
func Open(kind SocketKind, v6 bool, open OpenFunc) (Conn, error) {
	if open == nil {
		open = OpenSystem
	}
	if kind != SocketAuto {
		c, err := open(kind, v6)
		if err != nil {
			return nil, fmt.Errorf("opening %s ICMP socket: %w", kind, err)
		}
		return c, nil
	}
	c, rawErr := open(SocketRaw, v6)
	if rawErr == nil {
		return c, nil
	}
	c, dgramErr := open(SocketUnprivileged, v6)
	if dgramErr == nil {
		return c, nil
	}
	if errors.Is(rawErr, os.ErrPermission) && errors.Is(dgramErr, os.ErrPermission) {
		return nil, &NoPermissionError{RawErr: rawErr, DgramErr: dgramErr, GroupRange: pingGroupRange()}
	}
	return nil, fmt.Errorf("opening ICMP socket: raw: %w; unprivileged: %w", rawErr, dgramErr)
}

// pingGroupRange reads net.ipv4.ping_group_range; "" where there is none.
func pingGroupRange() string {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ping_group_range")
	if err != nil {
		return ""
	}
	return strings.Join(strings.Fields(string(b)), " ")
}
