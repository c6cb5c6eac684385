//go:build linux

package netlab

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Filler keeps the filled wire's bucket from filling while the lab's
// traffic leaves the wire idle, on every link it was opened for. It does
// so without sending anything: once the traffic class's packet counter
// has stood still for FillAfterIdle it shrinks the wire class's bucket
// (class 1:1, burst and cburst) to nothing, so that a burst after idle
// leaves at the wire's rate from its first frame, as on a real wire, and
// then sleeps in the kernel until the link sends a frame (a packet socket
// armed for outgoing frames). Woken, it gives the wire its bucket back and
// reads the traffic class's counter every FillPoll until the traffic has
// been idle for FillAfterIdle again. An idle lab costs it nothing but a
// wake-up every fillWake per link to look for Close.
//
// Why wait for idle: the bucket absorbs the traffic's own short pauses (a
// TCP sender refilling its small queue a little late on a busy machine)
// and the wire's late timers, as tbf's does; what a real wire does not
// have is a bucket full after idle, and FillAfterIdle of idle is long
// before the bucket matters to anything but the next burst.
//
// Until issue 38 the filler sent filler frames into class 1:20 for the
// whole of every idle time (about 10,000 a second per link, 18 % of a core
// for an idle eth100 lab); the name stayed.
const (
	FillAfterIdle = 20 * time.Millisecond
	FillPoll      = 5 * time.Millisecond
)

// fillWake is how long the idle wait sleeps before it looks whether
// Close was called.
const fillWake = 250 * time.Millisecond

type Filler struct {
	links []*fillLink
	stop  atomic.Bool
	wg    sync.WaitGroup
	once  sync.Once
}

type fillLink struct {
	FillLink
	tap     int // packet socket that wakes the idle wait (arm)
	rt      int // rtnetlink socket in the link's namespace, for the wire class
	ifindex int
	nl      *netlink.Handle // in the link's namespace, for the traffic class's counter
	link    netlink.Link
	wire    nl.TcHtbCopt // the wire class's parameters as the lab made them
	rate64  uint64       // the wire class's rate and ceiling, bytes/s
	ceil64  uint64
	idles   atomic.Uint64
	errs    atomic.Uint64
	lastErr atomic.Value // string
}

// OpenFiller opens the sockets of each link in its namespace (by name,
// under /run/netns) and reads its wire class; Run starts the watch.
func OpenFiller(links []FillLink) (*Filler, error) {
	f := &Filler{}
	for _, l := range links {
		fl := &fillLink{FillLink: l, tap: -1, rt: -1}
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

// open opens the link's sockets in the calling thread's namespace and
// reads the wire class's parameters back from the kernel.
func (fl *fillLink) open() error {
	ifi, err := net.InterfaceByName(fl.Ifname)
	if err != nil {
		return err
	}
	fl.ifindex = ifi.Index
	if fl.nl, err = netlink.NewHandle(); err != nil {
		return fmt.Errorf("netlink: %w", err)
	}
	if fl.link, err = fl.nl.LinkByName(fl.Ifname); err != nil {
		return fmt.Errorf("find %s: %w", fl.Ifname, err)
	}
	if err := fl.readWire(); err != nil {
		return err
	}
	if fl.rt, err = unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE); err != nil {
		return fmt.Errorf("rtnetlink socket: %w", err)
	}
	tv := unix.NsecToTimeval(time.Second.Nanoseconds())
	if err := unix.SetsockoptTimeval(fl.rt, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return fmt.Errorf("rtnetlink socket: %w", err)
	}
	if err := unix.Bind(fl.rt, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("rtnetlink socket: %w", err)
	}
	return fl.openTap()
}

// readWire reads the wire class (1:1) the lab made: what raise restores.
func (fl *fillLink) readWire() error {
	cls, err := fl.nl.ClassList(fl.link, 0)
	if err != nil {
		return fmt.Errorf("classes of %s: %w", fl.Ifname, err)
	}
	for _, c := range cls {
		h, ok := c.(*netlink.HtbClass)
		if !ok || h.Handle != wireHandle {
			continue
		}
		if h.Rate == 0 || h.Ceil == 0 || h.Buffer == 0 {
			return fmt.Errorf("wire class %s of %s has no rate or bucket", fillWireClass, fl.Ifname)
		}
		fl.rate64, fl.ceil64 = h.Rate, h.Ceil
		fl.wire = nl.TcHtbCopt{
			Rate:    htbRate(h.Rate),
			Ceil:    htbRate(h.Ceil),
			Buffer:  h.Buffer,
			Cbuffer: h.Cbuffer,
			Quantum: h.Quantum,
			Level:   h.Level,
			Prio:    h.Prio,
		}
		return nil
	}
	return fmt.Errorf("%s has no HTB class %s (not a filled wire)", fl.Ifname, fillWireClass)
}

// htbRate is the rate spec tcFilledCommands gives the wire (Ethernet link
// layer, overhead 24), at bytesPS; above 32 bits the rate goes in its own
// attribute (setBucket).
func htbRate(bytesPS uint64) nl.TcRateSpec {
	return nl.TcRateSpec{Linklayer: nl.LINKLAYER_ETHERNET, Overhead: EthernetOverhead, CellAlign: -1, Rate: uint32(min(bytesPS, 1<<32-1))}
}

// openTap opens the packet socket that wakes the idle wait: a filter lets
// only frames this end sends through (one byte of each), and it is bound
// to the link for every protocol only while armed (arm).
func (fl *fillLink) openTap() error {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("packet socket: %w", err)
	}
	fl.tap = fd
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: skfAdOff + skfAdPkttype},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.PACKET_OUTGOING, Jt: 0, Jf: 1},
		{Code: unix.BPF_RET | unix.BPF_K, K: 1},
		{Code: unix.BPF_RET | unix.BPF_K, K: 0},
	}
	tv := unix.NsecToTimeval(fillWake.Nanoseconds())
	for _, err := range []error{
		unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}),
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 4096),
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv),
	} {
		if err != nil {
			return fmt.Errorf("packet socket options: %w", err)
		}
	}
	return fl.arm(false)
}

