package wirecap

import (
	"net"
	"sync"
	"testing"
	"time"

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

// Start captures every TCP and UDP packet arriving on the interface named
// ifname ("lo"); it skips t when not root. Stop it with Stop; t's cleanup
// stops it too.
func Start(t testing.TB, ifname string) *Capture {
	t.Helper()
	if unix.Geteuid() != 0 {
		t.Skip("capturing packets needs root (AF_PACKET)")
	}
	ifi, err := net.InterfaceByName(ifname)
	if err != nil {
		t.Fatalf("wirecap: interface %s: %v", ifname, err)
	}
	const ethPAll = 0x0003
	proto := int(htons(ethPAll))
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		t.Fatalf("wirecap: packet socket: %v", err)
	}
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
