package labctl

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/netlab"
)

// OnThisMachine says whether ip is the address of a network namespace of
// this machine, and so of a far end that reads this machine's clock (a
// network namespace has its own addresses and routes, not its own wall
// clock): a host of a lab `wirebench lab up` made, from the lab's state
// file, whose namespace still exists; or, when this process may look into
// other namespaces (root), any lab namespace netlab made with ip on an
// interface (a lab a test made: netlab.AddrNamespace). where names which,
// in words.
func OnThisMachine(ip netip.Addr) (where string, ok bool) {
	ip = ip.Unmap()
	if where, ok := labHostAddr(StateDir, ip, netlab.LabNamespaces); ok {
		return where, true
	}
	if ns, err := netlab.AddrNamespace(ip); err == nil && ns != "" {
		return "an address in lab namespace " + ns + " of this machine (a namespace shares the machine's clock)", true
	}
	return "", false
}

// labHostAddr looks for ip among the hosts of the labs whose state files
// are in dir and whose namespaces exist (namespaces lists a lab's).
func labHostAddr(dir string, ip netip.Addr, namespaces func(lab string) ([]string, error)) (string, bool) {
	paths, _ := filepath.Glob(filepath.Join(dir, "lab-*.json"))
	for _, p := range paths {
		st, err := ReadStateFile(p)
		if err != nil || st.Kind != "lab" || st.Name == "" || filepath.Base(p) != "lab-"+st.Name+".json" {
			continue // not a lab's own state file (a relay's, a filler's)
		}
		nss, err := namespaces(st.Name)
		if err != nil {
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(st.Hosts)) {
			h := st.Hosts[name]
			if hostAddr(h.Addr) == ip && slices.Contains(nss, h.Namespace) {
				return fmt.Sprintf("the address of host %s of lab %s on this machine (namespace %s, which shares the machine's clock)", name, st.Name, h.Namespace), true
			}
		}
	}
	return "", false
}

// hostAddr parses a state file's address, with or without its prefix
// length.
func hostAddr(s string) netip.Addr {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Addr().Unmap()
	}
	a, _ := netip.ParseAddr(strings.TrimSpace(s))
	return a.Unmap()
}

// SameClock decides the clock from --same-clock: given (set) as true,
// the user says both ends read one clock (two hosts with a shared time
// reference the user vouches for); given as false, the user says they do
// not, whatever the address; not given, it is found: host is a loopback
// address, one of this machine's own interface addresses, or the address
// of a network namespace of this machine (a lab host: OnThisMachine),
// and the reason says it was found so.
func SameClock(ctx context.Context, host string, set, told bool) (bool, string) {
	switch {
	case told:
		return true, "--same-clock: the user says both ends read the same clock"
	case set:
		return false, "--same-clock=false: the user says the two ends' clocks may differ"
	}
	ips, err := clockPeerAddrs(ctx, host)
	if err != nil {
		return false, fmt.Sprintf("%s could not be resolved to tell (%v)", host, err)
	}
	own, err := net.InterfaceAddrs()
	if err != nil {
		own = nil // only loopback can be told then
	}
	for _, ip := range ips {
		if local, why := IsLocalAddr(ip, own); local {
			return true, fmt.Sprintf("found: %s is %s (--same-clock=false to not count it)", ip, why)
		}
	}
	for _, ip := range ips {
		if where, ok := OnThisMachine(ip); ok {
			return true, fmt.Sprintf("found: %s is %s (--same-clock=false to not count it)", ip, where)
		}
	}
	return false, fmt.Sprintf("%s is not an address of this machine or of a network namespace on it, so its clock may differ from ours (give --same-clock when it reads the same clock)", host)
}

// clockPeerAddrs returns host's addresses (host itself when it is one).
func clockPeerAddrs(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip.Unmap()}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	for i := range addrs {
		addrs[i] = addrs[i].Unmap()
	}
	return addrs, err
}

// IsLocalAddr says whether ip is loopback or one of own (this machine's
// interface addresses), and which.
func IsLocalAddr(ip netip.Addr, own []net.Addr) (bool, string) {
	if ip.IsLoopback() {
		return true, "loopback"
	}
	for _, a := range own {
		if n, ok := a.(*net.IPNet); ok {
			if o, ok := netip.AddrFromSlice(n.IP); ok && o.Unmap() == ip.Unmap() {
				return true, "an address of this machine"
			}
		}
	}
	return false, ""
}
