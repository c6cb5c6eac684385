//go:build linux

package ping

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/internal/result"
)

// sysConn is an ICMP socket driven through its file descriptor with
// poll(2) rather than Go's network poller: a socket that asks for transmit
// timestamps reports each one as an error-queue event (POLLERR), which the
// network poller would hand a waiting read as an error. Reads get control
// messages (kernel receive timestamps); the send time is taken right
// before sendto and, where the kernel stamps transmissions, replaced by
// the kernel's time.
type sysConn struct {
	fd   int
	wake int // eventfd: Close makes it readable to end a waiting read
	info result.PingSocket
	v6   bool
	oob  []byte // the reader's
	eoob []byte // for error-queue reads; tx.mu guards it

	// use is held (read) by every call on fd and taken (write) by Close
	// before the descriptors are closed.
	use      sync.RWMutex
	closed   atomic.Bool
	deadline atomic.Int64 // read deadline, UnixNano; 0 = none

	tx txQueue
	// recvErr: ICMP errors about our echoes come through the error queue
	// (IP_RECVERR; unprivileged sockets, which are not handed the error
	// messages themselves). queued holds those read and not yet returned;
	// tx.mu guards it.
	recvErr bool
	queued  []Packet
}

// rcvBuf is the receive buffer asked for.
const rcvBuf = 4 << 20

// tsFlags asks for a software transmit timestamp when each echo request
// enters the host's queueing layer (SCM_TSTAMP_SCHED), identified by a
// per-send counter, without the packet. That is the stamp and not the one
// at the device (SCM_TSTAMP_SND): what a request waits in our own qdisc
// behind other traffic is latency the user feels (iputils counts it too),
// and a shaper on this host would otherwise hide its queue.
const tsFlags = unix.SOF_TIMESTAMPING_TX_SCHED | unix.SOF_TIMESTAMPING_SOFTWARE |
	unix.SOF_TIMESTAMPING_OPT_ID | unix.SOF_TIMESTAMPING_OPT_TSONLY

// OpenSystem opens an ICMP socket of the system: result.PingSocketRaw or
// result.PingSocketUnprivileged, IPv4 or IPv6. It asks for kernel receive
// (SO_TIMESTAMPNS) and transmit (SO_TIMESTAMPING) timestamps and falls
// back to user-space times, saying why, when the kernel refuses.
func OpenSystem(kind result.PingSocketKind, v6 bool) (Conn, error) {
	return openSystem(kind, v6, true, "")
}

// OpenSystemFrom is OpenSystem with the socket bound to source: an address
// of this host, or an interface by name (SO_BINDTODEVICE); "" binds to
// neither.
func OpenSystemFrom(kind result.PingSocketKind, v6 bool, source string) (Conn, error) {
	return openSystem(kind, v6, true, source)
}

// openSystem is OpenSystemFrom; filter false leaves a raw socket seeing
// every ICMP message (a test's stand-in responder reads echo requests).
func openSystem(kind result.PingSocketKind, v6, filter bool, source string) (Conn, error) {
	network, _ := networkFor(kind, v6)
	if network == "" {
		return nil, fmt.Errorf("opening icmp socket: unknown kind %q", kind)
	}
	fd, err := icmpSocket(kind, v6)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", network, err)
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("listening on %s: %w", network, os.NewSyscallError("eventfd", err))
	}
	c := &sysConn{fd: fd, wake: wake, v6: v6, oob: make([]byte, 512), eoob: make([]byte, 256)}
	c.info = result.PingSocket{Kind: kind, Network: network, RxTimestamps: result.PingTimestampKernel, TxTimestamps: result.PingTimestampKernel, DF: true}
	fail := func(what string, err error) (Conn, error) {
		c.Close()
		return nil, fmt.Errorf("opening %s: %s: %w", network, what, err)
	}
	src, err := bindSource(fd, v6, source)
	if err != nil {
		return fail("binding to "+source, err)
	}
	c.info.Source = source
	if kind == result.PingSocketUnprivileged {
		if c.info.ID, err = boundID(fd, v6, src); err != nil {
			return fail("binding", err)
		}
		level, opt := unix.IPPROTO_IP, unix.IP_RECVERR
		if v6 {
			level, opt = unix.IPPROTO_IPV6, unix.IPV6_RECVERR
		}
		c.recvErr = c.setInt(level, opt, 1) == nil
	}
	if kind == result.PingSocketRaw && src != nil {
		if _, err := boundID(fd, v6, src); err != nil {
			return fail("binding to "+source, err)
		}
	}
	if kind == result.PingSocketRaw && filter {
		// A raw ICMP socket is handed a copy of every ICMP message the host
		// receives, our own 65 KB echo requests on loopback included; the
		// kernel queues and wakes us for each before the reply is even
		// made. Let only what we read through (as iputils does).
		if err := rawICMPFilter(fd, v6); err != nil {
			return fail("setting the icmp filter", err)
		}
	}
	if err := c.setInt(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		c.info.RxTimestamps, c.info.RxTimestampsWhy = result.PingTimestampUser, err.Error()
	}
	if err := c.setInt(unix.SOL_SOCKET, unix.SO_TIMESTAMPING, tsFlags); err != nil {
		c.info.TxTimestamps, c.info.TxTimestampsWhy = result.PingTimestampUser, err.Error()
	}
	// A reassembled 65 KB reply takes about 100 KB of receive buffer (one
	// buffer per fragment): ask for room for many, and for the count of
	// what the socket drops when full. Both are best effort.
	if c.setInt(unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, rcvBuf) != nil {
		_ = c.setInt(unix.SOL_SOCKET, unix.SO_RCVBUF, rcvBuf)
	}
	c.info.CountsDrops = c.setInt(unix.SOL_SOCKET, unix.SO_RXQ_OVFL, 1) == nil
	// A send waits for socket buffer space at most this long.
	tv := unix.NsecToTimeval(int64(10 * time.Second))
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv); err != nil {
		return fail("setting the send timeout", err)
	}
	if err := c.SetDF(false); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// icmpSocket opens the socket: SOCK_RAW needs CAP_NET_RAW, SOCK_DGRAM
