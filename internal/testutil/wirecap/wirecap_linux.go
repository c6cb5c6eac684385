package wirecap

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/udpio"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// readBuf is the size of one read: more than the SnapLen bytes the filter
// keeps of a packet, so a read is never cut short; Stats.Truncated counts
// any that still were.
const readBuf = 4096

// Capture is a running capture on one interface.
type Capture struct {
	fd   int
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	pkts []Packet
	st   Stats
}

// Start captures the IPv4 and IPv6 packets on the interface named ifname
// ("lo") whose source or destination port is one of ports (all packets
// when none is given); it skips t when not root. The port filter runs in
// the kernel (classic BPF), so other traffic on a busy loopback cannot
// crowd the test's packets out of the socket's buffer. Every packet that
// passes the filter after Start returns is queued in the kernel until read,
// however late the reading goroutine runs. Stop it with Stop; t's cleanup
// stops it too.
func Start(t testing.TB, ifname string, ports ...uint16) *Capture {
	t.Helper()
	if unix.Geteuid() != 0 {
		t.Skip("capturing packets needs root (AF_PACKET)")
	}
	c, err := Open(ifname, ports...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	return c
}

// Open is Start without a test: it returns what went wrong instead of
// failing one, so that it may run where a test cannot stop (inside a
// lab host's Do), and the caller stops the capture. The socket stays in
// the network namespace of the thread that opened it.
func Open(ifname string, ports ...uint16) (*Capture, error) {
	ifi, err := net.InterfaceByName(ifname)
	if err != nil {
		return nil, fmt.Errorf("wirecap: interface %s: %w", ifname, err)
	}
	const ethPAll = 0x0003
	// Protocol 0: the socket receives nothing until it is bound, after
	// the filter is in place.
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("wirecap: packet socket: %w", err)
	}
	if err := attachPortFilter(fd, ports); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("wirecap: port filter: %w", err)
	}
	// Room for a long burst of the test's own packets (root may exceed
	// rmem_max). The kernel charges a queued packet its whole original size
	// (up to 64 KiB on lo) although it keeps only SnapLen bytes of it, so
	// the budget is large while the memory held stays small: a reader that
	// runs late on a busy machine finds its packets queued, not dropped.
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 1<<30)
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(ethPAll), Ifindex: ifi.Index}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("wirecap: bind to %s: %w", ifname, err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("wirecap: receive stamps: %w", err)
	}
	tv := unix.NsecToTimeval((50 * time.Millisecond).Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("wirecap: read timeout: %w", err)
	}
	// Reading the statistics resets them: start from zero.
	_, _ = packetStats(fd)
	c := &Capture{fd: fd, stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c, nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// run reads until Stop, then reads on without waiting until the socket's
// queue is empty: a reader that ran late on a busy machine must not lose
// the packets the kernel has already queued for it. On loopback each packet
// passes twice (out and in); only the incoming copy is kept.
func (c *Capture) run() {
	defer close(c.done)
	buf := make([]byte, readBuf)
	oob := make([]byte, unix.CmsgSpace(16))
	stopping := false
	for {
		if !stopping {
			select {
			case <-c.stop:
				stopping = true
			default:
			}
		}
		flags := 0
		if stopping {
			flags = unix.MSG_DONTWAIT
		}
		n, oobn, _, from, err := unix.Recvmsg(c.fd, buf, oob, flags|unix.MSG_TRUNC)
		if err != nil {
			if stopping && (errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EWOULDBLOCK)) {
				return // queue drained
			}
			continue // timeout or EINTR: check stop again
		}
		at, _ := udpio.KernelRxTime(oob[:oobn])
		c.keep(buf, n, from, at, stopping)
	}
}

// keep parses and stores one read of n bytes (n beyond buf: cut short).
func (c *Capture) keep(buf []byte, n int, from unix.Sockaddr, at time.Time, drained bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if drained {
		c.st.Drained++
	}
	if n > len(buf) {
		c.st.Truncated++
		return
	}
	if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
		return
	}
	p, ok := Parse(buf[:n])
	if !ok {
		c.st.Unparsed++
		return
	}
	p.At = at
	if len(c.pkts) >= MaxPackets {
		c.st.OverMax++
		return
	}
	c.pkts = append(c.pkts, p)
}

// Packets returns a copy of the packets kept so far, while the capture
// runs.
func (c *Capture) Packets() []Packet {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Packet(nil), c.pkts...)
}

// Wait waits until done, given the packets kept so far, returns true, or
// until timeout; it reports whether done did. Packets reach the capture
// through the kernel's receive path, which on a loaded machine can run
// well after the program that sent them has finished: a test waits for the
// packets it needs rather than stopping at once.
func (c *Capture) Wait(timeout time.Duration, done func([]Packet) bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		c.mu.Lock()
		ok := done(c.pkts)
		c.mu.Unlock()
		if ok {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-c.done:
			c.mu.Lock()
			ok := done(c.pkts)
			c.mu.Unlock()
			return ok
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Stop ends the capture, after reading every packet already queued for it,
// and returns the packets seen; later calls return the same packets.
func (c *Capture) Stop() []Packet {
	select {
	case <-c.stop:
	default:
		close(c.stop)
		<-c.done
		drops, err := packetStats(c.fd)
		c.mu.Lock()
		if err == nil {
			c.st.KernelDrops = drops
		} else {
			c.st.StatsErr = err.Error()
		}
		c.mu.Unlock()
		unix.Close(c.fd)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pkts
}

// Stats says what a stopped capture may have missed.
func (c *Capture) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.st
}

// packetStats reads (and so resets) the socket's PACKET_STATISTICS: the
// packets the kernel dropped because the capture's queue was full.
func packetStats(fd int) (drops uint32, err error) {
	st, err := unix.GetsockoptTpacketStats(fd, unix.SOL_PACKET, unix.PACKET_STATISTICS)
	if err != nil {
		return 0, err
	}
	return st.Drops, nil
}

// attachPortFilter lets through only packets whose TCP/UDP source or
// destination port is one of ports (all packets when there are none): IPv4
// with its header length from the IHL field, IPv6 without extension
// headers. It keeps SnapLen bytes of each.
func attachPortFilter(fd int, ports []uint16) error {
	if len(ports) == 0 {
		return attach(fd, []bpf.Instruction{bpf.RetConstant{Val: SnapLen}})
	}
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: 0, Size: 1},
		bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: 0xf0},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0x60, SkipTrue: 2},
		bpf.LoadMemShift{Off: 0}, // IPv4: X = header length
		bpf.Jump{Skip: 1},
		bpf.LoadConstant{Dst: bpf.RegX, Val: 40}, // IPv6: fixed header
	}
	checks := 2 * (1 + len(ports))
	accept := len(prog) + checks + 1
	for _, off := range []uint32{0, 2} {
		prog = append(prog, bpf.LoadIndirect{Off: off, Size: 2})
		for _, p := range ports {
			prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(p), SkipTrue: uint8(accept - len(prog) - 1)})
		}
	}
	prog = append(prog, bpf.RetConstant{Val: 0}, bpf.RetConstant{Val: SnapLen})
	return attach(fd, prog)
}

// attach assembles prog and attaches it to the socket fd.
func attach(fd int, prog []bpf.Instruction) error {
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return err
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	return unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]})
}
