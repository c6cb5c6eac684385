package labctl

import (
	"fmt"
	"maps"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"

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
