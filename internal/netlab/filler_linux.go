//go:build linux

package netlab

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Filler sends filler frames on every link it was opened for, once the
// lab's traffic has left the link idle for FillAfterIdle, as fast as the
// filler class lets them leave (see tcFilledCommands): a send blocks while
// the socket's few frames wait in the qdisc, so a filler costs a write per
// frame the wire had room for, and a poll of the traffic class's packet
// counter every FillPoll. After FillFor of filling without traffic it
// stops sending and goes into deep idle (fillidle_linux.go): it empties
// the wire class's bucket (burst 0), which keeps it empty without a
// frame sent, and sleeps until the link sends; then it gives the bucket
// back. So an idle lab costs nothing (the filler frames cost about 14 %
// of a core for an idle eth100 lab, issue 38), while traffic that comes
// back within FillFor finds the wire as before.
//
// Why not deep idle from the start: a bucket of 0 cannot absorb the
// wire's late timers, and the filler gives the bucket back only once it
// has been woken and run; on a loaded machine (load 12-16 on 2 cores) a
// 65,500-byte ping then read medians of 10.7-12.5 ms (seven of nine runs
// above 11.99), where filling read 10.0-11.0 in the same hour. The first
// burst after a deep idle pays that; the next ones within FillFor do not.
//
// Why wait for idle: a filler frame takes up to 100 µs of wire from
// traffic that pauses for a microsecond (a TCP sender refilling its small
// queue a little late on a busy machine), which a real wire would lose
// only the microsecond of; while traffic flows the bucket absorbs such
// pauses, as tbf's does. What a real wire does not have is a bucket full
// after idle, and FillAfterIdle of idle is long before the filler has
// spent it.
const (
	FillAfterIdle = 20 * time.Millisecond
	FillPoll      = 5 * time.Millisecond
	FillFor       = 2 * time.Second
)

// fillBurst bounds the frames sent between two polls while filling (about
// FillPoll of 100 µs frames); fillQueue is about how many wait in the
// filler class at a time (see open).
const (
	fillBurst = 50
	fillQueue = 10
)

type Filler struct {
	links []*fillLink
	stop  atomic.Bool
	wg    sync.WaitGroup
	once  sync.Once
}

type fillLink struct {
	FillLink
	fd      int
	frame   []byte
	sa      *unix.SockaddrLinklayer
	nl      *netlink.Handle // in the link's namespace, for the traffic class's counter
	link    netlink.Link
	ifindex int
	tap     int          // packet socket that wakes the deep idle (arm)
	rt      int          // rtnetlink socket in the link's namespace, for the wire class
	wire    nl.TcHtbCopt // the wire class's parameters as the lab made them
	rate64  uint64       // the wire class's rate and ceiling, bytes/s
	ceil64  uint64
	idles   atomic.Uint64
	frames  atomic.Uint64
	bytes   atomic.Uint64
	errs    atomic.Uint64
	lastErr atomic.Value // string
}

// OpenFiller opens a packet socket on each link, in its namespace (by
// name, under /run/netns); Run starts sending.
func OpenFiller(links []FillLink) (*Filler, error) {
	f := &Filler{}
	for _, l := range links {
		fl := &fillLink{FillLink: l, fd: -1, tap: -1, rt: -1}
		err := inNamespace(l.NS, func() error { return fl.open() })
		if err != nil {
			fl.close()
			f.closeFDs()
			return nil, fmt.Errorf("netlab: filler on %s in %s: %w", l.Ifname, l.NS, err)
		}
		f.links = append(f.links, fl)
	}
	return f, nil
}

