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
	if dst.Unmap().Is4() {
		c.SndbufErrors, err = readCounter(snmpPath, parseSNMP)
	} else {
		c.SndbufErrors, err = readCounter(snmp6Path, parseSNMP6)
	}
	if err == nil {
		c.SndbufOK = true
	} else {
		whys = append(whys, "UDP SndbufErrors: not available: "+err.Error())
	}
	if err := readQdisc(dst, &c); err == nil {
		c.QdiscOK = true
	} else {
		whys = append(whys, "egress qdisc drops: not available: "+err.Error())
	}
	c.Why = strings.Join(whys, "; ")
	return c
}

// readCounter reads the file at path and parses one counter from it.
func readCounter(path string, parse func([]byte) (uint64, error)) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return parse(b)
}

// parseSNMP reads Udp SndbufErrors from /proc/net/snmp.
func parseSNMP(b []byte) (uint64, error) {
	udp, err := UDPTable(b)
	if err != nil {
		return 0, err
	}
	v, ok := udp["SndbufErrors"]
	if !ok {
		return 0, fmt.Errorf("no Udp SndbufErrors in the snmp table")
	}
	return v, nil
}

// parseSNMP6 reads Udp6SndbufErrors from /proc/net/snmp6 (name value
// lines).
func parseSNMP6(b []byte) (uint64, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "Udp6SndbufErrors" {
			return strconv.ParseUint(f[1], 10, 64)
		}
	}
	return 0, fmt.Errorf("no Udp6SndbufErrors in the snmp6 table")
}

// readQdisc finds the interface the route to dst leaves by and reads the
// drop counter of its root qdisc and its tx_dropped.
func readQdisc(dst netip.Addr, c *Counters) error {
	routes, err := netlink.RouteGet(net.IP(dst.Unmap().AsSlice()))
	if err != nil || len(routes) == 0 {
		return fmt.Errorf("no route to %s: %v", dst, err)
	}
	link, err := netlink.LinkByIndex(routes[0].LinkIndex)
	if err != nil {
		return fmt.Errorf("interface %d: %w", routes[0].LinkIndex, err)
	}
	c.Interface = link.Attrs().Name
	if st := link.Attrs().Statistics; st != nil {
		c.TxDropped = st.TxDropped
	} else {
		return fmt.Errorf("%s has no statistics", c.Interface)
	}
	qs, err := netlink.QdiscList(link)
	if err != nil {
		return fmt.Errorf("qdiscs of %s: %w", c.Interface, err)
	}
	for _, q := range qs {
		a := q.Attrs()
		if a.Parent != netlink.HANDLE_ROOT {
			continue
		}
		c.Qdisc = q.Type()
		if a.Statistics == nil || a.Statistics.Queue == nil {
			return fmt.Errorf("root qdisc %s of %s has no statistics", c.Qdisc, c.Interface)
		}
		c.QdiscDrops = uint64(a.Statistics.Queue.Drops)
		return nil
	}
	return fmt.Errorf("%s has no root qdisc", c.Interface)
}
