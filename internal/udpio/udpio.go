// Package udpio is the UDP socket layer under wirebench's traffic engine.
//
// A Conn moves datagrams in batches: on Linux ReadBatch and WriteBatch are one
// recvmmsg/sendmmsg system call each (through golang.org/x/net/ipv4 and ipv6),
// every received datagram carries the kernel's receive time (SO_TIMESTAMPNS),
// and the kernel's count of datagrams dropped because the socket's receive
// buffer was full (SO_RXQ_OVFL, SO_MEMINFO) is tracked. Elsewhere, or with
// Options.NoBatch, each call moves one datagram through the standard library.
// On Linux, Options.GSO hands the kernel runs of datagrams as one UDP_SEGMENT
// buffer, and Options.GRO takes coalesced packets (UDP_GRO) and splits them
// again, so ReadBatch still returns one Message per datagram; receiving and
// sending allocate nothing per datagram.
//
// What a socket could switch on is reported by Conn.Capabilities, so a result
// can record how it was measured; nothing is assumed.
//
// Receive times are wall-clock times (CLOCK_REALTIME) without a monotonic
// reading, on every path, so the difference of two Message.Time values always
// means the same thing. Each datagram also carries its arrival on the
// monotonic clock (Message.Arrived), which a step of the wall clock does not
// move: what timeouts measure silence against.
package udpio

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// DefaultBatchSize is the batch size used when Options.BatchSize is 0.
const DefaultBatchSize = 64

// MaxBatchSize caps Options.BatchSize.
const MaxBatchSize = 1024

// Message is one datagram for ReadBatch/WriteBatch.
type Message struct {
	// Buf is, for a write, the payload; for a read, the buffer to fill
	// (len(Buf) is its capacity).
	Buf []byte
	// N is, for a read, the number of bytes received into Buf. A datagram
	// longer than Buf is truncated to len(Buf) and Truncated is set.
	N         int
	Truncated bool
	// Addr is, for a write, the destination (the zero value on a connected
	// socket, or the remote address itself); for a read, the source.
	// IPv4-mapped IPv6 source addresses are unmapped to plain IPv4.
	Addr netip.AddrPort
	// Time is, for a read, the receive time: the kernel's SO_TIMESTAMPNS
	// stamp when available (Capabilities.KernelRxTime), else the time taken
	// right after the receiving system call returned.
	Time time.Time
	// Arrived is, for a read, when the datagram arrived on the monotonic
	// clock (it has a monotonic reading): time.Now() right after the
	// receiving system call returned, less the time the datagram waited
	// in the socket by Time (the kernel's stamp; none without one). That
	// wait is bounded by the time since a read last found the socket
	// empty (by nothing on the one-datagram path), so a step of the wall
	// clock moves Arrived by at most that much, and only for datagrams
	// that waited across the step, where it moves Time by the whole step.
	// Idle timeouts and other waits measure against Arrived: a reader that
	// fell behind still sees that the datagrams it reads late arrived in
	// time.
	Arrived time.Time
}

// ArrivedAt returns Arrived, or Time when Arrived is unset (a Message that
// no ReadBatch filled, as tests build them).
func (m *Message) ArrivedAt() time.Time {
	if m.Arrived.IsZero() {
		return m.Time
	}
	return m.Arrived
}

// arrival is Message.Arrived of a datagram stamped stamp (wall clock), read
// at read (monotonic; readWall the same reading without it), by a reader
// that last found the socket empty at empty (zero: unknown).
func arrival(read, readWall, stamp, empty time.Time) time.Time {
	wait := readWall.Sub(stamp)
	if wait <= 0 {
		return read
	}
	if !empty.IsZero() {
		wait = min(wait, read.Sub(empty))
	}
	return read.Add(-wait)
}

