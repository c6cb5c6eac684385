//go:build linux

package netlab

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// nsDir is where named namespaces live; `ip netns` uses the same directory.
const nsDir = "/run/netns"

// Veth end names. Each end lives only inside its own namespace (the pair is
// created inside A with its peer placed directly into B), so the names never
// meet the root namespace and every lab can use the same ones.
const (
	ifnameA = "wbl-a"
	ifnameB = "wbl-b"
)

type labSys struct {
	closeOnce sync.Once
	closeErr  error
}

type hostSys struct {
	ns netns.NsHandle // open handle on the namespace; closed by Lab.Close
	nl *netlink.Handle
}

// New creates a lab: two namespaces, a veth pair between them with
// addresses, lo up on both sides, and, when cfg.RateBPS is set, the shaping
// qdisc. On any error everything created so far is removed before New
// returns. ctx bounds the creation (including the tc command).
func New(ctx context.Context, cfg Config) (*Lab, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.MTU == 0 {
		cfg.MTU = DefaultMTU
	}
	if cfg.RateBPS != 0 {
		cfg.Latency = cfg.latency()
		cfg.Burst = cfg.burst()
	}
	l := &Lab{Config: cfg}
	if err := l.build(ctx); err != nil {
		if cerr := l.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("netlab: cleaning up after failed create: %w", cerr))
		}
		return nil, err
	}
	return l, nil
}

// build runs the creation steps in order; l.Close undoes any prefix of them.
func (l *Lab) build(ctx context.Context) error {
	start, err := procStartTime(os.Getpid())
	if err != nil {
		return err
	}
	var rnd [3]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return fmt.Errorf("netlab: random name suffix: %w", err)
	}
	base := func(end string) string {
		return nsName(os.Getpid(), start, hex.EncodeToString(rnd[:]), l.Config.Name, end)
	}
	l.A = &Host{Name: base("a"), Ifname: ifnameA, Addr: addrA.Addr()}
	l.B = &Host{Name: base("b"), Ifname: ifnameB, Addr: addrB.Addr()}
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"namespace a", func(context.Context) error { return l.A.createNS() }},
		{"namespace b", func(context.Context) error { return l.B.createNS() }},
		{"loopback", l.upLoopback},
		{"veth", l.addVeth},
		{"addresses", l.addAddrs},
		{"no dad", l.noDAD},
		{"link up", l.upVeth},
		{"shaping", l.shape},
		{"carrier", l.waitCarrier},
	}
	for _, s := range steps {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("netlab: before step %s: %w", s.name, err)
		}
		if err := s.fn(ctx); err != nil {
			return err
		}
		if l.Config.hook != nil {
			if err := l.Config.hook(s.name); err != nil {
				return fmt.Errorf("netlab: after step %s: %w", s.name, err)
			}
		}
	}
	return nil
}

// createNS creates the named namespace h.Name and opens a netlink handle in
// it. Creating a namespace moves the calling thread into it, so this is done
// on a dedicated locked thread that is moved back afterwards (or, if that
// fails, left to die with its goroutine).
func (h *Host) createNS() error {
	type result struct {
		ns  netns.NsHandle
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			ch <- result{err: fmt.Errorf("netlab: get current namespace: %w", err)}
			runtime.UnlockOSThread()
			return
		}
		defer orig.Close()
		ns, err := netns.NewNamed(h.Name)
		if rerr := netns.Set(orig); rerr != nil {
			// The thread is in an unknown namespace: never unlock it, so
			// the runtime discards it when this goroutine exits.
			ch <- result{ns: ns, err: errors.Join(err, fmt.Errorf("netlab: restore namespace: %w", rerr))}
			return
		}
		runtime.UnlockOSThread()
		if err != nil {
			err = fmt.Errorf("netlab: create namespace %s: %w", h.Name, err)
		}
		ch <- result{ns: ns, err: err}
	}()
	r := <-ch
	h.sys.ns = r.ns
	if r.err != nil {
		return r.err
	}
	nl, err := netlink.NewHandleAt(h.sys.ns, unix.NETLINK_ROUTE)
	if err != nil {
		return fmt.Errorf("netlab: netlink handle in %s: %w", h.Name, err)
	}
	h.sys.nl = nl
	return nil
}

func (l *Lab) upLoopback(context.Context) error {
	for _, h := range []*Host{l.A, l.B} {
		lo, err := h.sys.nl.LinkByName("lo")
		if err != nil {
			return fmt.Errorf("netlab: find lo in %s: %w", h.Name, err)
		}
		if err := h.sys.nl.LinkSetUp(lo); err != nil {
			return fmt.Errorf("netlab: set lo up in %s: %w", h.Name, err)
		}
	}
	return nil
}

func (l *Lab) addVeth(context.Context) error {
	veth := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: l.A.Ifname, MTU: l.Config.MTU},
		PeerName:      l.B.Ifname,
		PeerMTU:       uint32(l.Config.MTU),
		PeerNamespace: netlink.NsFd(int(l.B.sys.ns)),
	}
	if err := l.A.sys.nl.LinkAdd(veth); err != nil {
		return fmt.Errorf("netlab: add veth %s/%s: %w", l.A.Ifname, l.B.Ifname, err)
	}
	return nil
}

