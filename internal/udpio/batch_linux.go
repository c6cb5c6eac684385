package udpio

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// The x/net batch message type is the same for both families.
var _ ipv6.Message = ipv4.Message{}

// batcher is the part of *ipv4.PacketConn and *ipv6.PacketConn used here.
type batcher interface {
	ReadBatch(ms []ipv4.Message, flags int) (int, error)
	WriteBatch(ms []ipv4.Message, flags int) (int, error)
}

// errNoProgress means sendmmsg returned 0 datagrams sent and no error.
var errNoProgress = errors.New("sendmmsg sent nothing")

func newConn(uc *net.UDPConn, opt Options) (Conn, error) {
	b := newBase(uc)
	if err := setupSocket(uc, opt, b); err != nil {
		return nil, err
	}
	if opt.NoBatch {
		return newSingleConn(b), nil
	}
	rc, err := uc.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("udpio: raw socket: %w", err)
	}
	c := newBatchConn(b, opt.batchSize())
	c.rx.init(rc, opt.batchSize(), b.caps.GRO)
	if opt.GSO {
		c.gso.init(b.uc, opt.batchSize())
	}
	return c, nil
}

// batchConn moves up to size datagrams per recvmmsg/sendmmsg. Its rx state
// belongs to the reader goroutine and its tx state to the writer goroutine.
type batchConn struct {
	*base
	xc batcher
	rx rxRing
	tx txBatch
	// gso is UDP_SEGMENT send offload (gso_linux.go); off unless
	// Options.GSO asked for it and the kernel has it. UDP_GRO receive
	// offload lives in rx (rx_linux.go).
	gso gsoState
}

var _ Conn = (*batchConn)(nil)

// txBatch is reused by every WriteBatch: the destination addresses live in
// addrs/ips, so sending allocates nothing.
type txBatch struct {
	msgs  []ipv4.Message
	iov   [][1][]byte
	addrs []net.UDPAddr
	ips   [][16]byte
}

func newBatchConn(b *base, size int) *batchConn {
	c := &batchConn{base: b}
	c.caps.Batch = true
	if b.local.Addr().Is4() {
		c.xc = ipv4.NewPacketConn(b.uc)
	} else {
		c.xc = ipv6.NewPacketConn(b.uc)
	}
	c.tx = txBatch{
		msgs:  make([]ipv4.Message, size),
		iov:   make([][1][]byte, size),
		addrs: make([]net.UDPAddr, size),
		ips:   make([][16]byte, size),
	}
	return c
}

// WriteBatch sends all of msgs, batch size datagrams per sendmmsg (with
// GSO, batch size groups of up to gsoMaxSegments datagrams). A message with
// an unusable destination is an error after the ones before it are sent.
func (c *batchConn) WriteBatch(msgs []Message) (int, error) {
	if c.gso.active.Load() {
		return c.writeGSO(msgs)
	}
	return c.writePlain(msgs)
}

// writePlain sends one datagram per mmsghdr.
func (c *batchConn) writePlain(msgs []Message) (int, error) {
	sent := 0
	for sent < len(msgs) {
		k, perr := c.packTx(msgs[sent:min(len(msgs), sent+len(c.tx.msgs))])
		n, err := 0, error(nil)
		if k > 0 {
			n, err = c.xc.WriteBatch(c.tx.msgs[:k], 0)
		}
		c.releaseTx(k)
		sent += max(n, 0)
		switch {
		case err != nil:
			return sent, fmt.Errorf("udpio: sendmmsg (%d of %d sent): %w", sent, len(msgs), err)
		case perr != nil:
			return sent, perr
		case n <= 0:
			return sent, fmt.Errorf("udpio: %w (%d of %d sent)", errNoProgress, sent, len(msgs))
		}
	}
	return sent, nil
}

// packTx fills the reusable x/net messages for msgs, stopping at the first
// message with an unusable destination. It returns how many it filled.
func (c *batchConn) packTx(msgs []Message) (int, error) {
	tx := &c.tx
	for i := range msgs {
		to, err := c.dest(msgs[i].Addr)
		if err != nil {
			return i, err
		}
		tx.iov[i][0] = msgs[i].Buf
		tx.msgs[i].Buffers = tx.iov[i][:]
		tx.msgs[i].OOB = nil
		c.setAddr(i, to)
	}
	return len(msgs), nil
}

// setAddr points mmsghdr slot i at destination to (nil when zero) without
// allocating.
func (c *batchConn) setAddr(i int, to netip.AddrPort) {
	tx := &c.tx
	tx.msgs[i].Addr = nil
	if to.IsValid() {
		ua := &tx.addrs[i]
		ua.IP = ipInto(&tx.ips[i], to.Addr())
		ua.Port = int(to.Port())
		ua.Zone = to.Addr().Zone()
		tx.msgs[i].Addr = ua
	}
}

// Capabilities reports GSO as currently in use: it goes false if the kernel
// refused a segmented send.
func (c *batchConn) Capabilities() Capabilities {
	caps := c.caps
	caps.GSO = c.gso.active.Load()
	return caps
}

func (c *batchConn) releaseTx(k int) {
	for i := range k {
		c.tx.iov[i][0] = nil
		c.tx.msgs[i].Buffers = nil
		c.tx.msgs[i].OOB = nil
	}
}

// ipInto writes a (already unmapped) into buf and returns it as a net.IP
// without allocating: 4 bytes for IPv4, 16 for IPv6.
func ipInto(buf *[16]byte, a netip.Addr) net.IP {
	if a.Is4() {
		v := a.As4()
		copy(buf[:4], v[:])
		return buf[:4]
	}
	*buf = a.As16()
	return buf[:]
}
