package udpio

import (
	"fmt"
	"net"
	"net/netip"
	"sync/atomic"
	"time"
)

// base holds what every Conn implementation shares.
type base struct {
	uc     *net.UDPConn
	local  netip.AddrPort
	remote netip.AddrPort
	caps   Capabilities
	// cmsgDrops is the largest cumulative drop count seen in an SO_RXQ_OVFL
	// control message. Only the reader goroutine stores it.
	cmsgDrops atomic.Uint64
	plat      platformState
}

func newBase(uc *net.UDPConn) *base {
	b := &base{uc: uc}
	// The local address stays as bound ([::] stays [::]).
	if ua, ok := uc.LocalAddr().(*net.UDPAddr); ok {
		b.local = ua.AddrPort()
	}
	if ra := uc.RemoteAddr(); ra != nil {
		b.remote = udpAddrPort(ra)
	}
	return b
}

func (b *base) SetReadDeadline(t time.Time) error {
	if err := b.uc.SetReadDeadline(t); err != nil {
		return fmt.Errorf("udpio: set read deadline: %w", err)
	}
	return nil
}

func (b *base) LocalAddr() netip.AddrPort  { return b.local }
func (b *base) RemoteAddr() netip.AddrPort { return b.remote }
func (b *base) Capabilities() Capabilities { return b.caps }

func (b *base) Drops() (uint64, bool) {
	if !b.caps.DropCounter {
		return 0, false
	}
	return max(b.cmsgDrops.Load(), b.plat.socketDrops(b.uc)), true
}

func (b *base) Close() error {
	if err := b.uc.Close(); err != nil {
		return fmt.Errorf("udpio: close: %w", err)
	}
	return nil
}

// noteDrops records a cumulative drop count from a control message.
func (b *base) noteDrops(n uint64) {
	if n > b.cmsgDrops.Load() {
		b.cmsgDrops.Store(n)
	}
}

// dest returns the address to pass to the kernel for a message with
// destination ap: the zero value on a connected socket.
func (b *base) dest(ap netip.AddrPort) (netip.AddrPort, error) {
	ap = unmap(ap)
	if !b.remote.IsValid() {
		if !ap.IsValid() {
			return ap, fmt.Errorf("udpio: write on an unconnected socket: no destination address")
		}
		return ap, nil
	}
	if ap.IsValid() && ap != b.remote {
		return netip.AddrPort{}, fmt.Errorf("udpio: write to %v: %w %v", ap, errWriteToConnected, b.remote)
	}
	return netip.AddrPort{}, nil
}

// rxMeta is what the control messages of one received datagram said.
type rxMeta struct {
	time     time.Time // zero when no kernel stamp was present
	drops    uint32    // cumulative drop count, valid when hasDrops
	hasDrops bool
	groSize  int // UDP_GRO: size of the coalesced datagrams; 0 when absent
}

// singleConn moves one datagram per call and system call through the
// standard library (recvmsg/sendmsg). It is the portable path and the Linux
// NoBatch path; on Linux it still reads the kernel's control messages.
type singleConn struct {
	*base
	oob []byte // reader-owned control message buffer
}

var _ Conn = (*singleConn)(nil)

func newSingleConn(b *base) *singleConn {
	return &singleConn{base: b, oob: make([]byte, oobSpace)}
}

// ReadBatch reads one datagram into msgs[0].
func (c *singleConn) ReadBatch(msgs []Message) (int, error) {
	if len(msgs) == 0 {
		return 0, nil
	}
	m := &msgs[0]
	n, oobn, flags, addr, err := c.uc.ReadMsgUDPAddrPort(m.Buf, c.oob)
	now, read := readClock()
	trunc, err := truncated(flags, err)
	if err != nil {
		return 0, fmt.Errorf("udpio: read: %w", err)
	}
	if trunc && n == 0 {
		n = len(m.Buf) // Windows reports truncation as an error and fills the buffer
	}
	m.N, m.Truncated, m.Addr, m.Time, m.Arrived = n, trunc, unmap(addr), now, read
	if oobn > 0 {
		meta := parseOOB(c.oob[:oobn])
		if !meta.time.IsZero() {
			// One datagram per read never tells an empty socket.
			m.Time, m.Arrived = meta.time, arrival(read, now, meta.time, time.Time{})
		}
		if meta.hasDrops {
			c.noteDrops(uint64(meta.drops))
		}
	}
	return 1, nil
}

// WriteBatch sends the datagrams one system call each.
func (c *singleConn) WriteBatch(msgs []Message) (int, error) {
	for i := range msgs {
		to, err := c.dest(msgs[i].Addr)
		if err != nil {
			return i, err
		}
		if _, _, err := c.uc.WriteMsgUDPAddrPort(msgs[i].Buf, nil, to); err != nil {
			return i, fmt.Errorf("udpio: send datagram %d of %d: %w", i+1, len(msgs), err)
		}
	}
	return len(msgs), nil
}

// sock gives ShareAddr and QueueEmpty the socket under any Conn of this
// package.
func (b *base) sock() *base { return b }