func (l *Lab) addAddrs(context.Context) error {
	type hostAddr struct {
		h *Host
		p netip.Prefix
	}
	list := []hostAddr{{l.A, addrA}, {l.B, addrB}}
	if l.Config.IPv6 {
		l.A.Addr6, l.B.Addr6 = addr6A.Addr(), addr6B.Addr()
		list = append(list, hostAddr{l.A, addr6A}, hostAddr{l.B, addr6B})
	}
	for _, ha := range list {
		link, err := ha.h.sys.nl.LinkByName(ha.h.Ifname)
		if err != nil {
			return fmt.Errorf("netlab: find %s in %s: %w", ha.h.Ifname, ha.h.Name, err)
		}
		a := &netlink.Addr{
			IPNet: &net.IPNet{IP: ha.p.Addr().AsSlice(), Mask: net.CIDRMask(ha.p.Bits(), ha.p.Addr().BitLen())},
		}
		if ha.p.Addr().Is6() {
			a.Flags = unix.IFA_F_NODAD // usable at once, no 1-2 s "tentative" wait
		}
		if err := ha.h.sys.nl.AddrAdd(link, a); err != nil {
			return fmt.Errorf("netlab: add address %s to %s in %s: %w", ha.p, ha.h.Ifname, ha.h.Name, err)
		}
	}
	return nil
}

// noDAD turns off IPv6 duplicate address detection on both veth ends
// before they come up, so that their link-local addresses (used by neighbour
// discovery) are usable at once instead of after about a second.
func (l *Lab) noDAD(context.Context) error {
	if !l.Config.IPv6 {
		return nil
	}
	for _, h := range []*Host{l.A, l.B} {
		p := "/proc/sys/net/ipv6/conf/" + h.Ifname + "/accept_dad"
		// /proc/sys/net shows the namespace of the thread that opens it.
		if err := h.Do(func() error { return os.WriteFile(p, []byte("0"), 0o644) }); err != nil {
			return fmt.Errorf("netlab: disable DAD on %s in %s: %w", h.Ifname, h.Name, err)
		}
	}
	return nil
}

func (l *Lab) upVeth(context.Context) error {
	for _, h := range []*Host{l.A, l.B} {
		link, err := h.sys.nl.LinkByName(h.Ifname)
		if err != nil {
			return fmt.Errorf("netlab: find %s in %s: %w", h.Ifname, h.Name, err)
		}
		if err := h.sys.nl.LinkSetUp(link); err != nil {
			return fmt.Errorf("netlab: set %s up in %s: %w", h.Ifname, h.Name, err)
		}
	}
	return nil
}

