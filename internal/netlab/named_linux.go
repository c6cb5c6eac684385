//go:build linux

package netlab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Release closes the lab's handles and leaves its namespaces (and so its
// links and qdiscs) in place, for a persistent lab (Config.Lab) that must
// outlive this process. After Release, Close does nothing.
func (l *Lab) Release() {
	l.sys.closeOnce.Do(func() {
		for _, h := range l.hosts() {
			_ = h.closeHandles() // nothing to report: the namespaces stay
		}
	})
}

// LabNamespaces returns the namespaces of the named lab lab that exist now
// (wbl-lab-<lab>-*, from /run/netns), sorted. It reads only the kernel's
// view, so it finds a crashed run's leftovers too.
func LabNamespaces(lab string) ([]string, error) {
	entries, err := os.ReadDir(nsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("netlab: list namespaces: %w", err)
	}
	var out []string
	p := LabPrefix + lab + "-"
	for _, e := range entries {
		if rest, ok := strings.CutPrefix(e.Name(), p); ok && !strings.Contains(rest, "-") {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// NamespacePIDs returns the processes whose network namespace is the named
// namespace ns (what `ip netns pids` shows): any of their threads' /proc
// ns/net link matching the namespace file's device and inode.
func NamespacePIDs(ns string) ([]int, error) {
	var want unix.Stat_t
	if err := unix.Stat(filepath.Join(nsDir, ns), &want); err != nil {
		return nil, fmt.Errorf("netlab: stat namespace %s: %w", ns, err)
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("netlab: list processes: %w", err)
	}
	var out []int
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		var st unix.Stat_t
		if unix.Stat("/proc/"+p.Name()+"/ns/net", &st) != nil {
			continue // gone, or a kernel thread
		}
		if st.Dev == want.Dev && st.Ino == want.Ino {
			out = append(out, pid)
		}
	}
	return out, nil
}

// RemoveLab removes the named lab lab as the kernel shows it: every process
// still running in one of its namespaces gets SIGTERM, and SIGKILL if it
// has not exited within grace; then the namespaces are deleted, and their
// veth pairs and qdiscs with them (a namespace lives on while a process is
// in it, which is why the processes go first). It returns the namespaces
// it deleted and the processes it signalled. No state file is needed.
func RemoveLab(ctx context.Context, lab string, grace time.Duration) (removed []string, killed []int, err error) {
	if err := ValidateLabName(lab); err != nil {
		return nil, nil, err
	}
	names, err := LabNamespaces(lab)
	if err != nil {
		return nil, nil, err
	}
	var errs []error
	for _, ns := range names {
		pids, err := NamespacePIDs(ns)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		killed = append(killed, pids...)
	}
	for _, pid := range killed {
		_ = unix.Kill(pid, unix.SIGTERM) // ESRCH: already gone
	}
	deadline := time.Now().Add(grace)
	for _, pid := range killed {
		for unix.Kill(pid, 0) == nil && time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
		if unix.Kill(pid, 0) == nil {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	}
	for _, ns := range names {
		if err := deleteNS(ns); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, ns)
	}
	return removed, killed, errors.Join(errs...)
}

// StartIn starts cmd inside the named namespace ns (like `ip netns exec`,
// without remounting /sys): the fork happens on a thread moved into the
// namespace, and the child inherits it. The caller waits for cmd.
func StartIn(ns string, cmd *exec.Cmd) error {
	handle, err := netns.GetFromPath(filepath.Join(nsDir, ns))
	if err != nil {
		return fmt.Errorf("netlab: open namespace %s: %w", ns, err)
	}
	defer handle.Close()
	h := &Host{Name: ns, sys: hostSys{ns: handle}}
	return h.Do(cmd.Start)
}

// Inspect reports the links (with addresses and root qdisc), extra routes
// and processes of the named namespace ns.
func Inspect(ns string) (NSInfo, error) {
	info := NSInfo{Name: ns}
	mounted, err := isNamespaceFile(filepath.Join(nsDir, ns))
	if err != nil {
		return info, err
	}
	if !mounted {
		info.Unmounted = true
		return info, nil
	}
	handle, err := netns.GetFromPath(filepath.Join(nsDir, ns))
	if err != nil {
		return info, fmt.Errorf("netlab: open namespace %s: %w", ns, err)
	}
	defer handle.Close()
	nl, err := netlink.NewHandleAt(handle, unix.NETLINK_ROUTE)
	if err != nil {
		return info, fmt.Errorf("netlab: netlink handle in %s: %w", ns, err)
	}
	defer nl.Close()
	links, err := nl.LinkList()
	if err != nil {
		return info, fmt.Errorf("netlab: list links in %s: %w", ns, err)
	}
	for _, lk := range links {
		a := lk.Attrs()
		if a.Name == "lo" {
			continue
		}
		il := NSLink{Name: a.Name, Up: a.Flags&syscall.IFF_UP != 0, MTU: a.MTU}
		addrs, err := nl.AddrList(lk, netlink.FAMILY_ALL)
		if err != nil {
			return info, fmt.Errorf("netlab: list addresses of %s in %s: %w", a.Name, ns, err)
		}
		for _, ad := range addrs {
			if ad.IP.IsLinkLocalUnicast() {
				continue
			}
			il.Addrs = append(il.Addrs, ad.IPNet.String())
		}
		qds, err := nl.QdiscList(lk)
		if err != nil {
			return info, fmt.Errorf("netlab: list qdiscs of %s in %s: %w", a.Name, ns, err)
		}
		for _, q := range qds {
			if q.Attrs().Parent != netlink.HANDLE_ROOT {
				continue
			}
			il.Qdisc = q.Type()
			if st := q.Attrs().Statistics; st != nil && st.Queue != nil {
				il.Drops = uint64(st.Queue.Drops)
			}
			if t, ok := q.(*netlink.Tbf); ok {
				il.RateBPS = t.Rate * 8
			}
			if _, ok := q.(*netlink.Htb); ok {
				il.RateBPS = htbWireRate(nl, lk)
			}
		}
		info.Links = append(info.Links, il)
	}
	routes, err := nl.RouteList(nil, netlink.FAMILY_ALL)
	if err != nil {
		return info, fmt.Errorf("netlab: list routes in %s: %w", ns, err)
	}
	for _, r := range routes {
		if r.Gw == nil {
			continue // directly connected
		}
		dst := "default"
		if r.Dst != nil {
			dst = r.Dst.String()
		}
		info.Routes = append(info.Routes, dst+" via "+r.Gw.String())
	}
	info.PIDs, err = NamespacePIDs(ns)
	return info, err
}

// nsfsMagic is the file system magic of a mounted namespace (NSFS_MAGIC).
const nsfsMagic = 0x6e736673

// isNamespaceFile reports whether path has a namespace mounted on it; a
// plain file there is what `ip netns add` or a lab leaves when killed
// between creating the file and mounting the namespace.
func isNamespaceFile(path string) (bool, error) {
	var fs unix.Statfs_t
	if err := unix.Statfs(path, &fs); err != nil {
		return false, fmt.Errorf("netlab: stat namespace file %s: %w", path, err)
	}
	return fs.Type == nsfsMagic, nil
}

// htbWireRate returns the rate of the filled wire's HTB class directly
// under the root (the wire's class), in bit/s, or 0.
func htbWireRate(nl *netlink.Handle, lk netlink.Link) uint64 {
	cls, err := nl.ClassList(lk, 0)
	if err != nil {
		return 0
	}
	for _, c := range cls {
		if h, ok := c.(*netlink.HtbClass); ok && h.Attrs().Parent == netlink.HANDLE_ROOT {
			return h.Rate * 8
		}
	}
	return 0
}