// arm binds the tap to every protocol on the link (armed: the kernel hands
// it a copy of each frame the link sends) or to the filler frames' unused
// EtherType (disarmed: a protocol nothing in a lab sends, which costs the
// lab's traffic nothing; a packet socket cannot be unbound), and empties
// its queue when disarming.
func (fl *fillLink) arm(on bool) error {
	proto := uint16(FillEtherType)
	if on {
		proto = unix.ETH_P_ALL
	}
	if err := unix.Bind(fl.tap, &unix.SockaddrLinklayer{Ifindex: fl.ifindex, Protocol: htons(proto)}); err != nil {
		return fmt.Errorf("bind the packet socket: %w", err)
	}
	if !on {
		var b [1]byte
		for {
			if _, _, err := unix.Recvfrom(fl.tap, b[:], unix.MSG_DONTWAIT|unix.MSG_TRUNC); err != nil {
				break
			}
		}
	}
	return nil
}

// skfAdOff + skfAdPkttype is where classic BPF loads the packet's type
// from (linux/filter.h: SKF_AD_OFF is -0x1000, SKF_AD_PKTTYPE 4).
const (
	skfAdOff     = 1<<32 - 0x1000
	skfAdPkttype = 4
)

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// Run starts one watch per link; Close stops them.
func (f *Filler) Run() {
	for _, fl := range f.links {
		f.wg.Add(1)
		go func() { defer f.wg.Done(); fl.run(&f.stop) }()
	}
}

// run watches the link until stop, on an OS thread of its own at nice -15
// (if this process may), so that the bucket is back soon after traffic
// starts: while traffic flows it reads the traffic class's counter every
// FillPoll; once that has stood still for FillAfterIdle it empties the
// bucket and sleeps until the link sends. It gives the wire its bucket
// back when it stops. An error (the interface went away with its lab) is
// counted and retried after a pause, never in a tight loop.
func (fl *fillLink) run(stop *atomic.Bool) {
	runtime.LockOSThread() // never unlocked: the thread and its priority end with the goroutine
	_ = unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), -15)
	last, _ := fl.trafficPackets()
	for !stop.Load() {
		last = fl.waitIdle(stop, last)
		if stop.Load() {
			break
		}
		if !fl.try(fl.setBucket(false)) || !fl.try(fl.arm(true)) {
			sleep(10 * time.Millisecond)
			continue
		}
		fl.idles.Add(1)
		// Traffic that came between the last read and arming woke no one.
		if p, ok := fl.trafficPackets(); !ok || p == last {
			fl.waitTraffic(stop)
		}
		fl.try(fl.arm(false))
		fl.try(fl.setBucket(true))
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

// waitIdle reads the traffic class's counter every FillPoll until it has
// stood still for FillAfterIdle (or stop) and returns its last value.
func (fl *fillLink) waitIdle(stop *atomic.Bool, last uint64) uint64 {
	active := time.Now() // the last read that saw traffic
	for !stop.Load() && time.Since(active) < FillAfterIdle {
		sleep(FillPoll)
		if p, ok := fl.trafficPackets(); ok && p != last {
			last, active = p, time.Now()
		}
	}
	return last
}

// waitTraffic blocks until the armed tap sees a frame leave or stop.
func (fl *fillLink) waitTraffic(stop *atomic.Bool) {
	var b [1]byte
	for !stop.Load() {
		_, _, err := unix.Recvfrom(fl.tap, b[:], unix.MSG_TRUNC)
		switch {
		case err == nil:
			return
		case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EINTR):
		default:
			fl.try(fmt.Errorf("wait for traffic: %w", err))
			sleep(10 * time.Millisecond)
		}
	}
}

