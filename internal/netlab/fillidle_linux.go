//go:build linux

package netlab

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// The filler's deep idle (see Filler): once the filler has filled a link
// for FillFor without the lab sending, it empties the wire class's bucket
// instead, so that nothing needs to be sent to keep it empty, and sleeps
// on a packet socket (the tap) until the link sends; then it gives the
// bucket back.

// idleEtherType is IEEE 802's Local Experimental EtherType 2, which nothing
// in a lab sends (the filler frames carry the first, FillEtherType): the
// tap is bound to it while disarmed.
const idleEtherType = 0x88b6

// fillWake is how long the deep idle's wait sleeps before it looks
// whether Close was called.
const fillWake = 250 * time.Millisecond

// openIdle opens the link's rtnetlink socket and tap in the calling
// thread's namespace and reads the wire class back from the kernel.
func (fl *fillLink) openIdle() error {
	if err := fl.readWire(); err != nil {
		return err
	}
	var err error
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

// deepIdle empties the bucket, sleeps until the link sends (or stop) and
// gives the bucket back. It returns false, having counted the error, if
// the bucket could not be emptied.
func (fl *fillLink) deepIdle(stop *atomic.Bool, last uint64) bool {
	if !fl.try(fl.setBucket(false)) {
		return false
	}
	if fl.try(fl.arm(true)) {
		fl.idles.Add(1)
		// Traffic that came between the last read and arming woke no one.
		if p, ok := fl.trafficPackets(); !ok || p == last {
			fl.waitTraffic(stop)
		}
	}
	fl.try(fl.setBucket(true)) // first: until then the wire's late timers cost it time
	fl.try(fl.arm(false))
	return true
}

// readWire reads the wire class (1:1) as the lab made it: what
// setBucket(true) restores.
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

// openTap opens the packet socket that wakes the deep idle: a filter lets
// through only frames this end sends (one byte of each) other than filler
// frames (those still queued when the filler went into deep idle leave
// after it armed the tap, and must not wake it), and it is bound to the
// link for every protocol only while armed (arm).
func (fl *fillLink) openTap() error {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("packet socket: %w", err)
	}
	fl.tap = fd
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: skfAdOff + skfAdPkttype},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.PACKET_OUTGOING, Jt: 0, Jf: 3},
		{Code: unix.BPF_LD | unix.BPF_H | unix.BPF_ABS, K: 12}, // the EtherType
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: FillEtherType, Jt: 1, Jf: 0},
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
// it a copy of each frame the link sends) or to idleEtherType (disarmed: a
// protocol nothing in a lab sends, so the tap costs the lab's traffic
// nothing; a packet socket cannot be unbound), and empties its queue when
// disarming.
func (fl *fillLink) arm(on bool) error {
	proto := uint16(idleEtherType)
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
