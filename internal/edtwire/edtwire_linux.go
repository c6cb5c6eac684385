//go:build linux

package edtwire

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// vnetHdrLen is the size of struct virtio_net_hdr, which PACKET_VNET_HDR
// puts in front of every frame read and expects in front of every frame
// sent: flags, gso_type, hdr_len, gso_size, csum_start, csum_offset.
const vnetHdrLen = 10

const (
	vnetNeedsCsum = 1 // VIRTIO_NET_HDR_F_NEEDS_CSUM
	readTimeout   = 100 * time.Millisecond
	bufSize       = 2048
)

// Wire is a running forwarder, made by Open and started by Run.
type Wire struct {
	dirs    []*direction
	stop    atomic.Bool
	running bool
	wg      sync.WaitGroup
	once    sync.Once
}

// direction is one Link: its sockets, schedule, queue and counters.
type direction struct {
	link       Link
	in, out    int // packet socket fds
	inMAC      net.HardwareAddr
	outMAC     net.HardwareAddr
	dst        map[netip.Addr]bool
	sched      schedule
	queue      []*frame // scheduled frames, in departure order
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
	d := &direction{link: l, in: -1, out: -1, dst: map[netip.Addr]bool{}}
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
	if d.in, err = packetSocket(ifi.Index, rcvBuf(l.RateBPS, latency)); err != nil {
		return nil, fmt.Errorf("edtwire: link %s: receive socket on %s: %w", l.Name, l.In, err)
	}
	if d.out, err = packetSocket(ifo.Index, 0); err != nil {
		unix.Close(d.in)
		return nil, fmt.Errorf("edtwire: link %s: send socket on %s: %w", l.Name, l.Out, err)
	}
	return d, nil
}

// rcvBuf returns the receive buffer of a direction's socket: room for
// twice what the wire can queue (the kernel counts each frame's buffer,
// about twice its length), at least 256 KiB; 8 MiB unshaped. What arrives
// while it is full is dropped by the kernel before it is copied, as tbf
// drops at a full queue: a sender offering many times the rate then costs
// the forwarder little more than the frames it can send.
func rcvBuf(rate uint64, latency time.Duration) int {
	if rate == 0 {
		return 8 << 20
	}
	return max(256<<10, int(2*float64(rate)/8*latency.Seconds()))
}

// packetSocket opens an AF_PACKET raw socket bound to ifindex with virtio
// net headers; a receiving one (rcvbuf > 0) sees all protocols but not its
// own outgoing frames, a sending one (rcvbuf 0) bypasses the qdisc.
func packetSocket(ifindex, rcvbuf int) (int, error) {
	rx := rcvbuf > 0
	proto := 0 // a send-only socket receives nothing
	if rx {
		proto = int(htons(unix.ETH_P_ALL))
	}
	flags := unix.SOCK_RAW | unix.SOCK_CLOEXEC
	if rx {
		flags |= unix.SOCK_NONBLOCK // run polls, then reads what is there
	}
	fd, err := unix.Socket(unix.AF_PACKET, flags, proto)
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
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, rcvbuf)
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("receive timestamps: %w", err)
		}
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: uint16(proto), Ifindex: ifindex}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("bind: %w", err)
	}
	return fd, nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// Run starts forwarding: one OS thread per link. It returns at once;
// Close stops them. It raises GOMAXPROCS by one per link (Close lowers it
// again), so that a forwarder thread coming back from a system call finds
// a free P at once instead of waiting for the program's busy goroutines.
func (w *Wire) Run() {
	runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + len(w.dirs))
	w.running = true
	for _, d := range w.dirs {
		w.wg.Add(1)
		go func() { defer w.wg.Done(); d.run(&w.stop) }()
	}
}

