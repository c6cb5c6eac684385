//go:build linux

package ping

import (
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/internal/result"

	"golang.org/x/sys/unix"
)

func (c *sysConn) WriteTo(b []byte, dst net.IP) (Sent, error) {
	sa, err := sockaddr(dst, c.v6)
	if err != nil {
		return Sent{}, err
	}
	if err := c.acquire(); err != nil {
		return Sent{}, fmt.Errorf("sending echo to %v: %w", dst, err)
	}
	defer c.release()
	stamped := c.info.TxTimestamps == result.PingTimestampKernel
	s := Sent{At: time.Now()}
	err = unix.Sendto(c.fd, b, 0, sa)
	if err != nil {
		if stamped {
			c.resetTxCounter()
		}
		return s, fmt.Errorf("sending echo to %v: %w", dst, os.NewSyscallError("sendto", err))
	}
	if stamped {
		c.tx.mu.Lock()
		s.key, s.stamped = c.tx.sent(), true
		c.tx.mu.Unlock()
	}
	return s, nil
}

// resetTxCounter restarts the kernel's timestamp counter after a failed
// send, which may or may not have used a value of it (kernels before 6.4
// used one on EMSGSIZE). The counter starts again at 0 when the OPT_ID
// flag is switched off and on; the stamps already queued keep the old
// generation.
func (c *sysConn) resetTxCounter() {
	c.tx.mu.Lock()
	defer c.tx.mu.Unlock()
	c.drainErrQueue()
	err := unix.SetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPING, tsFlags&^unix.SOF_TIMESTAMPING_OPT_ID)
	if err == nil {
		err = unix.SetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPING, tsFlags)
	}
	if err != nil {
		c.info.TxTimestamps, c.info.TxTimestampsWhy = result.PingTimestampUser, fmt.Sprintf("resetting the timestamp counter: %v", err)
	}
	c.tx.reset()
}

// TxTime returns the kernel's transmit timestamp of s (see TxStamper).
func (c *sysConn) TxTime(s Sent) (time.Time, bool) {
	if !s.stamped || c.acquire() != nil {
		return time.Time{}, false
	}
	defer c.release()
	c.tx.mu.Lock()
	defer c.tx.mu.Unlock()
	c.drainErrQueue()
	return c.tx.take(s)
}

// drainErrQueue moves every timestamp waiting on the socket's error queue
// into c.tx, and the ICMP errors about our echoes into c.queued; other
// error-queue messages are dropped. c.tx.mu is held.
func (c *sysConn) drainErrQueue() {
	var buf [64]byte
	oob := c.eoob
	for range 256 {
		n, oobn, _, _, err := unix.Recvmsg(c.fd, buf[:], oob, unix.MSG_ERRQUEUE|unix.MSG_DONTWAIT)
		if err != nil {
			return
		}
		if ts, ok := parseTxStamp(oob[:oobn]); ok {
			c.tx.add(ts)
			continue
		}
		if !c.recvErr || len(c.queued) >= 1024 {
			continue
		}
		if r, from, ok := parseQueuedError(oob[:oobn], buf[:n], c.v6); ok {
			c.queued = append(c.queued, Packet{From: from, At: time.Now(), Reply: &r})
		}
	}
}

// takeQueued returns an ICMP error read from the error queue and not yet
// returned, if there is one.
func (c *sysConn) takeQueued() (Packet, bool) {
	c.tx.mu.Lock()
	defer c.tx.mu.Unlock()
	if len(c.queued) == 0 {
		return Packet{}, false
	}
	p := c.queued[0]
	c.queued = c.queued[1:]
	return p, true
}

