package cli

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/wirebench/wirebench/internal/labctl"
)

// sameClock says whether a far end at host reads this machine's clock, so
// that its receive times minus our send stamps are one-way delays, and
// why: --same-clock given (told), or found (sameClockChoice with the flag
// not given).
func sameClock(ctx context.Context, host string, told bool) (bool, string) {
	return sameClockChoice(ctx, host, told, told)
}

// sameClockChoice decides the clock from --same-clock: given (set) as true,
// the user says both ends read one clock (two hosts with a shared time
// reference the user vouches for); given as false, the user says they do
// not, whatever the address; not given, it is found: host is a loopback
// address, one of this machine's own interface addresses, or the address
// of a network namespace of this machine (a lab host: labctl.OnThisMachine),
// and the reason says it was found so.
func sameClockChoice(ctx context.Context, host string, set, told bool) (bool, string) {
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
		if local, why := isLocalAddr(ip, own); local {
			return true, fmt.Sprintf("found: %s is %s (--same-clock=false to not count it)", ip, why)
		}
	}
	for _, ip := range ips {
		if where, ok := labctl.OnThisMachine(ip); ok {
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