// needs the caller's group in net.ipv4.ping_group_range.
func icmpSocket(kind result.PingSocketKind, v6 bool) (int, error) {
	family, proto := unix.AF_INET, unix.IPPROTO_ICMP
	if v6 {
		family, proto = unix.AF_INET6, unix.IPPROTO_ICMPV6
	}
	typ := unix.SOCK_RAW
	if kind == result.PingSocketUnprivileged {
		typ = unix.SOCK_DGRAM
	}
	fd, err := unix.Socket(family, typ|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return -1, os.NewSyscallError("socket", err)
	}
	return fd, nil
}

// bindSource binds fd to source: an address (returned, for boundID), or an
// interface name. A raw socket is bound to the address here; an
// unprivileged one in boundID, which must bind exactly once.
func bindSource(fd int, v6 bool, source string) (net.IP, error) {
	if source == "" {
		return nil, nil
	}
	ip := net.ParseIP(source)
	if ip == nil {
		if err := unix.BindToDevice(fd, source); err != nil {
			return nil, os.NewSyscallError("setsockopt SO_BINDTODEVICE", err)
		}
		return nil, nil
	}
	if (ip.To4() == nil) != v6 {
		return nil, fmt.Errorf("%s is not an IPv%s address", source, map[bool]string{false: "4", true: "6"}[v6])
	}
	return ip, nil
}

// boundID binds an ICMP socket to src (nil: any address) and, for an
// unprivileged socket, an ephemeral "port", which the kernel then uses as
// the echo identifier, and returns it.
func boundID(fd int, v6 bool, src net.IP) (int, error) {
	var sa unix.Sockaddr = &unix.SockaddrInet4{}
	if v6 {
		a := &unix.SockaddrInet6{}
		copy(a.Addr[:], src.To16())
		sa = a
	} else {
		a := &unix.SockaddrInet4{}
		copy(a.Addr[:], src.To4())
		sa = a
	}
	if err := unix.Bind(fd, sa); err != nil {
		return 0, os.NewSyscallError("bind", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return 0, os.NewSyscallError("getsockname", err)
	}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return a.Port, nil
	case *unix.SockaddrInet6:
		return a.Port, nil
	}
	return 0, fmt.Errorf("getsockname gave %T", sa)
}

func networkFor(kind result.PingSocketKind, v6 bool) (network, addr string) {
	switch {
	case kind == result.PingSocketRaw && !v6:
		return "ip4:icmp", "0.0.0.0"
	case kind == result.PingSocketRaw && v6:
		return "ip6:ipv6-icmp", "::"
	case kind == result.PingSocketUnprivileged && !v6:
		return "udp4", "0.0.0.0"
	case kind == result.PingSocketUnprivileged && v6:
		return "udp6", "::"
	}
	return "", ""
}

// acquire takes the socket for one call; it fails once Close has begun.
func (c *sysConn) acquire() error {
	c.use.RLock()
	if c.closed.Load() {
		c.use.RUnlock()
		return net.ErrClosed
	}
	return nil
}

func (c *sysConn) release() { c.use.RUnlock() }

func (c *sysConn) setInt(level, opt, v int) error {
	if err := c.acquire(); err != nil {
		return err
	}
	defer c.release()
	if err := unix.SetsockoptInt(c.fd, level, opt, v); err != nil {
		return fmt.Errorf("setsockopt(%d, %d, %d): %w", level, opt, v, err)
	}
	return nil
}

