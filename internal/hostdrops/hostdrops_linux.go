//go:build linux

package hostdrops

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"github.com/vishvananda/netlink"
)

// The files are read through /proc/thread-self so that a thread moved into
// another network namespace (netns.Set) reads that namespace's counters.
const (
	snmpPath  = "/proc/thread-self/net/snmp"
	snmp6Path = "/proc/thread-self/net/snmp6"
)

func read(dst netip.Addr) Counters {
	var c Counters
	var whys []string
	var err error
	if c.SndbufErrors, err = readUDPCounter(dst, "SndbufErrors"); err == nil {
		c.SndbufOK = true
	} else {
		whys = append(whys, "UDP SndbufErrors: not available: "+err.Error())
	}
	loopback, err := readQdisc(dst, &c)
	if err == nil {
		c.QdiscOK = true
	} else {
		whys = append(whys, "egress qdisc drops: not available: "+err.Error())
	}
	if loopback {
		// The receiver is on this host: its socket's overflows are ours
		// to count (host-wide).
		c.RcvbufErrors, err = readUDPCounter(dst, "RcvbufErrors")
		c.RcvbufOK = err == nil
	}
	c.Why = strings.Join(whys, "; ")
	return c
}

// readUDPCounter reads the UDP counter name (e.g. SndbufErrors) of the
// family of dst: Udp from /proc/net/snmp, Udp6 from /proc/net/snmp6.
func readUDPCounter(dst netip.Addr, name string) (uint64, error) {
	path, parse := snmp6Path, parseSNMP6
	if dst.Unmap().Is4() {
		path, parse = snmpPath, parseSNMP
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return parse(b, name)
}

// parseSNMP reads the Udp counter name from /proc/net/snmp.
func parseSNMP(b []byte, name string) (uint64, error) {
	udp, err := UDPTable(b)
	if err != nil {
		return 0, err
	}
	v, ok := udp[name]
	if !ok {
		return 0, fmt.Errorf("no Udp %s in the snmp table", name)
	}
	return v, nil
}

// parseSNMP6 reads the counter Udp6 + name from /proc/net/snmp6 (name
// value lines).
func parseSNMP6(b []byte, name string) (uint64, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "Udp6"+name {
			return strconv.ParseUint(f[1], 10, 64)
		}
	}
	return 0, fmt.Errorf("no Udp6%s in the snmp6 table", name)
}

// readQdisc finds the interface the route to dst leaves by and reads the
// drop counter of its root qdisc and its tx_dropped; loopback says the
// interface is the loopback one (dst is this host).
func readQdisc(dst netip.Addr, c *Counters) (loopback bool, err error) {
	routes, err := netlink.RouteGet(net.IP(dst.Unmap().AsSlice()))
	if err != nil || len(routes) == 0 {
		return false, fmt.Errorf("no route to %s: %v", dst, err)
	}
	link, err := netlink.LinkByIndex(routes[0].LinkIndex)
	if err != nil {
		return false, fmt.Errorf("interface %d: %w", routes[0].LinkIndex, err)
	}
	c.Interface = link.Attrs().Name
	loopback = link.Attrs().Flags&net.FlagLoopback != 0
	if st := link.Attrs().Statistics; st != nil {
		c.TxDropped = st.TxDropped
	} else {
		return loopback, fmt.Errorf("%s has no statistics", c.Interface)
	}
	qs, err := netlink.QdiscList(link)
	if err != nil {
		return loopback, fmt.Errorf("qdiscs of %s: %w", c.Interface, err)
	}
	for _, q := range qs {
		a := q.Attrs()
		if a.Parent != netlink.HANDLE_ROOT {
			continue
		}
		c.Qdisc = q.Type()
		if a.Statistics == nil || a.Statistics.Queue == nil {
			return loopback, fmt.Errorf("root qdisc %s of %s has no statistics", c.Qdisc, c.Interface)
		}
		c.QdiscDrops = uint64(a.Statistics.Queue.Drops)
		return loopback, nil
	}
	return loopback, fmt.Errorf("%s has no root qdisc", c.Interface)
}
