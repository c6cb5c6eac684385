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
	"strings"
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/edtwire"

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
	ifnameA  = "wbl-a"
	ifnameB  = "wbl-b"
	ifnameRA = "wbl-ra" // R's end of the A–R link (Config.Router)
	ifnameRB = "wbl-rb" // R's end of the R–B link (Config.Router)
)

// end is one veth end of a lab: the host whose namespace holds it, its
// name and its addresses (addr6 only with Config.IPv6).
type end struct {
	h      *Host
	ifname string
	addr   netip.Prefix
	addr6  netip.Prefix
}

// link is a veth pair: a is created in its host's namespace with b's end
// placed straight into b's.
type link struct{ a, b end }

// links returns the lab's veth pairs: A–B, or A–R and B–R with a router.
func (l *Lab) links() []link {
	c := l.Config
	if l.R == nil {
		bits := c.net().Bits()
		return []link{{
			end{l.A, ifnameA, c.hostAddr(1, bits), addr6A},
			end{l.B, ifnameB, c.hostAddr(2, bits), addr6B},
		}}
	}
	return []link{
		{end{l.A, ifnameA, c.hostAddr(1, 31), rtrAddr6A}, end{l.R, ifnameRA, c.hostAddr(0, 31), rtrAddr6RA}},
		{end{l.B, ifnameB, c.hostAddr(2, 31), rtrAddr6B}, end{l.R, ifnameRB, c.hostAddr(3, 31), rtrAddr6RB}},
	}
}

// RouterA returns R's veth end towards A and its IPv4 address (wbl-ra,
// the lab network's own address, 198.18.0.0 by default): where A sends to
// reach R. ok is false when the lab has no router.
func (l *Lab) RouterA() (ifname string, addr netip.Addr, ok bool) {
	if l.R == nil {
		return "", netip.Addr{}, false
	}
	return ifnameRA, l.Config.hostAddr(0, 32).Addr(), true
}

// ends returns every veth end of the lab.
func (l *Lab) ends() []end {
	var out []end
	for _, lk := range l.links() {
		out = append(out, lk.a, lk.b)
	}
	return out
}

// hosts returns the lab's namespaces that exist (R only with a router).
func (l *Lab) hosts() []*Host {
	var out []*Host
	for _, h := range []*Host{l.A, l.B, l.R} {
		if h != nil {
			out = append(out, h)
		}
	}
	return out
}

type labSys struct {
	wire      *edtwire.Wire // the exact wire's forwarder (Config.Wire)
	filler    *Filler       // the filled wire's filler (Config.Wire)
	closeOnce sync.Once
	closeErr  error
}

type hostSys struct {
	ns netns.NsHandle // open handle on the namespace; closed by Lab.Close
	nl *netlink.Handle
}

// New creates a lab: two namespaces, a veth pair between them with
// addresses, lo up on both sides, and, when cfg.RateBPS is set, the shaping
// qdisc. With cfg.Router it creates three: A and B joined through a router
// R, with routes in A and B to each other via R and the shaping on R. On any error everything created so far is removed before New
// returns. ctx bounds the creation (including the tc command).
func New(ctx context.Context, cfg Config) (*Lab, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.MTU == 0 {
		cfg.MTU = DefaultMTU
	}
	if cfg.Wire == WireExact {
		cfg.Router = true
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
		if l.Config.Lab != "" {
			return LabNamespace(l.Config.Lab, end)
		}
		return nsName(os.Getpid(), start, hex.EncodeToString(rnd[:]), l.Config.Name, end)
	}
	c := l.Config
	l.A = &Host{Name: base("a"), Ifname: ifnameA, Addr: c.hostAddr(1, 32).Addr()}
	l.B = &Host{Name: base("b"), Ifname: ifnameB, Addr: c.hostAddr(2, 32).Addr()}
	if l.Config.Router {
		l.R = &Host{Name: base("r"), Ifname: ifnameRB, Addr: c.hostAddr(3, 32).Addr()}
	}
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"namespace a", func(context.Context) error { return l.A.createNS() }},
		{"namespace b", func(context.Context) error { return l.B.createNS() }},
		{"namespace r", l.createRouterNS},
		{"loopback", l.upLoopback},
		{"veth", l.addVeth},
		{"addresses", l.addAddrs},
		{"no dad", l.noDAD},
		{"no router solicitations", l.noRS},
		{"forwarding", l.forward},
		{"link up", l.upVeth},
		{"routes", l.addRoutes},
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

// createRouterNS creates R's namespace when the lab has a router.
func (l *Lab) createRouterNS(context.Context) error {
	if l.R == nil {
		return nil
	}
	return l.R.createNS()
}

