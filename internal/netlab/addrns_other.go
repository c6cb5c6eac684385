//go:build !linux

package netlab

import "net/netip"

// AddrNamespace returns "" and ErrNotSupported: labs (network
// namespaces) are Linux only.
func AddrNamespace(ip netip.Addr) (string, error) { return "", ErrNotSupported }