// setBucket changes the wire class (1:1) to its bucket as the lab made it
// (full) or to none (burst and cburst 0: a frame leaves only once the
// wire's rate has paid for it, after the frame before), over rtnetlink.
// HTB keeps the class's tokens across the change and caps them at the new
// bucket the next time it charges the class, so emptying takes effect on
// the next frame and refilling gives back no time the wire did not idle.
func (fl *fillLink) setBucket(full bool) error {
	opt := fl.wire
	if !full {
		opt.Buffer, opt.Cbuffer = 0, 0
	}
	req := nl.NewNetlinkRequest(unix.RTM_NEWTCLASS, unix.NLM_F_ACK)
	req.AddData(&nl.TcMsg{Family: nl.FAMILY_ALL, Ifindex: int32(fl.ifindex), Handle: wireHandle, Parent: netlink.MakeHandle(1, 0)})
	req.AddData(nl.NewRtAttr(nl.TCA_KIND, nl.ZeroTerminated("htb")))
	opts := nl.NewRtAttr(nl.TCA_OPTIONS, nil)
	opts.AddRtAttr(nl.TCA_HTB_PARMS, opt.Serialize())
	if fl.rate64 >= 1<<32 {
		opts.AddRtAttr(nl.TCA_HTB_RATE64, nl.Uint64Attr(fl.rate64))
	}
	if fl.ceil64 >= 1<<32 {
		opts.AddRtAttr(nl.TCA_HTB_CEIL64, nl.Uint64Attr(fl.ceil64))
	}
	req.AddData(opts)
	if err := rtRequest(fl.rt, req.Serialize()); err != nil {
		return fmt.Errorf("set the wire's bucket on %s (full %v): %w", fl.Ifname, full, err)
	}
	return nil
}

// rtRequest sends one rtnetlink request on fd and reads its acknowledgement.
func rtRequest(fd int, b []byte) error {
	if err := unix.Sendto(fd, b, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	seq := binary.NativeEndian.Uint32(b[8:12])
	buf := make([]byte, 8192)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return fmt.Errorf("read the acknowledgement: %w", err)
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return fmt.Errorf("read the acknowledgement: %w", err)
		}
		for _, m := range msgs {
			if m.Header.Seq != seq || m.Header.Type != unix.NLMSG_ERROR || len(m.Data) < 4 {
				continue // an answer to an earlier request that timed out
			}
			if e := int32(binary.NativeEndian.Uint32(m.Data[0:4])); e != 0 {
				return unix.Errno(-e)
			}
			return nil
		}
	}
}

// sleep sleeps in the kernel on the calling (locked, boosted) thread. Go's
// time.Sleep would be woken by the runtime's timers on whichever thread
// runs them, at normal priority.
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

// Stats returns how often each link's bucket was emptied for idle so far.
func (f *Filler) Stats() []FillStats {
	out := make([]FillStats, 0, len(f.links))
	for _, fl := range f.links {
		st := FillStats{NS: fl.NS, Ifname: fl.Ifname, Idles: fl.idles.Load(), Errors: fl.errs.Load()}
		st.LastError, _ = fl.lastErr.Load().(string)
		out = append(out, st)
	}
	return out
}

// Close stops the watches (within fillWake), which give each wire its
// bucket back, and closes the sockets.
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
	for _, fd := range []*int{&fl.tap, &fl.rt} {
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
// veth end.
func (l *Lab) FillLinks() []FillLink {
	var out []FillLink
	for _, e := range l.shapedEnds() {
		out = append(out, FillLink{NS: e.h.Name, Ifname: e.ifname})
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
