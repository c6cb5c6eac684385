//go:build linux

package netlab

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// AddrNamespace returns the network namespace of a lab of this machine
// (one netlab made: named wbl-…, under /run/netns) that has ip on one of
// its interfaces, or "" when none has. Other namespaces are not looked
// at: an address that a container's namespace happens to share with a
// device elsewhere says nothing about where the device is. Reading
// another namespace's addresses needs root (CAP_SYS_ADMIN); without it
// the error says so.
func AddrNamespace(ip netip.Addr) (string, error) {
	entries, err := os.ReadDir(nsDir)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("netlab: list namespaces: %w", err)
	}
	ip = ip.Unmap()
	var firstErr error
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), Prefix) {
			continue
		}
		has, err := nsHasAddr(e.Name(), ip)
		if err != nil {
			firstErr = cmpOr(firstErr, err)
			continue
		}
		if has {
			return e.Name(), nil
		}
	}
	return "", firstErr
}

// nsHasAddr says whether the named namespace ns has ip on an interface.
func nsHasAddr(ns string, ip netip.Addr) (bool, error) {
	handle, err := netns.GetFromPath(filepath.Join(nsDir, ns))
	if err != nil {
		return false, fmt.Errorf("netlab: open namespace %s: %w", ns, err)
	}
	defer handle.Close()
	nl, err := netlink.NewHandleAt(handle, unix.NETLINK_ROUTE)
	if err != nil {
		return false, fmt.Errorf("netlab: netlink handle in %s: %w", ns, err)
	}
	defer nl.Close()
	addrs, err := nl.AddrList(nil, netlink.FAMILY_ALL)
	if err != nil {
		return false, fmt.Errorf("netlab: list addresses in %s: %w", ns, err)
	}
	for _, a := range addrs {
		if got, ok := netip.AddrFromSlice(a.IP); ok && got.Unmap() == ip {
			return true, nil
		}
	}
	return false, nil
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
