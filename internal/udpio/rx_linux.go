package udpio

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// groBufSize is one UDP_GRO receive buffer: the largest coalesced packet
// the kernel hands up (64 KiB of payload).
const groBufSize = 65536

// groMaxSlots is how many coalesced packets one recvmmsg with GRO reads at
// first (each needs a groBufSize buffer; one packet holds up to 64
// datagrams, so 4 are up to 256 datagrams a call). 16 for every socket made
// each receiving socket hold 1 MiB, which took the server's soak test (200
// clients) past its memory bound. A socket whose reads keep filling every
// slot grows its slots up to groGrowSlots (see readGRO).
const groMaxSlots = 4

// groGrowSlots bounds that growth: 1 MiB of buffers, on the sockets that
// had a backlog only, and a quarter of the system calls of 4 slots.
const groGrowSlots = 16

// rxRing is the reader goroutine's recvmmsg state, reused by every
// ReadBatch, so receiving allocates nothing.
//
// Without GRO, slot i reads straight into the caller's msgs[i].Buf. With
// GRO, slots read into the ring's own buffers; each may hold several
// datagrams the kernel coalesced (the UDP_GRO control message gives their
// size), which ReadBatch copies out one Message per datagram, keeping what
// does not fit for the next call.
type rxRing struct {
	rc    syscall.RawConn
	hdrs  []unix.Mmsghdr
	iovs  []unix.Iovec
	names []unix.RawSockaddrInet6 // large enough for IPv4 too
	oob   []byte                  // oobSpace bytes per slot
	// The recvmmsg call's arguments and results, so that read (a method
	// value made once) needs no closure per call.
	k     int
	n     int
	errno syscall.Errno
	read  func(fd uintptr) bool
	zone  zoneCache

	gro  bool
	bufs [][]byte // GRO: one groBufSize buffer per slot in use
	// groK is how many GRO slots a read uses: groMaxSlots, doubled (up to
	// len(bufs), groGrowSlots) each time a read fills them all.
	groK int
	// GRO: the datagrams of the last recvmmsg not yet handed out: slots
	// cur..got-1, the current one from byte off.
	pend []groSlot
	cur  int
	got  int
	off  int
	// empty is when a read last returned fewer datagrams than it asked
	// for: the socket was empty then (Message.Arrived's bound).
	empty time.Time
}

// groSlot is one received (possibly coalesced) packet.
type groSlot struct {
	n       int // payload bytes received
	seg     int // datagram size; the last may be shorter
	trunc   bool
	addr    netip.AddrPort
	time    time.Time
	arrived time.Time
}

// zoneCache remembers the zone string of the last IPv6 scope id seen, so a
// link-local source does not allocate per datagram.
type zoneCache struct {
	id   uint32
	name string
}

func (z *zoneCache) get(id uint32) string {
	if id != z.id || z.name == "" {
		z.id, z.name = id, strconv.FormatUint(uint64(id), 10)
	}
	return z.name
}

// init sizes the ring for batches of size datagrams; gro says UDP_GRO is on.
func (r *rxRing) init(rc syscall.RawConn, size int, gro bool) {
	slots := size
	if gro {
		// The buffers (64 KiB each) come with the reads that use them:
		// many sockets only send (connect-back, reverse tests, iperf3
		// streams) and must not each hold a megabyte.
		slots = min(size, groGrowSlots)
		r.bufs = make([][]byte, slots)
		r.pend = make([]groSlot, slots)
		r.groK = min(size, groMaxSlots)
	}
	r.rc, r.gro = rc, gro
	r.hdrs = make([]unix.Mmsghdr, slots)
	r.iovs = make([]unix.Iovec, slots)
	r.names = make([]unix.RawSockaddrInet6, slots)
	r.oob = make([]byte, slots*oobSpace)
	r.read = r.recvmmsg
}

// recvmmsg is the RawConn.Read callback: one non-blocking recvmmsg of r.k
// slots. It returns false on EAGAIN so the poller waits for data.
func (r *rxRing) recvmmsg(fd uintptr) bool {
	n, _, e := unix.Syscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&r.hdrs[0])), uintptr(r.k),
		unix.MSG_DONTWAIT, 0, 0)
	if e == unix.EAGAIN || e == unix.EWOULDBLOCK {
		return false
	}
	r.n, r.errno = int(n), e
	return true
}

// receive runs one recvmmsg into the first k slots, whose buffers are set,
// and returns how many datagrams (or coalesced packets) arrived.
func (r *rxRing) receive(k int) (int, error) {
	for i := range k {
		h := &r.hdrs[i].Hdr
		h.Name = (*byte)(unsafe.Pointer(&r.names[i]))
		h.Namelen = unix.SizeofSockaddrInet6
		h.Iov = &r.iovs[i]
		h.SetIovlen(1)
		h.Control = &r.oob[i*oobSpace]
		h.SetControllen(oobSpace)
		h.Flags = 0
		r.hdrs[i].Len = 0
	}
	r.k, r.n, r.errno = k, 0, 0
	if err := r.rc.Read(r.read); err != nil {
		return 0, err
	}
	if r.errno != 0 {
		return 0, r.errno
	}
	return r.n, nil
}

// release drops the references to the caller's buffers.
func (r *rxRing) release(k int) {
	if r.gro {
		return
	}
	for i := range k {
		r.iovs[i].Base = nil
	}
}

