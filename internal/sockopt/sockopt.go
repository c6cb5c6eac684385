// Package sockopt sets the per-socket options users choose with iperf's
// flags — socket buffers (-w), TCP MSS (-M), TCP_NODELAY (-N), TOS or traffic
// class (-S), TTL or hop limit (-T), congestion control (-C) — and reads back
// what the kernel granted.
//
// Options.Control is for net.Dialer.Control and net.ListenConfig.Control, so
// everything is in place before the SYN (the MSS option and the window scale
// are negotiated then); Options.Apply sets the same options on a socket that
// is already open, such as an accepted connection.
//
// Linux and darwin use golang.org/x/sys/unix, windows golang.org/x/sys/windows;
// an option a platform lacks fails with an error naming it, never silently.
package sockopt

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"syscall"
)

// Options are the settings for one socket. The zero value changes nothing.
type Options struct {
	// Buffer sets both SO_SNDBUF and SO_RCVBUF in bytes, as iperf's -w
	// does; 0 leaves the system's defaults (and its autotuning).
	Buffer int
	// MSS sets TCP_MAXSEG (bytes) before the connection is made; 0 leaves
	// it to the path.
	MSS int
	// NoDelay sets TCP_NODELAY. Go sets it on every TCP connection it makes
	// anyway; NoDelay makes that explicit for listeners and peers' requests.
	NoDelay bool
	// TOS is the IPv4 type-of-service byte (IP_TOS) and the IPv6 traffic
	// class (IPV6_TCLASS); it is set only when SetTOS is true, so 0 can be
	// asked for.
	TOS    int
	SetTOS bool
	// TTL is the IPv4 time-to-live (IP_TTL) and the IPv6 unicast hop limit
	// (IPV6_UNICAST_HOPS); 0 leaves the default.
	TTL int
	// Congestion names the TCP congestion control algorithm (Linux only;
	// "" leaves the system's default).
	Congestion string
	// ReuseAddr sets SO_REUSEADDR where it only means "bind despite
	// connections in TIME_WAIT" (not on windows), so a fixed client port
	// (--cport) can be used again at once; best effort.
	ReuseAddr bool
}

// IsZero reports whether o changes nothing.
func (o Options) IsZero() bool { return o == Options{} }

// Validate checks the values' ranges.
func (o Options) Validate() error {
	switch {
	case o.Buffer < 0 || o.Buffer > 1<<30:
		return fmt.Errorf("socket buffer %d bytes out of range 0-1 GiB", o.Buffer)
	case o.MSS != 0 && (o.MSS < 88 || o.MSS > 65495):
		return fmt.Errorf("TCP MSS %d out of range 88-65495 bytes", o.MSS)
	case o.SetTOS && (o.TOS < 0 || o.TOS > 255):
		return fmt.Errorf("TOS %d out of range 0-255", o.TOS)
	case o.TTL < 0 || o.TTL > 255:
		return fmt.Errorf("TTL %d out of range 1-255", o.TTL)
	}
	return nil
}

// Control returns a function for net.Dialer.Control or
// net.ListenConfig.Control that applies o to the new socket before it
// connects or binds; nil when o is zero. network is "tcp4", "tcp6", "udp4"
// or "udp6" as the net package passes it.
func (o Options) Control() func(network, address string, c syscall.RawConn) error {
	if o.IsZero() {
		return nil
	}
	return func(network, _ string, c syscall.RawConn) error {
		return o.apply(network, c)
	}
}

// Apply sets o on an open socket (an accepted connection, a UDP socket).
// An MSS set this way no longer changes what the SYN announced. The address
// family is not known here, so TOS and TTL are set for both IPv4 and IPv6
// and fail only when neither takes.
func (o Options) Apply(c syscall.Conn) error {
	if o.IsZero() {
		return nil
	}
	rc, err := c.SyscallConn()
	if err != nil {
		return fmt.Errorf("setting socket options: %w", err)
	}
	network := ""
	if _, ok := c.(interface {
		ReadFrom([]byte) (int, net.Addr, error)
	}); ok {
		network = "udp"
	}
	return o.apply(network, rc)
}

