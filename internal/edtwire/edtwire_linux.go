//go:build linux

package edtwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// vnetHdrLen is the size of struct virtio_net_hdr, which PACKET_VNET_HDR
// puts in front of every frame read and expects in front of every frame
// sent: flags, gso_type, hdr_len, gso_size, csum_start, csum_offset.
const vnetHdrLen = 10

const (
	vnetNeedsCsum = 1 // VIRTIO_NET_HDR_F_NEEDS_CSUM
	queueFrames   = 16384
	readTimeout   = 100 * time.Millisecond
	bufSize       = 2048
)

// Wire is a running forwarder, made by Open and started by Run.
type Wire struct {
	dirs []*direction
	stop atomic.Bool
	wg   sync.WaitGroup
	once sync.Once
}

// direction is one Link: its sockets, schedule, queue and counters.
type direction struct {
	link       Link
	in, out    int // packet socket fds
	inMAC      net.HardwareAddr
	outMAC     net.HardwareAddr
	dst        map[netip.Addr]bool
	sched      schedule
	q          chan *frame
	mu         sync.Mutex
	st         Stats
	lateSum    time.Duration
	lateFrames uint64
}

// frame is one frame on its way, with its vnet header in front.
type frame struct {
	buf    []byte // vnetHdrLen + frame
	depart int64
}

var pool = sync.Pool{New: func() any { return &frame{buf: make([]byte, bufSize)} }}

// Open opens the packet sockets of every link in the calling thread's
// network namespace (call it inside the router namespace); Run starts
// forwarding. The sockets stay in that namespace.
func Open(c Config) (*Wire, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	w := &Wire{}
	for _, l := range c.Links {
		d, err := openDirection(l, c.latency())
		if err != nil {
			w.closeFDs()
			return nil, err
		}
		w.dirs = append(w.dirs, d)
	}
	return w, nil
}

func openDirection(l Link, latency time.Duration) (*direction, error) {
	d := &direction{link: l, in: -1, out: -1, dst: map[netip.Addr]bool{}, q: make(chan *frame, queueFrames)}
	d.st.Name = l.Name
	d.sched = schedule{rate: l.RateBPS, limit: latency.Nanoseconds()}
	for _, a := range l.Dst {
		d.dst[a] = true
	}
	ifi, err := net.InterfaceByName(l.In)
	if err != nil {
		return nil, fmt.Errorf("edtwire: link %s: %w", l.Name, err)
	}
	ifo, err := net.InterfaceByName(l.Out)
	if err != nil {
		return nil, fmt.Errorf("edtwire: link %s: %w", l.Name, err)
	}
	d.inMAC, d.outMAC = ifi.HardwareAddr, ifo.HardwareAddr
	if d.in, err = packetSocket(ifi.Index, true); err != nil {
		return nil, fmt.Errorf("edtwire: link %s: receive socket on %s: %w", l.Name, l.In, err)
	}
	if d.out, err = packetSocket(ifo.Index, false); err != nil {
		unix.Close(d.in)
		return nil, fmt.Errorf("edtwire: link %s: send socket on %s: %w", l.Name, l.Out, err)
	}
	return d, nil
}

// packetSocket opens an AF_PACKET raw socket bound to ifindex with virtio
// net headers; a receiving one sees all protocols but not its own
// outgoing frames, a sending one bypasses the qdisc.
func packetSocket(ifindex int, rx bool) (int, error) {
	proto := 0 // a send-only socket receives nothing
	if rx {
		proto = int(htons(unix.ETH_P_ALL))
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return -1, err
	}
	opts := [][2]int{{unix.PACKET_VNET_HDR, 1}}
	if rx {
		opts = append(opts, [2]int{unix.PACKET_IGNORE_OUTGOING, 1})
	} else {
		opts = append(opts, [2]int{unix.PACKET_QDISC_BYPASS, 1})
	}
	for _, o := range opts {
		if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, o[0], o[1]); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("setsockopt %d: %w", o[0], err)
		}
	}
	if rx {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20)
		tv := unix.NsecToTimeval(readTimeout.Nanoseconds())
		if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("receive timeout: %w", err)
		}
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: uint16(proto), Ifindex: ifindex}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("bind: %w", err)
	}
	return fd, nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// Run starts forwarding: a reader and a sender per link, each on an OS
// thread of its own. It returns at once; Close stops them.
func (w *Wire) Run() {
	for _, d := range w.dirs {
		w.wg.Add(2)
		go func() { defer w.wg.Done(); d.read(&w.stop) }()
		go func() { defer w.wg.Done(); d.send() }()
	}
}