// Capabilities says what a Conn could switch on when it was opened.
type Capabilities struct {
	Batch        bool // sendmmsg/recvmmsg: more than one datagram per system call
	KernelRxTime bool // Message.Time comes from the kernel (SO_TIMESTAMPNS)
	DropCounter  bool // Drops is supported (SO_RXQ_OVFL and/or SO_MEMINFO)
	// GSO is true while WriteBatch coalesces datagrams with UDP_SEGMENT
	// (requested with Options.GSO and supported by the kernel). It turns
	// false for good if the kernel refuses a segmented send.
	GSO bool
	// GRO is true when the socket has UDP_GRO on (requested with
	// Options.GRO and accepted by the kernel): the kernel may hand up
	// several datagrams of one source as one coalesced packet, which
	// ReadBatch splits again, one Message per datagram. The datagrams of
	// one coalesced packet share its receive time.
	GRO bool
	// ReadBuffer and WriteBuffer are the socket buffer sizes in bytes as the
	// kernel reports them after Options were applied (Linux reports double
	// the requested size); 0 when unknown.
	ReadBuffer, WriteBuffer int
	// ReadBufferForced and WriteBufferForced are true when the requested
	// size was set with SO_RCVBUFFORCE/SO_SNDBUFFORCE, past the system's
	// maximum.
	ReadBufferForced, WriteBufferForced bool
}

// Options configures a Conn. The zero value is valid.
type Options struct {
	// ReadBuffer and WriteBuffer are socket buffer sizes in bytes; 0 leaves
	// the default. On Linux SO_RCVBUFFORCE/SO_SNDBUFFORCE is tried first
	// (it needs CAP_NET_ADMIN), then SO_RCVBUF/SO_SNDBUF, which the kernel
	// caps at net.core.rmem_max/wmem_max.
	ReadBuffer, WriteBuffer int
	// BatchSize is the most datagrams one ReadBatch or system call moves;
	// 0 means DefaultBatchSize. Values above MaxBatchSize are capped.
	BatchSize int
	// NoBatch forces one datagram per call and system call (recvmsg/sendmsg).
	// Kernel receive times and drop counts still work on Linux.
	NoBatch bool
	// GSO asks WriteBatch to coalesce runs of consecutive datagrams with the
	// same destination and size (the last of a run may be shorter) into one
	// UDP_SEGMENT send of up to 64 datagrams, which the kernel splits. Linux
	// only, ignored with NoBatch; see Capabilities.GSO for whether it is on.
	// The run leaves the host back to back, so it suits bulk rates, not
	// finely paced traffic. If the kernel answers a segmented send with EIO
	// or EINVAL (no checksum offload, a segment above the path MTU), GSO is
	// switched off for this Conn and the unsent datagrams go out plainly.
	GSO bool
	// GRO asks for UDP receive offload (UDP_GRO): the kernel may coalesce
	// consecutive datagrams of one source of the same size into one packet
	// (as a GSO sender's super-packet crosses loopback whole), saving its
	// per-datagram work. ReadBatch still returns one Message per datagram,
	// in order, but all datagrams of a coalesced packet carry the same
	// Time, so per-datagram arrival times are lost. Linux only, ignored
	// with NoBatch; see Capabilities.GRO.
	GRO bool
	// Control, when set, runs on the new socket before it binds or
	// connects, as net.Dialer.Control does (for the TOS, TTL and other
	// options a caller sets); Listen and Dial only.
	Control func(network, address string, c syscall.RawConn) error
}

// Conn is a UDP socket.
//
// ReadBatch blocks until at least one datagram arrives, the read deadline
// passes (the error then matches os.ErrDeadlineExceeded), or the Conn is
// closed (the error then matches net.ErrClosed). It fills msgs[:n] (at most
// the batch size) and returns n.
//
// WriteBatch sends len(msgs) datagrams, as many system calls as needed, and
// returns how many were sent; on error it returns the count sent before the
// error and the error wrapped (ENOBUFS, ECONNREFUSED on a connected socket
// after an ICMP port unreachable, ...), so the caller can count it, skip the
// failed datagram and go on. A full send buffer (EAGAIN) does not surface:
// the socket is non-blocking under Go's poller, which waits until there is
// room, as net.UDPConn writes do; Close unblocks such a wait.
//
// On a connected socket ReadBatch can likewise return ECONNREFUSED (wrapped)
// when an ICMP port unreachable arrived; the socket stays usable.
//
// Each method is safe to call from one reader goroutine and one writer
// goroutine at the same time; Drops, Capabilities, the address methods,
// SetReadDeadline and Close are safe from any goroutine.
type Conn interface {
	ReadBatch(msgs []Message) (int, error)
	WriteBatch(msgs []Message) (int, error)
	SetReadDeadline(t time.Time) error
	LocalAddr() netip.AddrPort
	// RemoteAddr is the connected peer; the zero value when unconnected.
	RemoteAddr() netip.AddrPort
	// Drops returns how many datagrams the kernel dropped for this socket
	// because its receive buffer was full, since the socket opened (Linux
	// SO_RXQ_OVFL, updated on every read, and SO_MEMINFO, read at the call so
	// drops after the last received datagram count too); ok=false when
	// unsupported.
	Drops() (n uint64, ok bool)
	Capabilities() Capabilities
	// Close closes the socket and unblocks ReadBatch and WriteBatch.
	Close() error
}