// apply sets every chosen option. network ends in "4" or "6" for a known
// family; otherwise both families' options are tried.
func (o Options) apply(network string, c syscall.RawConn) error {
	var errs []error
	set := func(what string, op opt, v int) {
		if err := setInt(c, op, v); err != nil {
			errs = append(errs, fmt.Errorf("setting %s to %d: %w", what, v, err))
		}
	}
	// setIP sets the IPv4 option, the IPv6 one or, family unknown, both
	// (a dual-stack IPv6 socket may carry IPv4, whose field is IP_*).
	setIP := func(what4 string, op4 opt, what6 string, op6 opt, v int) {
		switch {
		case strings.HasSuffix(network, "4"):
			set(what4, op4, v)
		case strings.HasSuffix(network, "6"):
			set(what6, op6, v)
			_ = setInt(c, op4, v)
		default:
			e6, e4 := setInt(c, op6, v), setInt(c, op4, v)
			if e6 != nil && e4 != nil {
				errs = append(errs, fmt.Errorf("setting %s/%s to %d: %w", what4, what6, v, e4))
			}
		}
	}
	if o.ReuseAddr {
		_ = setInt(c, soReuseAddr, 1)
	}
	if o.Buffer > 0 {
		set("SO_SNDBUF", soSndBuf, o.Buffer)
		set("SO_RCVBUF", soRcvBuf, o.Buffer)
	}
	if o.MSS > 0 && isTCP(network) {
		set("TCP_MAXSEG", tcpMaxSeg, o.MSS)
	}
	if o.NoDelay && isTCP(network) {
		set("TCP_NODELAY", tcpNoDelay, 1)
	}
	if o.SetTOS {
		setIP("IP_TOS", ipTOS, "IPV6_TCLASS", ipv6TClass, o.TOS)
	}
	if o.TTL > 0 {
		setIP("IP_TTL", ipTTL, "IPV6_UNICAST_HOPS", ipv6Hops, o.TTL)
	}
	if o.Congestion != "" && isTCP(network) {
		var serr error
		if err := c.Control(func(fd uintptr) { serr = setCongestion(fd, o.Congestion) }); err != nil {
			serr = err
		}
		if serr != nil {
			errs = append(errs, fmt.Errorf("setting tcp congestion control %q (see net.ipv4.tcp_available_congestion_control): %w", o.Congestion, serr))
		}
	}
	return errors.Join(errs...)
}

// isTCP reports whether network is a TCP one ("" counts: Apply on an
// unknown connection tries).
func isTCP(network string) bool { return !strings.HasPrefix(network, "udp") }

// opt is a socket option's level and name; level -1 means the platform
// lacks it.
type opt struct{ level, name int }

// errUnsupported is returned for an option the platform lacks.
var errUnsupported = fmt.Errorf("not supported on %s", runtime.GOOS)

// setInt sets an integer option through c.
func setInt(c syscall.RawConn, op opt, v int) error {
	if op.level < 0 {
		return errUnsupported
	}
	var serr error
	if err := c.Control(func(fd uintptr) { serr = setsockoptInt(fd, op.level, op.name, v) }); err != nil {
		return err
	}
	return serr
}

// getInt reads an integer option through c.
func getInt(c syscall.RawConn, op opt) (int, error) {
	if op.level < 0 {
		return 0, errUnsupported
	}
	var v int
	var gerr error
	if err := c.Control(func(fd uintptr) { v, gerr = getsockoptInt(fd, op.level, op.name) }); err != nil {
		return 0, err
	}
	return v, gerr
}

// Buffers are the socket buffer sizes the kernel reports.
type Buffers struct {
	Send, Receive int // bytes as getsockopt reports them (Linux: double what was granted)
}

// Granted reads back the socket buffer sizes of an open socket.
func Granted(c syscall.Conn) (Buffers, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return Buffers{}, fmt.Errorf("reading socket buffer sizes: %w", err)
	}
	var b Buffers
	if b.Send, err = getInt(rc, soSndBuf); err != nil {
		return b, fmt.Errorf("reading SO_SNDBUF: %w", err)
	}
	if b.Receive, err = getInt(rc, soRcvBuf); err != nil {
		return b, fmt.Errorf("reading SO_RCVBUF: %w", err)
	}
	return b, nil
}

// Usable returns the part of a reported size the kernel leaves for data:
// Linux reports double the size it granted (the other half is its
// bookkeeping), other systems the size itself.
func Usable(reported int) int {
	if kernelDoubles {
		return reported / 2
	}
	return reported
}

// Shortfall returns a warning when the kernel granted less than requested
// for either buffer (Linux caps SO_SNDBUF at net.core.wmem_max and SO_RCVBUF
// at net.core.rmem_max), or "" when both were granted in full.
func (b Buffers) Shortfall(requested int) string {
	if requested <= 0 {
		return ""
	}
	var short []string
	if got := Usable(b.Send); got < requested {
		short = append(short, fmt.Sprintf("send buffer %d bytes%s", got, capHint("wmem_max")))
	}
	if got := Usable(b.Receive); got < requested {
		short = append(short, fmt.Sprintf("receive buffer %d bytes%s", got, capHint("rmem_max")))
	}
	if len(short) == 0 {
		return ""
	}
	return fmt.Sprintf("-w asked for %d-byte socket buffers; the kernel granted %s", requested, strings.Join(short, " and "))
}

// capHint names the Linux limit that caps a buffer, with its value when it
// can be read.
func capHint(name string) string {
	if v, ok := sysctlMax(name); ok {
		return fmt.Sprintf(" (capped by net.core.%s = %d; raise it to get more)", name, v)
	}
	return ""
}
