// Package tcpinfo reads what the kernel knows about one TCP connection
// (Linux TCP_INFO): bytes acknowledged, retransmissions, congestion window,
// smoothed RTT and the MSS in use. It reads; it never changes a socket.
//
// Fields that the running kernel does not fill are reported as absent
// (the Has* flags), never as zero, so a figure built on them can say why it
// is missing. On systems without TCP_INFO, Read returns ErrUnsupported.
package tcpinfo

import (
	"errors"
	"syscall"
	"time"
)

// ErrUnsupported is returned where this system has no TCP_INFO.
var ErrUnsupported = errors.New("tcp_info is not available on this system")

// Info is one reading of a connection's TCP state.
type Info struct {
	// State is the kernel's TCP state number (1 = ESTABLISHED).
	State uint8
	// SndMSS is the MSS this end sends with; AdvMSS the one it advertised.
	SndMSS, AdvMSS uint32
	// PMTU is the path MTU the kernel uses for the connection.
	PMTU uint32
	// Cwnd is the congestion window in segments.
	Cwnd uint32
	// RTT and RTTVar are the smoothed round-trip time and its variation.
	RTT, RTTVar time.Duration
	// Unacked is the number of segments sent and not yet acknowledged.
	Unacked uint32
	// TotalRetrans is the number of segments retransmitted over the
	// connection's life.
	TotalRetrans uint32

	// BytesAcked is how far the peer's acknowledgements reached, in
	// sequence space: the payload plus one for our SYN (on a connection we
	// opened) and one for our FIN once it is acknowledged (valid when
	// HasBytesAcked). PayloadAcked and PayloadAckedAccepted give the
	// payload alone.
	BytesAcked uint64
	// BytesReceived is how far we received in order, in sequence space:
	// the payload plus one for the peer's FIN once it arrived (valid when
	// HasBytesAcked). PayloadReceived gives the payload alone.
	BytesReceived uint64
	// HasBytesAcked says the kernel filled BytesAcked and BytesReceived
	// (Linux 4.1 and later).
	HasBytesAcked bool

	// NotSent is the number of bytes written but not yet sent (valid when
	// HasNotSent, Linux 4.6 and later).
	NotSent uint32
	// MinRTT is the smallest RTT the kernel has seen (valid when HasNotSent).
	MinRTT time.Duration
	// HasNotSent says the kernel filled NotSent and MinRTT.
	HasNotSent bool

	// BytesSent counts payload bytes sent including retransmissions and
	// BytesRetrans the retransmitted ones (valid when HasBytesSent, Linux
	// 4.19 and later).
	BytesSent, BytesRetrans uint64
	// HasBytesSent says the kernel filled BytesSent and BytesRetrans.
	HasBytesSent bool
}

// Read returns the TCP_INFO of the connection c (a *net.TCPConn or anything
// else that exposes its descriptor through syscall.Conn).
func Read(c syscall.Conn) (Info, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return Info{}, err
	}
	return ReadRaw(rc)
}

// ReadRaw is Read on the raw connection of c.SyscallConn(), for a caller
// that polls one connection and gets its raw connection once.
func ReadRaw(rc syscall.RawConn) (Info, error) {
	var info Info
	var gerr error
	if err := rc.Control(func(fd uintptr) { info, gerr = read(fd) }); err != nil {
		return Info{}, err
	}
	return info, gerr
}

// Kernel TCP states (include/net/tcp_states.h) that tell whether a FIN was
// exchanged.
const (
	stateEstablished = 1
	stateFinWait2    = 5
	stateTimeWait    = 6
	stateCloseWait   = 8
	stateLastAck     = 9
	stateClosing     = 11
)

// PayloadAcked is the number of payload bytes the peer acknowledged on a
// connection this end opened (connect): BytesAcked less our SYN, and less
// our FIN when the state shows it was acknowledged. ok is false when the
// kernel does not report it.
func (i Info) PayloadAcked() (n uint64, ok bool) {
	if i.BytesAcked == 0 {
		return 0, false
	}
	return i.payloadAcked(1)
}

// PayloadAckedAccepted is PayloadAcked for a connection this end accepted:
// Linux starts an accepted connection's count when the handshake ends, so
// it holds no SYN (only our FIN, once acknowledged).
func (i Info) PayloadAckedAccepted() (n uint64, ok bool) { return i.payloadAcked(0) }

// payloadAcked is BytesAcked less syn and less our acknowledged FIN.
func (i Info) payloadAcked(syn uint64) (n uint64, ok bool) {
	if !i.HasBytesAcked {
		return 0, false
	}
	n = i.BytesAcked - min(syn, i.BytesAcked)
	if (i.State == stateFinWait2 || i.State == stateTimeWait) && n > 0 {
		n--
	}
	return n, true
}

// PayloadReceived is the number of payload bytes received in order:
// BytesReceived less the peer's FIN when the state shows it arrived. ok is
// false when the kernel does not report it.
func (i Info) PayloadReceived() (n uint64, ok bool) {
	if !i.HasBytesAcked {
		return 0, false
	}
	n = i.BytesReceived
	switch i.State {
	case stateCloseWait, stateLastAck, stateClosing, stateTimeWait:
		if n > 0 {
			n--
		}
	}
	return n, true
}