// SetDF sets IP_MTU_DISCOVER to IP_PMTUDISC_DO (on) or IP_PMTUDISC_DONT
// (off) for IPv4, IPV6_DONTFRAG for IPv6.
func (c *sysConn) SetDF(on bool) error {
	if c.v6 {
		v := 0
		if on {
			v = 1
		}
		return c.setInt(unix.IPPROTO_IPV6, unix.IPV6_DONTFRAG, v)
	}
	v := unix.IP_PMTUDISC_DONT
	if on {
		v = unix.IP_PMTUDISC_DO
	}
	return c.setInt(unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, v)
}

// SetTTL sets IP_TTL for IPv4, IPV6_UNICAST_HOPS for IPv6.
func (c *sysConn) SetTTL(ttl int) error {
	if c.v6 {
		return c.setInt(unix.IPPROTO_IPV6, unix.IPV6_UNICAST_HOPS, ttl)
	}
	return c.setInt(unix.IPPROTO_IP, unix.IP_TTL, ttl)
}

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

// kernelTimestamp finds an SCM_TIMESTAMPNS control message (a struct
// timespec in native byte order: two longs) and returns its time.
func kernelTimestamp(oob []byte) (time.Time, bool) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}, false
	}
	for _, m := range msgs {
		if m.Header.Level != unix.SOL_SOCKET || m.Header.Type != unix.SCM_TIMESTAMPNS {
			continue
		}
		return decodeTimespec(m.Data)
	}
	return time.Time{}, false
}

// dropCount finds an SO_RXQ_OVFL control message: how many messages the
// socket has dropped since it was opened, for want of buffer space.
func dropCount(oob []byte) (uint32, bool) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return 0, false
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SO_RXQ_OVFL && len(m.Data) >= 4 {
			return binary.NativeEndian.Uint32(m.Data), true
		}
	}
	return 0, false
}

// parseQueuedError reads an ICMP error about one of our echo requests from
// an error-queue message: the extended error (origin ICMP or ICMP6: type,
// code, the MTU in ee_info, then the reporting host's address) and the
// data, which starts at the quoted echo request's header. Errors of local
// origin (a send refused at once) are not returned: the send call
// reported them.
func parseQueuedError(oob, data []byte, v6 bool) (Reply, net.IP, bool) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil || len(data) < 8 {
		return Reply{}, nil, false
	}
	echo, origin := byte(8), byte(unix.SO_EE_ORIGIN_ICMP)
	if v6 {
		echo, origin = 128, unix.SO_EE_ORIGIN_ICMP6
	}
	if data[0] != echo {
		return Reply{}, nil, false
	}
	for _, m := range msgs {
		if !(m.Header.Level == unix.SOL_IP && m.Header.Type == unix.IP_RECVERR) &&
			!(m.Header.Level == unix.SOL_IPV6 && m.Header.Type == unix.IPV6_RECVERR) {
			continue
		}
		d := m.Data
		if len(d) < 16 || d[4] != origin {
			continue
		}
		r := Reply{Kind: KindUnreachable, Type: int(d[5]), Code: int(d[6]),
			ID: int(binary.BigEndian.Uint16(data[4:])), Seq: int(binary.BigEndian.Uint16(data[6:]))}
		mtu := int(binary.NativeEndian.Uint32(d[8:]))
		if !v6 && r.Type == 3 && r.Code == 4 || v6 && r.Type == 2 {
			r.Kind, r.MTU = KindTooBig, mtu
		}
		return r, offender(d[16:]), true
	}
	return Reply{}, nil, false
}

// offender reads the address of the host that sent an ICMP error: the
// struct sockaddr_in or sockaddr_in6 after struct sock_extended_err.
func offender(sa []byte) net.IP {
	if len(sa) < 8 {
		return nil
	}
	switch binary.NativeEndian.Uint16(sa) {
	case unix.AF_INET:
		return net.IP(append([]byte(nil), sa[4:8]...))
	case unix.AF_INET6:
		if len(sa) >= 24 {
			return net.IP(append([]byte(nil), sa[8:24]...))
		}
	}
	return nil
}

