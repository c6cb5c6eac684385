package cli

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"
)

// sameClock says whether a far end at host reads this machine's clock, so
// that its receive times minus our send stamps are one-way delays, and
// why. It does when host is a loopback address or one of this machine's
// own interface addresses, or when the user says so (--same-clock: a lab
// namespace on this host, whose addresses are not this namespace's, or two
// hosts with a shared time reference the user vouches for).
func sameClock(ctx context.Context, host string, told bool) (bool, string) {
	if told {
		return true, "--same-clock: the user says both ends read the same clock"
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
		if local, why := isLocalAddr(ip, own); local {
			return true, fmt.Sprintf("%s is %s", ip, why)
		}
	}
	return false, fmt.Sprintf("%s is not an address of this machine, so its clock may differ from ours (give --same-clock when it reads the same clock, as a lab on this host does)", host)
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

// isLocalAddr says whether ip is loopback or one of own (this machine's
// interface addresses), and which.
func isLocalAddr(ip netip.Addr, own []net.Addr) (bool, string) {
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
