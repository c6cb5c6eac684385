package ping

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

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
	Info() result.PingSocket
	Close() error
}

// TTLSetter is a Conn that can set the time-to-live (IPv4) or hop limit
// (IPv6) of the probes it sends.
type TTLSetter interface {
	SetTTL(ttl int) error
}

// OpenFunc opens one kind of ICMP socket (result.PingSocketRaw or result.PingSocketUnprivileged)
// for IPv4 or IPv6.
type OpenFunc func(kind result.PingSocketKind, v6 bool) (Conn, error)

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

// Open opens an ICMP socket of the kind asked for; result.PingSocketAuto tries a raw
// socket and then an unprivileged one. open nil means the system's sockets.
func Open(kind result.PingSocketKind, v6 bool, open OpenFunc) (Conn, error) {
	if open == nil {
		open = OpenSystem
	}
	if kind != result.PingSocketAuto {
		c, err := open(kind, v6)
		if err != nil {
			return nil, fmt.Errorf("opening %s ICMP socket: %w", kind, err)
		}
		return c, nil
	}
	c, rawErr := open(result.PingSocketRaw, v6)
	if rawErr == nil {
		return c, nil
	}
	c, dgramErr := open(result.PingSocketUnprivileged, v6)
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