// open opens the link's socket in the calling thread's namespace and
// builds its frame.
func (fl *fillLink) open() error {
	ifi, err := net.InterfaceByName(fl.Ifname)
	if err != nil {
		return err
	}
	if fl.Frame < 60 || fl.Frame > 65535 {
		return fmt.Errorf("frame length %d: want 60..65535", fl.Frame)
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("packet socket: %w", err)
	}
	fl.fd = fd
	if fl.nl, err = netlink.NewHandle(); err != nil {
		return fmt.Errorf("netlink: %w", err)
	}
	if fl.link, err = fl.nl.LinkByName(fl.Ifname); err != nil {
		return fmt.Errorf("find %s: %w", fl.Ifname, err)
	}
	// The frame's own class; a send buffer of about fillQueue frames
	// (the kernel doubles what it is given and counts each frame's
	// buffers, about its length plus 1 KiB), so that the frames queued at
	// a time hold the sender back and carry the wire through about 1 ms in
	// which this thread does not run (the class queue is longer, so none
	// is dropped); a send timeout of one poll, so that a send blocked
	// behind the lab's traffic returns to look at it.
	tv := unix.NsecToTimeval(FillPoll.Nanoseconds())
	for _, err := range []error{
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PRIORITY, FillerPriority),
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, fillQueue*(fl.Frame+1024)/2),
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv),
	} {
		if err != nil {
			return fmt.Errorf("socket options: %w", err)
		}
	}
	fl.ifindex = ifi.Index
	if err := fl.openIdle(); err != nil {
		return err
	}
	fl.frame = make([]byte, fl.Frame)
	copy(fl.frame[0:6], fillDst[:])
	copy(fl.frame[6:12], ifi.HardwareAddr)
	fl.frame[12], fl.frame[13] = FillEtherType>>8, FillEtherType&0xff
	copy(fl.frame[14:], fillPayload)
	fl.sa = &unix.SockaddrLinklayer{Ifindex: ifi.Index, Protocol: htons(FillEtherType), Halen: 6}
	copy(fl.sa.Addr[:], fillDst[:])
	return nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// Run starts one sender per link; Close stops them.
func (f *Filler) Run() {
	for _, fl := range f.links {
		f.wg.Add(1)
		go func() { defer f.wg.Done(); fl.run(&f.stop) }()
	}
}

// run sends frames until stop, on an OS thread of its own at nice -15 (if
// this process may): a filler that waits for the CPU behind the programs
// whose traffic the wire carries leaves the bucket to fill, and the next
// burst leaves faster than the wire. It polls the traffic class's packet
// counter every FillPoll and fills only once the counter has not moved for
// FillAfterIdle; after FillFor of filling it goes into deep idle. A full
// send buffer blocks a write for up to one poll; any other error (the
// interface went away with its lab) is retried after a pause, never in a
// tight loop. It leaves the wire with its bucket when it stops.
func (fl *fillLink) run(stop *atomic.Bool) {
	runtime.LockOSThread() // never unlocked: the thread and its priority end with the goroutine
	_ = unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), -15)
	var last uint64
	var active time.Time // the last poll that saw traffic
	for !stop.Load() {
		if p, ok := fl.trafficPackets(); ok && p != last {
			last, active = p, time.Now()
		}
		idle := time.Since(active)
		switch {
		case idle < FillAfterIdle:
			sleep(FillPoll)
			continue
		case idle >= FillAfterIdle+FillFor:
			if !fl.deepIdle(stop, last) {
				sleep(10 * time.Millisecond)
			}
			active = time.Now() // woken by traffic (or stop): fill again only after FillAfterIdle
			continue
		}
		for i := 0; i < fillBurst && !stop.Load(); i++ {
			if !fl.send() {
				break
			}
		}
	}
	fl.try(fl.setBucket(true))
}

// try counts err, if any, and says whether there was none.
func (fl *fillLink) try(err error) bool {
	if err == nil {
		return true
	}
	fl.errs.Add(1)
	fl.lastErr.Store(err.Error())
	return false
}

// send sends one frame and says whether the next may follow at once.
func (fl *fillLink) send() bool {
	err := unix.Sendto(fl.fd, fl.frame, 0, fl.sa)
	switch {
	case err == nil:
		fl.frames.Add(1)
		fl.bytes.Add(uint64(len(fl.frame)))
		return true
	case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EINTR):
		// the wire was busy for a whole poll: look at the traffic again
	default:
		fl.try(fmt.Errorf("send a filler frame: %w", err))
		sleep(10 * time.Millisecond)
	}
	return false
}

