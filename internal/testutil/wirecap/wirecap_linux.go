package wirecap

import (
	"net"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Capture is a running capture on one interface.
type Capture struct {
	fd   int
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	pkts []Packet
}

// Start captures the IPv4 and IPv6 packets on the interface named ifname
// ("lo") whose source or destination port is one of ports (all packets
// when none is given); it skips t when not root. The port filter runs in
// the kernel (classic BPF), so other traffic on a busy loopback cannot
// crowd the test's packets out of the socket's buffer. Stop it with Stop;
// t's cleanup stops it too.
func Start(t testing.TB, ifname string, ports ...uint16) *Capture {
	t.Helper()
	if unix.Geteuid() != 0 {
		t.Skip("capturing packets needs root (AF_PACKET)")
	}
	ifi, err := net.InterfaceByName(ifname)
	if err != nil {
		t.Fatalf("wirecap: interface %s: %v", ifname, err)
	}
	const ethPAll = 0x0003
	// Protocol 0: the socket receives nothing until it is bound, after
	// the filter is in place.
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("wirecap: packet socket: %v", err)
	}
	if len(ports) > 0 {
		if err := attachPortFilter(fd, ports); err != nil {
			unix.Close(fd)
			t.Fatalf("wirecap: port filter: %v", err)
		}
	}
	// Room for a burst of the test's own packets (root may exceed rmem_max).
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 64<<20)
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(ethPAll), Ifindex: ifi.Index}); err != nil {
		unix.Close(fd)
		t.Fatalf("wirecap: bind to %s: %v", ifname, err)
	}
	tv := unix.NsecToTimeval((50 * time.Millisecond).Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		t.Fatalf("wirecap: read timeout: %v", err)
	}
	c := &Capture{fd: fd, stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	t.Cleanup(func() { c.Stop() })
	return c
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// run reads until Stop. On loopback each packet passes twice (out and in);
// only the incoming copy is kept.
func (c *Capture) run() {
	defer close(c.done)
	buf := make([]byte, 65536)
	for {
		select {
		case <-c.stop:
			return
		default:
		}
		n, from, err := unix.Recvfrom(c.fd, buf, 0)
		if err != nil {
			continue // timeout or EINTR: check stop again
		}
		if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
			continue
		}
		if p, ok := Parse(buf[:n]); ok {
			c.mu.Lock()
			if len(c.pkts) < MaxPackets {
				c.pkts = append(c.pkts, p)
			}
			c.mu.Unlock()
		}
	}
}

// Stop ends the capture and returns the packets seen; later calls return
// the same packets.
func (c *Capture) Stop() []Packet {
	select {
	case <-c.stop:
	default:
		close(c.stop)
		<-c.done
		unix.Close(c.fd)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pkts
}

// attachPortFilter lets through only packets whose TCP/UDP source or
// destination port is one of ports: IPv4 with its header length from the
// IHL field, IPv6 without extension headers.
func attachPortFilter(fd int, ports []uint16) error {
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
	prog = append(prog, bpf.RetConstant{Val: 0}, bpf.RetConstant{Val: 1 << 16})
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
