//go:build !linux

package hostdrops

import "net/netip"

func read(netip.Addr) Counters {
	return Counters{Why: "send-path drop counters are not available on this OS"}
}