// shape installs the Ethernet-wire emulation on A's egress (and B's with
// ShapeBothWays). GSO is limited to one segment per skb through netlink; the
// qdisc is installed by running tc, because vishvananda/netlink v1.3.1
// cannot attach a size table (TCA_STAB) to a qdisc.
func (l *Lab) shape(ctx context.Context) error {
	if l.Config.RateBPS == 0 {
		return nil
	}
	hosts := []*Host{l.A}
	if l.Config.ShapeBothWays {
		hosts = append(hosts, l.B)
	}
	for _, h := range hosts {
		link, err := h.sys.nl.LinkByName(h.Ifname)
		if err != nil {
			return fmt.Errorf("netlab: find %s in %s: %w", h.Ifname, h.Name, err)
		}
		if err := h.sys.nl.LinkSetGSOMaxSegs(link, 1); err != nil {
			return fmt.Errorf("netlab: set gso_max_segs 1 on %s in %s: %w", h.Ifname, h.Name, err)
		}
		args := l.Config.tcQdiscArgs(h.Name, h.Ifname)
		out, err := exec.CommandContext(ctx, "tc", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("netlab: tc %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
		h.Shaped = true
	}
	return nil
}

// waitCarrier waits (at most 2 s) until both veth ends report carrier, so
// that the first packet a test sends is not dropped.
func (l *Lab) waitCarrier(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for _, h := range []*Host{l.A, l.B} {
		for {
			link, err := h.sys.nl.LinkByName(h.Ifname)
			if err != nil {
				return fmt.Errorf("netlab: find %s in %s: %w", h.Ifname, h.Name, err)
			}
			if link.Attrs().OperState == netlink.OperUp {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("netlab: waiting for carrier on %s in %s: %w", h.Ifname, h.Name, ctx.Err())
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	return nil
}

// Close removes both namespaces; the veth pair and qdiscs go with them. It
// is safe to call more than once and on a partly built lab.
func (l *Lab) Close() error {
	l.sys.closeOnce.Do(func() {
		var errs []error
		for _, h := range []*Host{l.A, l.B} {
			if h == nil {
				continue
			}
			if h.sys.nl != nil {
				h.sys.nl.Close()
			}
			if h.sys.ns.IsOpen() {
				if err := h.sys.ns.Close(); err != nil {
					errs = append(errs, fmt.Errorf("netlab: close handle of %s: %w", h.Name, err))
				}
			}
			if err := deleteNS(h.Name); err != nil {
				errs = append(errs, err)
			}
		}
		l.sys.closeErr = errors.Join(errs...)
	})
	return l.sys.closeErr
}

// deleteNS removes a named namespace: unmount its bind mount, remove the
// file. Either may already be gone (a creation that failed halfway).
func deleteNS(name string) error {
	p := filepath.Join(nsDir, name)
	if err := unix.Unmount(p, unix.MNT_DETACH); err != nil &&
		!errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("netlab: unmount namespace %s: %w", name, err)
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("netlab: remove namespace %s: %w", name, err)
	}
	return nil
}

// Do runs fn on a locked OS thread inside the host's namespace and returns
// its error. Sockets fn creates belong to the namespace for their whole life
// and may be used from any goroutine afterwards: this is how tests open
// listeners and dialers in a lab. Goroutines fn starts do not run in the
// namespace. The calling goroutine's thread is never moved: fn runs on a
// goroutine of its own, which, if the thread cannot be moved back to its
// original namespace, exits still locked so that the runtime discards the
// thread. A panic in fn is re-raised in the caller.
func (h *Host) Do(fn func() error) error {
	type result struct {
		err   error
		panic any
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: fmt.Errorf("netlab: get current namespace: %w", err)}
			return
		}
		defer orig.Close()
		if err := netns.Set(h.sys.ns); err != nil {
			if rerr := netns.Set(orig); rerr == nil {
				runtime.UnlockOSThread()
			}
			ch <- result{err: fmt.Errorf("netlab: enter namespace %s: %w", h.Name, err)}
			return
		}
		var r result
		func() {
			defer func() { r.panic = recover() }()
			r.err = fn()
		}()
		if err := netns.Set(orig); err != nil {
			r.err = errors.Join(r.err, fmt.Errorf("netlab: leave namespace %s: %w", h.Name, err))
			ch <- r // thread stays locked and dies with this goroutine
			return
		}
		runtime.UnlockOSThread()
		ch <- r
	}()
	r := <-ch
	if r.panic != nil {
		panic(r.panic)
	}
	return r.err
}

// CleanupStale removes every namespace whose name starts with Prefix and
// whose creating process (PID and start time, from the name) is no longer
// running. It returns the names it removed. Namespaces of live processes,
// this one included, are left alone.
func CleanupStale() (removed []string, err error) {
	entries, err := os.ReadDir(nsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("netlab: list namespaces: %w", err)
	}
	var errs []error
	for _, e := range entries {
		pid, start, ok := parseNSName(e.Name())
		if !ok || processAlive(pid, start) {
			continue
		}
		if err := deleteNS(e.Name()); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, e.Name())
	}
	return removed, errors.Join(errs...)
}

// processAlive reports whether process pid exists and started at start
// (clock ticks since boot). A different start time means the PID was reused.
func processAlive(pid int, start uint64) bool {
	got, err := procStartTime(pid)
	if err != nil {
		// No /proc entry: dead. Anything else (e.g. /proc unreadable) is
		// treated as alive; never remove what might be in use.
		return !errors.Is(err, os.ErrNotExist)
	}
	return got == start
}

// procStartTime reads field 22 (starttime) of /proc/<pid>/stat.
func procStartTime(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("netlab: read start time of pid %d: %w", pid, err)
	}
	return parseStatStart(string(b))
}

// parseStatStart extracts starttime from the text of /proc/<pid>/stat. The
// command name (field 2) is in parentheses and may contain spaces or ')', so
// fields are counted from the last ')'.
func parseStatStart(stat string) (uint64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("netlab: malformed /proc stat: no ')'")
	}
	f := strings.Fields(stat[i+1:]) // f[0] is field 3 (state)
	if len(f) < 20 {
		return 0, fmt.Errorf("netlab: malformed /proc stat: %d fields after comm", len(f))
	}
	v, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("netlab: malformed /proc stat starttime: %w", err)
	}
	return v, nil
}

// Available reports whether labs can be made here: nil if this process may
// create network namespaces and configure them over netlink, and `tc` and
// `ip` (iproute2) are installed. The error says what is missing.
func Available() error {
	for _, bin := range []string{"ip", "tc"} {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Errorf("netlab: %s (iproute2) not found: %w", bin, err)
		}
	}
	ch := make(chan error, 1)
	go func() {
		// This thread ends up in a throwaway namespace; it is never
		// unlocked, so the runtime discards it (and the namespace with it).
		runtime.LockOSThread()
		ns, err := netns.New()
		if err != nil {
			ch <- fmt.Errorf("netlab: cannot create a network namespace (need root or CAP_SYS_ADMIN+CAP_NET_ADMIN): %w", err)
			return
		}
		defer ns.Close()
		nl, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
		if err != nil {
			ch <- fmt.Errorf("netlab: netlink in a new namespace: %w", err)
			return
		}
		defer nl.Close()
		lo, err := nl.LinkByName("lo")
		if err == nil {
			err = nl.LinkSetUp(lo)
		}
		if err != nil {
			ch <- fmt.Errorf("netlab: configure a link over netlink: %w", err)
			return
		}
		ch <- nil
	}()
	return <-ch
}