// Close stops forwarding and closes the sockets. Frames still queued are
// dropped.
func (w *Wire) Close() error {
	w.once.Do(func() {
		w.stop.Store(true)
		w.wg.Wait()
		if w.running {
			runtime.GOMAXPROCS(max(1, runtime.GOMAXPROCS(0)-len(w.dirs)))
		}
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

// monotonic returns CLOCK_MONOTONIC in nanoseconds.
func monotonic() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// readBatch is how many frames run reads before it sends what is due.
const readBatch = 64

// run is one direction's forwarder, on an OS thread of its own until
// stop: it waits (ppoll, with a timeout up to the next departure) for a
// frame to arrive or one to be due, reads what arrived, schedules and
// queues it, and sends every queued frame whose departure time has come.
// One thread does both so that no wake-up has to pass through the Go
// scheduler, which can delay a goroutine by milliseconds when every P is
// busy.
func (d *direction) run(stop *atomic.Bool) {
	runtime.LockOSThread() // never unlocked: the thread (and its priority) ends with the goroutine
	sched := boost()
	d.mu.Lock()
	d.st.Sched = sched
	d.mu.Unlock()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0) // wake at the departure, not 50 µs later
	big := make([]byte, vnetHdrLen+65536)
	oob := make([]byte, 128)
	fds := []unix.PollFd{{Fd: int32(d.in), Events: unix.POLLIN}}
	for !stop.Load() {
		now := d.sendDue(monotonic())
		wait := readTimeout.Nanoseconds()
		if len(d.queue) > 0 {
			wait = min(wait, d.queue[0].depart-now)
		}
		if wait > 0 {
			ts := unix.NsecToTimespec(wait)
			if _, err := unix.Ppoll(fds, &ts, nil); err != nil && err != unix.EINTR {
				return
			}
		}
		d.readSome(big, oob)
	}
}

// readSome reads up to readBatch frames that are waiting and admits each
// at its arrival time: the kernel's receive timestamp, not the time run
// read it, so that frames that waited in the socket while this thread was
// not running (a busy machine) keep their places on the schedule and the
// wire loses no time for the delay.
func (d *direction) readSome(big, oob []byte) {
	for i := 0; i < readBatch; i++ {
		n, oobn, _, _, err := unix.Recvmsg(d.in, big, oob, unix.MSG_DONTWAIT)
		if err != nil {
			return // EAGAIN: nothing more; anything else: the next poll says
		}
		if n < vnetHdrLen+14 {
			continue
		}
		now := monotonic()
		arrival := now
		if rt, ok := rxTimestamp(oob[:oobn]); ok {
			arrival = min(now, rt-realtimeOffset())
		}
		d.mu.Lock()
		d.st.ReadLagMax = max(d.st.ReadLagMax, time.Duration(now-arrival))
		d.mu.Unlock()
		d.admit(big[:n], arrival)
	}
}

// rxTimestamp returns the SO_TIMESTAMPNS control message's time
// (CLOCK_REALTIME, ns) from oob.
func rxTimestamp(oob []byte) (int64, bool) {
	const hdr = unix.SizeofCmsghdr
	for len(oob) >= hdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < hdr || l > len(oob) {
			return 0, false
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SO_TIMESTAMPNS && l >= hdr+16 {
			ts := (*unix.Timespec)(unsafe.Pointer(&oob[hdr]))
			return ts.Nano(), true
		}
		oob = oob[(l+7)&^7:]
	}
	return 0, false
}

// realtimeOffset returns CLOCK_REALTIME minus CLOCK_MONOTONIC, ns.
func realtimeOffset() int64 {
	var rt unix.Timespec
	m := monotonic()
	_ = unix.ClockGettime(unix.CLOCK_REALTIME, &rt)
	return rt.Nano() - m
}

// sendDue sends every queued frame due at now and returns the time after.
func (d *direction) sendDue(now int64) int64 {
	for len(d.queue) > 0 && d.queue[0].depart <= now {
		fr := d.queue[0]
		d.queue[0] = nil
		d.queue = d.queue[1:]
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
		now = monotonic()
	}
	if len(d.queue) == 0 {
		d.queue = d.queue[:0:0] // let the emptied backing array go
	}
	return now
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
	d.queue = append(d.queue, fr)
	d.st.Idle = time.Duration(d.sched.idle)
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

// boost raises the calling thread's priority, if this process may, and
// says what it got: a wire must get the CPU before the programs whose
// traffic it carries, or its frames are read and sent late (see
// Stats.Late*). EDTWIRE_SCHED=fifo asks for SCHED_FIFO (real-time)
// instead of nice -15 (experiment).
func boost() string {
	if os.Getenv("EDTWIRE_SCHED") == "fifo" {
		err := unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_FIFO, Priority: 10}, 0)
		if err == nil {
			if a, err := unix.SchedGetAttr(0, 0); err == nil && a.Policy == unix.SCHED_FIFO {
				return "fifo 10"
			}
		}
	}
	if err := unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), -15); err != nil {
		return "normal (" + err.Error() + ")"
	}
	return "nice -15"
}