func (c *sysConn) ReadPacket(buf []byte) (Packet, error) {
	if err := c.acquire(); err != nil {
		return Packet{}, fmt.Errorf("reading icmp: %w", err)
	}
	defer c.release()
	for {
		if p, ok := c.takeQueued(); ok {
			return p, nil
		}
		n, oobn, flags, from, err := c.recv(buf)
		if err != nil {
			return Packet{}, fmt.Errorf("reading icmp: %w", err)
		}
		if n < 0 {
			continue
		}
		at := time.Now()
		if flags&unix.MSG_TRUNC != 0 {
			return Packet{}, fmt.Errorf("reading icmp: message truncated to %d bytes", n)
		}
		p := Packet{Data: buf[:n], At: at}
		if ts, ok := kernelTimestamp(c.oob[:oobn]); ok {
			p.At, p.Kernel = ts, true
		}
		p.Drops, p.HasDrops = dropCount(c.oob[:oobn])
		switch sa := from.(type) {
		case *unix.SockaddrInet4:
			p.From = net.IP(append([]byte(nil), sa.Addr[:]...))
		case *unix.SockaddrInet6:
			p.From = net.IP(append([]byte(nil), sa.Addr[:]...))
		}
		if c.info.Kind == result.PingSocketRaw && !c.v6 {
			if p.Data, err = StripIPv4Header(p.Data); err != nil {
				return Packet{}, fmt.Errorf("reading icmp: %w", err)
			}
		}
		return p, nil
	}
}

// recv waits for a message and reads it; n < 0 means nothing was read
// (the wait ended on an error-queue event, now handled) and the caller
// waits again. A pending socket error (an ICMP error about an earlier
// send) is returned as the error.
func (c *sysConn) recv(buf []byte) (n, oobn, flags int, from unix.Sockaddr, err error) {
	fds := []unix.PollFd{{Fd: int32(c.fd), Events: unix.POLLIN}, {Fd: int32(c.wake), Events: unix.POLLIN}}
	wait, expired := 1000, false // without a deadline, look again now and then
	if dl := c.deadline.Load(); dl != 0 {
		left := time.Until(time.Unix(0, dl))
		if left <= 0 {
			wait, expired = 0, true // still take what is queued
		} else if ms := int((left + time.Millisecond - 1) / time.Millisecond); ms < wait {
			wait = ms
		}
	}
	ready, err := unix.Poll(fds, wait)
	switch {
	case err == unix.EINTR:
		return -1, 0, 0, nil, nil
	case err != nil:
		return 0, 0, 0, nil, os.NewSyscallError("poll", err)
	case ready == 0 && expired:
		return 0, 0, 0, nil, os.ErrDeadlineExceeded
	}
	if fds[1].Revents != 0 || c.closed.Load() {
		return 0, 0, 0, nil, net.ErrClosed
	}
	ev := fds[0].Revents
	if ev&unix.POLLIN != 0 {
		n, oobn, flags, from, err = unix.Recvmsg(c.fd, buf, c.oob, unix.MSG_DONTWAIT)
		if err == unix.EAGAIN || err == unix.EINTR {
			return -1, 0, 0, nil, nil
		}
		if err != nil {
			return 0, 0, 0, nil, os.NewSyscallError("recvmsg", err)
		}
		return n, oobn, flags, from, nil
	}
	if ev&unix.POLLERR != 0 {
		c.tx.mu.Lock()
		c.drainErrQueue()
		c.tx.mu.Unlock()
		// POLLERR also stands for a pending socket error, which only
		// reading SO_ERROR clears.
		if e, gerr := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR); gerr == nil && e != 0 {
			return 0, 0, 0, nil, syscall.Errno(e)
		}
	}
	if ev&unix.POLLNVAL != 0 {
		return 0, 0, 0, nil, net.ErrClosed
	}
	return -1, 0, 0, nil, nil
}

func sockaddr(ip net.IP, v6 bool) (unix.Sockaddr, error) {
	if v6 {
		a := ip.To16()
		if a == nil || ip.To4() != nil {
			return nil, fmt.Errorf("%v is not an IPv6 address", ip)
		}
		sa := &unix.SockaddrInet6{}
		copy(sa.Addr[:], a)
		return sa, nil
	}
	a := ip.To4()
	if a == nil {
		return nil, fmt.Errorf("%v is not an IPv4 address", ip)
	}
	sa := &unix.SockaddrInet4{}
	copy(sa.Addr[:], a)
	return sa, nil
}