// slot returns what the kernel said of slot i after a receive.
func (r *rxRing) slot(i int, now time.Time) (n int, trunc bool, addr netip.AddrPort, meta rxMeta) {
	h := &r.hdrs[i].Hdr
	n = int(r.hdrs[i].Len)
	trunc = h.Flags&unix.MSG_TRUNC != 0
	addr = r.sockaddr(&r.names[i], h.Namelen)
	if cl := int(h.Controllen); cl > 0 {
		meta = parseOOB(r.oob[i*oobSpace : i*oobSpace+min(cl, oobSpace)])
	}
	if meta.time.IsZero() {
		meta.time = now
	}
	return n, trunc, addr, meta
}

// sockaddr converts a received source address without allocating.
func (r *rxRing) sockaddr(sa *unix.RawSockaddrInet6, l uint32) netip.AddrPort {
	switch {
	case sa.Family == unix.AF_INET && l >= unix.SizeofSockaddrInet4:
		s4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		port := binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&s4.Port))[:])
		return netip.AddrPortFrom(netip.AddrFrom4(s4.Addr), port)
	case sa.Family == unix.AF_INET6 && l >= unix.SizeofSockaddrInet6:
		port := binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&sa.Port))[:])
		a := netip.AddrFrom16(sa.Addr)
		if a.Is4In6() {
			return netip.AddrPortFrom(a.Unmap(), port)
		}
		if sa.Scope_id != 0 {
			a = a.WithZone(r.zone.get(sa.Scope_id))
		}
		return netip.AddrPortFrom(a, port)
	}
	return netip.AddrPort{}
}

// ReadBatch receives up to min(len(msgs), batch size) datagrams with one
// recvmmsg; with GRO, it first hands out datagrams left from the last one.
func (c *batchConn) ReadBatch(msgs []Message) (int, error) {
	if len(msgs) == 0 {
		return 0, nil
	}
	if c.rx.gro {
		return c.readGRO(msgs)
	}
	rx := &c.rx
	k := min(len(msgs), len(rx.hdrs))
	for i := range k {
		b := msgs[i].Buf
		rx.iovs[i].Base = nil
		if len(b) > 0 {
			rx.iovs[i].Base = &b[0]
		}
		rx.iovs[i].SetLen(len(b))
	}
	n, err := rx.receive(k)
	now, read := readClock()
	if err != nil {
		rx.release(k)
		return 0, fmt.Errorf("udpio: recvmmsg: %w", err)
	}
	for i := range n {
		m := &msgs[i]
		var meta rxMeta
		m.N, m.Truncated, m.Addr, meta = rx.slot(i, now)
		m.N = min(m.N, len(m.Buf))
		m.Time, m.Arrived = meta.time, arrival(read, now, meta.time, rx.empty)
		if meta.hasDrops {
			c.noteDrops(uint64(meta.drops))
		}
	}
	if n < k {
		rx.empty = read
	}
	rx.release(k)
	return n, nil
}

// readGRO fills msgs from coalesced packets, one Message per datagram.
func (c *batchConn) readGRO(msgs []Message) (int, error) {
	rx := &c.rx
	if rx.cur >= rx.got {
		k := rx.groK
		for i := range k {
			if rx.bufs[i] == nil {
				rx.bufs[i] = make([]byte, groBufSize)
			}
			rx.iovs[i].Base = &rx.bufs[i][0]
			rx.iovs[i].SetLen(groBufSize)
		}
		n, err := rx.receive(k)
		now, read := readClock()
		if err != nil {
			return 0, fmt.Errorf("udpio: recvmmsg: %w", err)
		}
		if n == k && k < len(rx.bufs) {
			// Every slot filled: datagrams are waiting that the
			// kernel did not coalesce (many sources, none sending
			// with GSO, as a server with many clients sees). With 4
			// slots each such datagram would cost a quarter of a
			// system call, and a reader that loses the CPU at each
			// call falls seconds behind (TestGarbageSoak, 200
			// clients at load 20 on 2 cores).
			rx.groK = min(2*k, len(rx.bufs))
		}
		for i := range n {
			s := &rx.pend[i]
			var meta rxMeta
			s.n, s.trunc, s.addr, meta = rx.slot(i, now)
			s.n = min(s.n, groBufSize)
			s.time, s.arrived = meta.time, arrival(read, now, meta.time, rx.empty)
			s.seg = meta.groSize
			if s.seg <= 0 || s.seg > s.n {
				s.seg = s.n // not coalesced: one datagram
			}
			if meta.hasDrops {
				c.noteDrops(uint64(meta.drops))
			}
		}
		if n < k {
			rx.empty = read
		}
		rx.cur, rx.got, rx.off = 0, n, 0
	}
	out := 0
	for out < len(msgs) && rx.cur < rx.got {
		s := &rx.pend[rx.cur]
		end := min(rx.off+s.seg, s.n)
		m := &msgs[out]
		m.N = copy(m.Buf, rx.bufs[rx.cur][rx.off:end])
		// Truncated by the caller's buffer, or (the last datagram of
		// the packet) by the kernel.
		m.Truncated = m.N < end-rx.off || (s.trunc && end == s.n)
		m.Addr, m.Time, m.Arrived = s.addr, s.time, s.arrived
		out++
		rx.off = end
		if rx.off >= s.n {
			rx.cur++
			rx.off = 0
		}
	}
	return out, nil
}