// parseTxStamp reads a transmit timestamp from the control messages of an
// error-queue message: SCM_TIMESTAMPING (three timespecs, the first the
// software one) and the extended error (SO_EE_ORIGIN_TIMESTAMPING) that
// says which send; only queueing-layer stamps (SCM_TSTAMP_SCHED) count.
func parseTxStamp(oob []byte) (txStamp, bool) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return txStamp{}, false
	}
	var ts txStamp
	var haveTime, haveErr bool
	for _, m := range msgs {
		switch {
		case m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPING:
			if len(m.Data) == 0 || len(m.Data)%3 != 0 {
				continue
			}
			ts.at, haveTime = decodeTimespec(m.Data[:len(m.Data)/3])
		case m.Header.Level == unix.SOL_IP && m.Header.Type == unix.IP_RECVERR,
			m.Header.Level == unix.SOL_IPV6 && m.Header.Type == unix.IPV6_RECVERR:
			// struct sock_extended_err: errno u32, origin u8, type u8,
			// code u8, pad u8, info u32, data u32.
			d := m.Data
			if len(d) < 16 || d[4] != unix.SO_EE_ORIGIN_TIMESTAMPING {
				continue
			}
			if binary.NativeEndian.Uint32(d[8:]) != unix.SCM_TSTAMP_SCHED {
				continue
			}
			ts.n, haveErr = binary.NativeEndian.Uint32(d[12:]), true
		}
	}
	if !haveTime || !haveErr || ts.at.Equal(time.Unix(0, 0)) {
		return txStamp{}, false
	}
	return ts, true
}

func decodeTimespec(d []byte) (time.Time, bool) {
	switch len(d) {
	case 16:
		return time.Unix(int64(binary.NativeEndian.Uint64(d)), int64(binary.NativeEndian.Uint64(d[8:]))), true
	case 8:
		return time.Unix(int64(int32(binary.NativeEndian.Uint32(d))), int64(int32(binary.NativeEndian.Uint32(d[4:])))), true
	}
	return time.Time{}, false
}

// SetReadDeadline sets when a waiting ReadPacket gives up (with an error
// matching os.ErrDeadlineExceeded); the zero time means never. A message
// already queued is still read after the deadline.
func (c *sysConn) SetReadDeadline(t time.Time) error {
	var v int64
	if !t.IsZero() {
		v = t.UnixNano()
	}
	c.deadline.Store(v)
	return nil
}

func (c *sysConn) Info() result.PingSocket { return c.info }

// Close ends a waiting ReadPacket, waits for calls in progress to return
// and closes the socket.
func (c *sysConn) Close() error {
	if c.closed.Swap(true) {
		return net.ErrClosed
	}
	one := []byte{1, 0, 0, 0, 0, 0, 0, 0}
	_, _ = unix.Write(c.wake, one)
	c.use.Lock()
	defer c.use.Unlock()
	err := unix.Close(c.fd)
	if werr := unix.Close(c.wake); err == nil {
		err = werr
	}
	if err != nil {
		return fmt.Errorf("closing icmp socket: %w", os.NewSyscallError("close", err))
	}
	return nil
}

// RouteMTU returns the path MTU the kernel would use towards dst (the
// route's interface MTU, or a smaller learnt path MTU). It connects a UDP
// socket, which sends nothing, and reads IP_MTU / IPV6_MTU.
func RouteMTU(dst net.IP) (int, error) {
	network, level, opt := "udp4", unix.IPPROTO_IP, unix.IP_MTU
	if dst.To4() == nil {
		network, level, opt = "udp6", unix.IPPROTO_IPV6, unix.IPV6_MTU
	}
	uc, err := net.DialUDP(network, nil, &net.UDPAddr{IP: dst, Port: 9})
	if err != nil {
		return 0, fmt.Errorf("finding the route to %v: %w", dst, err)
	}
	defer uc.Close()
	rc, err := uc.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("finding the path mtu to %v: %w", dst, err)
	}
	var mtu int
	var gerr error
	if err := rc.Control(func(fd uintptr) { mtu, gerr = unix.GetsockoptInt(int(fd), level, opt) }); err != nil {
		return 0, fmt.Errorf("finding the path mtu to %v: %w", dst, err)
	}
	if gerr != nil {
		return 0, fmt.Errorf("finding the path mtu to %v: %w", dst, gerr)
	}
	return mtu, nil
}

// rawICMPFilter makes a raw socket pass only echo replies and the errors
// that answer a probe (unreachable/too big, time exceeded). A set bit in
// either filter blocks that message type.
func rawICMPFilter(fd int, v6 bool) error {
	if v6 {
		var f unix.ICMPv6Filter
		for i := range f.Data {
			f.Data[i] = ^uint32(0)
		}
		for _, t := range []uint8{129, 1, 2, 3} { // echo reply, unreachable, packet too big, time exceeded
			f.Data[t>>5] &^= 1 << (t & 31)
		}
		return unix.SetsockoptICMPv6Filter(fd, unix.IPPROTO_ICMPV6, unix.ICMPV6_FILTER, &f)
	}
	pass := uint32(1<<0 | 1<<3 | 1<<11) // echo reply, unreachable, time exceeded
	return unix.SetsockoptInt(fd, unix.SOL_RAW, unix.ICMP_FILTER, int(int32(^pass)))
}