// sleep sleeps in the kernel on the calling (locked, boosted) thread. Go's
// time.Sleep would be woken by the runtime's timers on whichever thread
// runs them, at normal priority: on a busy machine that came tens of
// milliseconds late, long enough for the bucket to fill before a burst
// (a 65,500-byte ping read 9.1 ms now and then).
func sleep(d time.Duration) {
	ts := unix.NsecToTimespec(d.Nanoseconds())
	_ = unix.Nanosleep(&ts, nil)
}

// trafficPackets returns the packet counter of the traffic class (1:10).
func (fl *fillLink) trafficPackets() (uint64, bool) {
	cls, err := fl.nl.ClassList(fl.link, 0)
	if err != nil {
		return 0, false
	}
	for _, c := range cls {
		a := c.Attrs()
		if a.Handle == trafficHandle && a.Statistics != nil && a.Statistics.Basic != nil {
			return uint64(a.Statistics.Basic.Packets), true
		}
	}
	return 0, false
}

// trafficHandle and wireHandle are fillTrafficClass and fillWireClass as
// handles.
var (
	trafficHandle = netlink.MakeHandle(1, 0x10)
	wireHandle    = netlink.MakeHandle(1, 1)
)

// Stats returns what each link's filler has sent so far.
func (f *Filler) Stats() []FillStats {
	out := make([]FillStats, 0, len(f.links))
	for _, fl := range f.links {
		st := FillStats{NS: fl.NS, Ifname: fl.Ifname, Frames: fl.frames.Load(), Bytes: fl.bytes.Load(), Idles: fl.idles.Load(), Errors: fl.errs.Load()}
		st.LastError, _ = fl.lastErr.Load().(string)
		out = append(out, st)
	}
	return out
}

// Close stops the senders (within the send timeout, or fillWake in deep
// idle), which give each wire its bucket back, and closes the sockets.
func (f *Filler) Close() error {
	f.once.Do(func() {
		f.stop.Store(true)
		f.wg.Wait()
		f.closeFDs()
	})
	return nil
}

func (f *Filler) closeFDs() {
	for _, fl := range f.links {
		fl.close()
	}
}

// close closes the link's sockets and netlink handle.
func (fl *fillLink) close() {
	for _, fd := range []*int{&fl.fd, &fl.tap, &fl.rt} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
	if fl.nl != nil {
		fl.nl.Close()
		fl.nl = nil
	}
}

// inNamespace runs fn on a locked OS thread moved into the named
// namespace (/run/netns/ns); sockets fn opens stay there.
func inNamespace(ns string, fn func() error) error {
	h, err := netns.GetFromPath(filepath.Join(nsDir, ns))
	if err != nil {
		return fmt.Errorf("open namespace %s: %w", ns, err)
	}
	defer h.Close()
	return (&Host{Name: ns, sys: hostSys{ns: h}}).Do(fn)
}

// FillLinks returns the filler's links of a WireFilled lab: every shaped
// veth end, with the frame length for the lab's rate.
func (l *Lab) FillLinks() []FillLink {
	var out []FillLink
	for _, e := range l.shapedEnds() {
		out = append(out, FillLink{NS: e.h.Name, Ifname: e.ifname, Frame: FillFrame(l.Config.RateBPS, l.Config.mtu())})
	}
	return out
}

// startFiller starts the filler of a WireFilled lab in this process. A
// named lab (Config.Lab) outlives this process, so its filler must run in
// a process of its own: the caller runs FillLinks there (`wirebench lab
// up` does).
func (l *Lab) startFiller() error {
	f, err := OpenFiller(l.FillLinks())
	if err != nil {
		return err
	}
	f.Run()
	l.sys.filler = f
	return nil
}

// FillStats returns what the lab's filler has sent, or nil when the lab
// has no filler running in this process.
func (l *Lab) FillStats() []FillStats {
	if l.sys.filler == nil {
		return nil
	}
	return l.sys.filler.Stats()
}