// errWriteToConnected is returned by WriteBatch when a message on a connected
// socket names a destination other than the connected peer.
var errWriteToConnected = errors.New("destination differs from the connected peer")

// Listen opens an unconnected UDP socket bound to addr. network is "udp",
// "udp4" or "udp6".
func Listen(ctx context.Context, network, addr string, opt Options) (Conn, error) {
	if err := checkNetwork(network); err != nil {
		return nil, err
	}
	lc := net.ListenConfig{Control: opt.Control}
	pc, err := lc.ListenPacket(ctx, network, addr)
	if err != nil {
		return nil, fmt.Errorf("udpio: listen %s %s: %w", network, addr, err)
	}
	return adopt(pc.(*net.UDPConn), opt)
}

// Dial opens a UDP socket connected to raddr, bound to laddr ("" picks a
// local address and port).
func Dial(ctx context.Context, network, raddr string, laddr string, opt Options) (Conn, error) {
	if err := checkNetwork(network); err != nil {
		return nil, err
	}
	d := net.Dialer{Control: opt.Control}
	if laddr != "" {
		la, err := net.ResolveUDPAddr(network, laddr)
		if err != nil {
			return nil, fmt.Errorf("udpio: resolve local address %q: %w", laddr, err)
		}
		d.LocalAddr = la
	}
	c, err := d.DialContext(ctx, network, raddr)
	if err != nil {
		return nil, fmt.Errorf("udpio: dial %s %s: %w", network, raddr, err)
	}
	return adopt(c.(*net.UDPConn), opt)
}

// Wrap adopts an existing socket; the Conn's Close closes c. On failure c is
// left open and belongs to the caller again.
func Wrap(c *net.UDPConn, opt Options) (Conn, error) {
	if c == nil {
		return nil, errors.New("udpio: wrap: nil connection")
	}
	return newConn(c, opt)
}

// adopt is Wrap for sockets this package opened: it closes c on failure.
func adopt(c *net.UDPConn, opt Options) (Conn, error) {
	conn, err := newConn(c, opt)
	if err != nil {
		c.Close()
		return nil, err
	}
	return conn, nil
}

func checkNetwork(network string) error {
	switch network {
	case "udp", "udp4", "udp6":
		return nil
	}
	return fmt.Errorf("udpio: unsupported network %q (want udp, udp4 or udp6)", network)
}

// batchSize is the effective batch size for opt.
func (opt Options) batchSize() int {
	switch {
	case opt.NoBatch:
		return 1
	case opt.BatchSize <= 0:
		return DefaultBatchSize
	case opt.BatchSize > MaxBatchSize:
		return MaxBatchSize
	}
	return opt.BatchSize
}

// udpAddrPort converts a net.Addr from the standard library or x/net to an
// unmapped netip.AddrPort.
func udpAddrPort(a net.Addr) netip.AddrPort {
	ua, ok := a.(*net.UDPAddr)
	if !ok || ua == nil {
		return netip.AddrPort{}
	}
	return unmap(ua.AddrPort())
}

func unmap(ap netip.AddrPort) netip.AddrPort {
	if ap.Addr().Is4In6() {
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return ap
}

// readClock reads the clock once after a receive: wall is the fallback
// receive time (Message.Time), without a monotonic reading so it compares
// like a kernel stamp; mono is the same reading with it (for
// Message.Arrived).
func readClock() (wall, mono time.Time) {
	mono = time.Now()
	return mono.Round(0), mono
}
