package udpio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

const (
	// gsoMaxSegments caps the datagrams in one UDP_SEGMENT send
	// (UDP_MAX_SEGMENTS is 64 on older kernels).
	gsoMaxSegments = 64
	// gsoMaxBytes caps the payload of one UDP_SEGMENT send: the largest
	// IPv4 UDP payload.
	gsoMaxBytes = 65507
)

// gsoState is UDP generic segmentation offload on send (UDP_SEGMENT). Its
// slices belong to the writer goroutine.
//
// Receive offload (UDP_GRO) is in rx_linux.go.
type gsoState struct {
	active atomic.Bool // requested, probed, and not refused since
	iov    [][]byte    // flat iovec backing: up to gsoMaxSegments per slot
	oob    []byte      // one UDP_SEGMENT cmsg per slot
	segs   []int       // datagrams in each slot of the current sendmmsg
	supers atomic.Uint64
}

// init probes UDP_SEGMENT on the socket and allocates the writer's buffers.
func (g *gsoState) init(uc *net.UDPConn, size int) {
	rc, err := uc.SyscallConn()
	if err != nil {
		return
	}
	var perr error
	if err := rc.Control(func(fd uintptr) {
		_, perr = unix.GetsockoptInt(int(fd), unix.IPPROTO_UDP, unix.UDP_SEGMENT)
	}); err != nil || perr != nil {
		return
	}
	g.iov = make([][]byte, size*gsoMaxSegments)
	g.oob = make([]byte, size*unix.CmsgSpace(2))
	g.segs = make([]int, size)
	for i := range size {
		putSegmentCmsg(g.oob[i*unix.CmsgSpace(2):], 0)
	}
	g.active.Store(true)
}

// putSegmentCmsg writes a SOL_UDP/UDP_SEGMENT cmsg carrying segment size seg.
func putSegmentCmsg(b []byte, seg uint16) {
	h := (*unix.Cmsghdr)(unsafePointerOf(b))
	h.Level, h.Type = unix.SOL_UDP, unix.UDP_SEGMENT
	h.SetLen(unix.CmsgLen(2))
	binary.NativeEndian.PutUint16(b[unix.CmsgLen(0):], seg)
}

// gsoRun returns how many messages from the start of msgs go into one
// segmented send: same destination, same length as the first, except that
// the last may be shorter; at most gsoMaxSegments and gsoMaxBytes.
func gsoRun(msgs []Message) int {
	if len(msgs) == 0 {
		return 0
	}
	seg := len(msgs[0].Buf)
	if seg == 0 || seg > gsoMaxBytes/2 {
		return 1
	}
	dst := unmap(msgs[0].Addr)
	total := seg
	n := 1
	for n < len(msgs) && n < gsoMaxSegments {
		l := len(msgs[n].Buf)
		if l == 0 || l > seg || total+l > gsoMaxBytes || unmap(msgs[n].Addr) != dst {
			break
		}
		total += l
		n++
		if l < seg {
			break
		}
	}
	return n
}

// packGSO fills up to batch-size mmsghdrs from msgs, each one run. It
// returns the mmsghdrs filled, the messages they hold, and the destination
// error that stopped it, if any.
func (c *batchConn) packGSO(msgs []Message) (slots, used int, err error) {
	g, tx := &c.gso, &c.tx
	space := unix.CmsgSpace(2)
	for slots < len(tx.msgs) && used < len(msgs) {
		to, err := c.dest(msgs[used].Addr)
		if err != nil {
			return slots, used, err
		}
		run := gsoRun(msgs[used:])
		iov := g.iov[slots*gsoMaxSegments : slots*gsoMaxSegments+run]
		for j := range run {
			iov[j] = msgs[used+j].Buf
		}
		tx.msgs[slots].Buffers = iov
		tx.msgs[slots].OOB = nil
		if run > 1 {
			oob := g.oob[slots*space : (slots+1)*space]
			binary.NativeEndian.PutUint16(oob[unix.CmsgLen(0):], uint16(len(msgs[used].Buf)))
			tx.msgs[slots].OOB = oob
		}
		c.setAddr(slots, to)
		g.segs[slots] = run
		slots++
		used += run
	}
	return slots, used, nil
}

// writeGSO sends msgs as runs of segmented datagrams.
func (c *batchConn) writeGSO(msgs []Message) (int, error) {
	sent := 0
	for sent < len(msgs) {
		slots, _, perr := c.packGSO(msgs[sent:])
		n, err := 0, error(nil)
		if slots > 0 {
			n, err = c.xc.WriteBatch(c.tx.msgs[:slots], 0)
		}
		for i := range max(n, 0) {
			sent += c.gso.segs[i]
			if c.gso.segs[i] > 1 {
				c.gso.supers.Add(1)
			}
		}
		c.releaseGSO(slots)
		switch {
		case err != nil && (errors.Is(err, unix.EIO) || errors.Is(err, unix.EINVAL)) && c.gso.segs[max(n, 0)] > 1:
			// The kernel refused segmentation: go on without it.
			c.gso.active.Store(false)
			more, err := c.writePlain(msgs[sent:])
			return sent + more, err
		case err != nil:
			return sent, fmt.Errorf("udpio: sendmmsg with UDP_SEGMENT (%d of %d sent): %w", sent, len(msgs), err)
		case perr != nil:
			return sent, perr
		case n <= 0:
			return sent, fmt.Errorf("udpio: %w (%d of %d sent)", errNoProgress, sent, len(msgs))
		}
	}
	return sent, nil
}

// releaseGSO drops references to the caller's buffers.
func (c *batchConn) releaseGSO(slots int) {
	for i := range slots {
		clear(c.gso.iov[i*gsoMaxSegments : i*gsoMaxSegments+c.gso.segs[i]])
		c.tx.msgs[i].Buffers = nil
		c.tx.msgs[i].OOB = nil
	}
}