// Close stops forwarding and closes the sockets. Frames still queued are
// dropped.
func (w *Wire) Close() error {
	w.once.Do(func() {
		w.stop.Store(true)
		w.wg.Wait()
		w.closeFDs()
	})
	return nil
}

func (w *Wire) closeFDs() {
	for _, d := range w.dirs {
		for _, fd := range []int{d.in, d.out} {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
		d.in, d.out = -1, -1
	}
}

// Stats returns every link's counters so far.
func (w *Wire) Stats() []Stats {
	out := make([]Stats, 0, len(w.dirs))
	for _, d := range w.dirs {
		d.mu.Lock()
		s := d.st
		if d.lateFrames > 0 {
			s.LateMean = d.lateSum / time.Duration(d.lateFrames)
		}
		d.mu.Unlock()
		if d.in >= 0 {
			if ps, err := unix.GetsockoptTpacketStats(d.in, unix.SOL_PACKET, unix.PACKET_STATISTICS); err == nil {
				d.mu.Lock()
				d.st.SocketDrops += uint64(ps.Drops) // the kernel resets them on read
				s.SocketDrops = d.st.SocketDrops
				d.mu.Unlock()
			}
		}
		out = append(out, s)
	}
	return out
}

// monotonic returns CLOCK_MONOTONIC in nanoseconds, the clock the sender
// sleeps on.
func monotonic() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// read takes frames from the In socket until stop, schedules the ones
// for this link's destinations and queues them for send.
func (d *direction) read(stop *atomic.Bool) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer close(d.q)
	big := make([]byte, vnetHdrLen+65536)
	for !stop.Load() {
		n, err := unix.Read(d.in, big)
		if err != nil {
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
				continue
			}
			return // socket closed or broken: nothing more to forward
		}
		now := monotonic()
		if n < vnetHdrLen+14 {
			continue
		}
		d.admit(big[:n], now)
	}
}

// admit checks, charges and queues one frame read at now (vnet header in
// front).
func (d *direction) admit(b []byte, now int64) {
	f := b[vnetHdrLen:]
	if !equalMAC(f[0:6], d.inMAC) || !d.dst[destination(f)] {
		return // not ours to forward: the kernel has its own copy
	}
	wire, segs := WireBytes(len(f)), 1
	if b[1] != 0 { // gso_type: several segments in one frame
		wire, segs = gsoWireBytes(len(f), headerLen(f), int(binary.LittleEndian.Uint16(b[4:6])))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !decTTL(f) {
		d.st.TTLExpired++
		return
	}
	depart, ok := d.sched.admit(now, wire)
	if !ok {
		d.st.Dropped++
		return
	}
	fr := pool.Get().(*frame)
	if len(b) > cap(fr.buf) {
		fr.buf = make([]byte, len(b))
	}
	fr.buf = fr.buf[:len(b)]
	copy(fr.buf, b)
	fr.buf[0] &= vnetNeedsCsum // pass the checksum state on, not DATA_VALID
	copy(fr.buf[vnetHdrLen:], d.link.DstMAC)
	copy(fr.buf[vnetHdrLen+6:], d.outMAC)
	fr.depart = depart
	select {
	case d.q <- fr:
	default: // cannot happen within the latency limit at any sane rate
		d.sched.last = max(d.sched.last-int64(uint64(wire)*8*1e9/max(d.sched.rate, 1)), now)
		d.st.Dropped++
		pool.Put(fr)
		return
	}
	d.st.Frames++
	d.st.Bytes += uint64(len(f))
	d.st.WireBytes += uint64(wire)
	d.st.MaxFrame = max(d.st.MaxFrame, len(f))
	if segs > 1 {
		d.st.GSOFrames++
	}
}

func equalMAC(a []byte, b net.HardwareAddr) bool {
	return len(b) == 6 && string(a) == string(b)
}

// send sends queued frames at their departure times: it sleeps (an
// absolute CLOCK_MONOTONIC sleep, so nothing accumulates) until the next
// frame is due and sends every frame that is due.
func (d *direction) send() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for fr := range d.q {
		now := monotonic()
		if fr.depart > now {
			ts := unix.NsecToTimespec(fr.depart)
			for unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil) == unix.EINTR {
			}
			now = monotonic()
		}
		late := time.Duration(now - fr.depart)
		_, err := unix.Write(d.out, fr.buf)
		d.mu.Lock()
		if err != nil {
			d.st.SendErrors++
		}
		d.lateSum += late
		d.lateFrames++
		d.st.LateMax = max(d.st.LateMax, late)
		if late > 100*time.Microsecond {
			d.st.Late100us++
		}
		d.mu.Unlock()
		pool.Put(fr)
	}
}
