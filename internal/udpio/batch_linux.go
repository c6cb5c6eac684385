package udpio

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
	"golang.org/x/sys/unix"
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
	c := newBatchConn(b, opt.batchSize())
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
	rx rxBatch
	tx txBatch
	// gso is the seam for UDP_SEGMENT (send) and UDP_GRO (receive) offload,
	// see gso_linux.go. It is off: every datagram is its own mmsghdr.
	gso gsoState
}

var _ Conn = (*batchConn)(nil)

// rxBatch is reused by every ReadBatch: no allocation per call beyond the
// source address x/net allocates per received datagram.
type rxBatch struct {
	msgs []ipv4.Message
	iov  [][1][]byte
	oob  []byte // oobSpace bytes per slot
}

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
	c.rx = rxBatch{
		msgs: make([]ipv4.Message, size),
		iov:  make([][1][]byte, size),
		oob:  make([]byte, size*oobSpace),
	}
	c.tx = txBatch{
		msgs:  make([]ipv4.Message, size),
		iov:   make([][1][]byte, size),
		addrs: make([]net.UDPAddr, size),
		ips:   make([][16]byte, size),
	}
	return c
}

// ReadBatch receives up to min(len(msgs), batch size) datagrams with one
// recvmmsg.
func (c *batchConn) ReadBatch(msgs []Message) (int, error) {
	k := min(len(msgs), len(c.rx.msgs))
	if k == 0 {
		return 0, nil
	}
	rx := &c.rx
	for i := range k {
		rx.iov[i][0] = msgs[i].Buf
		rx.msgs[i].Buffers = rx.iov[i][:]
		rx.msgs[i].OOB = rx.oob[i*oobSpace : (i+1)*oobSpace : (i+1)*oobSpace]
		rx.msgs[i].Addr = nil
	}
	n, err := c.xc.ReadBatch(rx.msgs[:k], 0)
	now := wallNow()
	if err != nil && n <= 0 {
		c.releaseRx(k)
		return 0, fmt.Errorf("udpio: recvmmsg: %w", err)
	}
	for i := range n {
		c.fill(&msgs[i], &rx.msgs[i], now)
	}
	c.releaseRx(k)
	return n, nil
}

// fill copies one received datagram's metadata into m.
func (c *batchConn) fill(m *Message, xm *ipv4.Message, now time.Time) {
	m.N = xm.N
	m.Truncated = xm.Flags&unix.MSG_TRUNC != 0
	m.Addr = udpAddrPort(xm.Addr)
	m.Time = now
	if xm.NN == 0 {
		return
	}
	meta := parseOOB(xm.OOB[:xm.NN])
	if !meta.time.IsZero() {
		m.Time = meta.time
	}
	if meta.hasDrops {
		c.noteDrops(uint64(meta.drops))
	}
}

// releaseRx drops references to the caller's buffers and x/net's addresses.
func (c *batchConn) releaseRx(k int) {
	for i := range k {
		c.rx.iov[i][0] = nil
		c.rx.msgs[i].Buffers = nil
		c.rx.msgs[i].Addr = nil
	}
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