func (l *Lab) upLoopback(context.Context) error {
	for _, h := range l.hosts() {
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
	for _, lk := range l.links() {
		veth := &netlink.Veth{
			LinkAttrs:     netlink.LinkAttrs{Name: lk.a.ifname, MTU: l.Config.MTU},
			PeerName:      lk.b.ifname,
			PeerMTU:       uint32(l.Config.MTU),
			PeerNamespace: netlink.NsFd(int(lk.b.h.sys.ns)),
		}
		if err := lk.a.h.sys.nl.LinkAdd(veth); err != nil {
			return fmt.Errorf("netlab: add veth %s/%s: %w", lk.a.ifname, lk.b.ifname, err)
		}
	}
	return nil
}

func (l *Lab) addAddrs(context.Context) error {
	for _, e := range l.ends() {
		list := []netip.Prefix{e.addr}
		if l.Config.IPv6 {
			list = append(list, e.addr6)
			if e.ifname == e.h.Ifname {
				e.h.Addr6 = e.addr6.Addr()
			}
		}
		for _, p := range list {
			if err := e.addAddr(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// addAddr adds p to the end's interface.
func (e end) addAddr(p netip.Prefix) error {
	link, err := e.h.sys.nl.LinkByName(e.ifname)
	if err != nil {
		return fmt.Errorf("netlab: find %s in %s: %w", e.ifname, e.h.Name, err)
	}
	a := &netlink.Addr{
		IPNet: &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())},
	}
	if p.Addr().Is6() {
		a.Flags = unix.IFA_F_NODAD // usable at once, no 1-2 s "tentative" wait
	}
	if err := e.h.sys.nl.AddrAdd(link, a); err != nil {
		return fmt.Errorf("netlab: add address %s to %s in %s: %w", p, e.ifname, e.h.Name, err)
	}
	return nil
}

// noDAD turns off IPv6 duplicate address detection on every veth end
// before it comes up, so that its link-local address (used by neighbour
// discovery) is usable at once instead of after about a second.
func (l *Lab) noDAD(context.Context) error {
	if !l.Config.IPv6 {
		return nil
	}
	for _, e := range l.ends() {
		p := "/proc/sys/net/ipv6/conf/" + e.ifname + "/accept_dad"
		// /proc/sys/net shows the namespace of the thread that opens it.
		if err := e.h.Do(func() error { return os.WriteFile(p, []byte("0"), 0o644) }); err != nil {
			return fmt.Errorf("netlab: disable DAD on %s in %s: %w", e.ifname, e.h.Name, err)
		}
	}
	return nil
}

// noRS stops every veth end from soliciting routers: a lab has none, and
// the solicitations (every few seconds at first, then less often) are the
// only traffic an idle lab's wire would carry, each waking the filled
// wire's filler from its deep idle for FillFor.
func (l *Lab) noRS(context.Context) error {
	for _, e := range l.ends() {
		p := "/proc/sys/net/ipv6/conf/" + e.ifname + "/router_solicitations"
		err := e.h.Do(func() error { return os.WriteFile(p, []byte("0"), 0o644) })
		if err != nil && !errors.Is(err, os.ErrNotExist) { // no IPv6 in this kernel: nothing solicits
			return fmt.Errorf("netlab: no router solicitations on %s in %s: %w", e.ifname, e.h.Name, err)
		}
	}
	return nil
}

// forward turns on IP forwarding in R (and only there; a new namespace
// starts with it off), unless the lab is RelayOnly.
func (l *Lab) forward(context.Context) error {
	if l.R == nil || l.Config.RelayOnly || l.Config.Wire == WireExact {
		return nil
	}
	files := []string{"/proc/sys/net/ipv4/ip_forward"}
	if l.Config.IPv6 {
		files = append(files, "/proc/sys/net/ipv6/conf/all/forwarding")
	}
	for _, p := range files {
		if err := l.R.Do(func() error { return os.WriteFile(p, []byte("1"), 0o644) }); err != nil {
			return fmt.Errorf("netlab: enable forwarding (%s) in %s: %w", p, l.R.Name, err)
		}
	}
	return nil
}

func (l *Lab) upVeth(context.Context) error {
	for _, e := range l.ends() {
		link, err := e.h.sys.nl.LinkByName(e.ifname)
		if err != nil {
			return fmt.Errorf("netlab: find %s in %s: %w", e.ifname, e.h.Name, err)
		}
		if err := e.h.sys.nl.LinkSetUp(link); err != nil {
			return fmt.Errorf("netlab: set %s up in %s: %w", e.ifname, e.h.Name, err)
		}
	}
	return nil
}

// addRoutes gives A and B, when there is a router that forwards, one route
// each: to the other host's link via R's address on their own link.
// Nothing else is routed; there is no default route.
func (l *Lab) addRoutes(context.Context) error {
	if l.R == nil || l.Config.RelayOnly {
		return nil
	}
	lks := l.links()
	for i, lk := range lks {
		other := lks[1-i].a // the far host's end
		routes := []struct{ dst, gw netip.Prefix }{{other.addr, lk.b.addr}}
		if l.Config.IPv6 {
			routes = append(routes, struct{ dst, gw netip.Prefix }{other.addr6, lk.b.addr6})
		}
		for _, r := range routes {
			if err := lk.a.addRoute(r.dst.Masked(), r.gw.Addr()); err != nil {
				return err
			}
		}
	}
	return nil
}

// addRoute adds a route to dst via gw on the end's interface.
func (e end) addRoute(dst netip.Prefix, gw netip.Addr) error {
	link, err := e.h.sys.nl.LinkByName(e.ifname)
	if err != nil {
		return fmt.Errorf("netlab: find %s in %s: %w", e.ifname, e.h.Name, err)
	}
	r := &netlink.Route{
		LinkIndex: link.Attrs().Index,
		Dst:       &net.IPNet{IP: dst.Addr().AsSlice(), Mask: net.CIDRMask(dst.Bits(), dst.Addr().BitLen())},
		Gw:        gw.AsSlice(),
	}
	if err := e.h.sys.nl.RouteAdd(r); err != nil {
		return fmt.Errorf("netlab: add route to %s via %s in %s: %w", dst, gw, e.h.Name, err)
	}
	return nil
}

// shapedEnds returns the veth ends whose egress gets the shaper: A's (and
// B's with ShapeBothWays), or with a router R's towards B (and towards A).
func (l *Lab) shapedEnds() []end {
	lks := l.links()
	if l.R == nil {
		out := []end{lks[0].a}
		if l.Config.ShapeBothWays {
			out = append(out, lks[0].b)
		}
		return out
	}
	out := []end{lks[1].b}
	if l.Config.ShapeBothWays {
		out = append(out, lks[0].b)
	}
	return out
}

// shape installs the Ethernet-wire emulation on the shaped ends (see
// shapedEnds). GSO is limited to one segment per skb through netlink; the
// qdisc is installed by running tc, because vishvananda/netlink v1.3.1
// cannot set tbf's per-packet overhead. With a router every end gets
// gso_max_segs 1, not only R's: R forwards the skbs A and B send as they
// are (tbf's one-frame mtu segments any GSO skb that still reaches it).
func (l *Lab) shape(ctx context.Context) error {
	if l.Config.RateBPS == 0 {
		return nil
	}
	segs := l.shapedEnds()
	if l.R != nil {
		segs = l.ends()
	}
	for _, e := range segs {
		link, err := e.h.sys.nl.LinkByName(e.ifname)
		if err != nil {
			return fmt.Errorf("netlab: find %s in %s: %w", e.ifname, e.h.Name, err)
		}
		if err := e.h.sys.nl.LinkSetGSOMaxSegs(link, 1); err != nil {
			return fmt.Errorf("netlab: set gso_max_segs 1 on %s in %s: %w", e.ifname, e.h.Name, err)
		}
	}
	if l.Config.Wire == WireExact {
		return l.startWire()
	}
	for _, e := range l.shapedEnds() {
		for _, args := range l.Config.tcCommands(e.h.Name, e.ifname) {
			out, err := exec.CommandContext(ctx, "tc", args...).CombinedOutput()
			if err != nil {
				return fmt.Errorf("netlab: tc %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
			}
		}
		e.h.Shaped = true
	}
	if l.Config.Wire == WireFilled && l.Config.Lab == "" {
		return l.startFiller()
	}
	return nil
}

// waitCarrier waits (at most 2 s) until every veth end reports carrier, so
// that the first packet a test sends is not dropped.
func (l *Lab) waitCarrier(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for _, e := range l.ends() {
		for {
			link, err := e.h.sys.nl.LinkByName(e.ifname)
			if err != nil {
				return fmt.Errorf("netlab: find %s in %s: %w", e.ifname, e.h.Name, err)
			}
			if link.Attrs().OperState == netlink.OperUp {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("netlab: waiting for carrier on %s in %s: %w", e.ifname, e.h.Name, ctx.Err())
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	return nil
}

// Close removes the lab's namespaces (two, or three with a router); the
// veth pairs and qdiscs go with them. It is safe to call more than once
// and on a partly built lab.
func (l *Lab) Close() error {
	l.sys.closeOnce.Do(func() {
		var errs []error
		if l.sys.wire != nil {
			errs = append(errs, l.sys.wire.Close())
		}
		if l.sys.filler != nil {
			errs = append(errs, l.sys.filler.Close())
		}
		for _, h := range l.hosts() {
			if err := h.closeHandles(); err != nil {
				errs = append(errs, err)
			}
			if err := deleteNS(h.Name); err != nil {
				errs = append(errs, err)
			}
		}
		l.sys.closeErr = errors.Join(errs...)
	})
	return l.sys.closeErr
}

// closeHandles closes the host's netlink and namespace handles.
func (h *Host) closeHandles() error {
	if h.sys.nl != nil {
		h.sys.nl.Close()
	}
	if h.sys.ns.IsOpen() {
		if err := h.sys.ns.Close(); err != nil {
			return fmt.Errorf("netlab: close handle of %s: %w", h.Name, err)
		}
	}
	return nil
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
