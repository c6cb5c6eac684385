package cli

import (
	"net"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/wirebench/wirebench/internal/sockopt"
	"github.com/wirebench/wirebench/internal/units"
)

// sockFlags are iperf's per-socket flags, shared by client and server:
// -w, -M, -N, -S/--tos, -T/--ttl, -V.
type sockFlags struct {
	window  string
	mss     int
	nodelay bool
	tos     string
	ttl     int
	v6      bool
	format  string // -f: units of the text output
}

func (s *sockFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVarP(&s.window, "window", "w", "", "socket buffer size, SO_SNDBUF and SO_RCVBUF (K/M/G; TCP window); Linux caps it at net.core.[rw]mem_max")
	fl.IntVarP(&s.mss, "mss", "M", 0, "TCP maximum segment size (TCP_MAXSEG), set before connecting")
	fl.BoolVarP(&s.nodelay, "nodelay", "N", false, "set TCP_NODELAY (Go sets it on every TCP connection anyway)")
	fl.StringVarP(&s.tos, "tos", "S", "", "IP type of service / IPv6 traffic class: 0x10, 16, 020, or lowdelay, throughput, reliability, lowcost")
	fl.IntVarP(&s.ttl, "ttl", "T", 0, "IP time-to-live / IPv6 hop limit (1-255; default the system's)")
	fl.BoolVarP(&s.v6, "ipv6_domain", "V", false, "use IPv6 (iperf2's -V)")
	fl.SetNormalizeFunc(iperfLongNames)
	fl.StringVarP(&s.format, "format", "f", "a", "units of the text output, as iperf: a adaptive bits, A adaptive bytes, b/B bits/bytes, k/m/g Kbits/Mbits/Gbits, K/M/G KBytes/MBytes/GBytes")
}

// unit returns the -f letter.
func (s *sockFlags) unit() (byte, error) {
	if err := enumFlag("-f", s.format, strings.Split(units.Formats, "")...); err != nil {
		return 0, err
	}
	return s.format[0], nil
}

// iperf3Names maps iperf3's long names of these flags to ours.
var iperf3Names = map[string]string{"set-mss": "mss", "no-delay": "nodelay", "version6": "ipv6_domain"}

// iperfLongNames lets iperf3's spellings (--set-mss, --no-delay) stand for
// ours.
func iperfLongNames(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	if n, ok := iperf3Names[name]; ok {
		return pflag.NormalizedName(n)
	}
	return pflag.NormalizedName(name)
}

// options turns the flags into socket options.
func (s *sockFlags) options() (sockopt.Options, error) {
	var o sockopt.Options
	if s.window != "" {
		n, err := units.ParseSize(s.window)
		if err != nil || n <= 0 || n > 1<<30 {
			return o, usagef("invalid -w %q: want a buffer size like 64K (at most 1G)", s.window)
		}
		o.Buffer = int(n)
	}
	if s.mss != 0 && (s.mss < 88 || s.mss > 65495) {
		return o, usagef("invalid -M %d: want an MSS of 88 to 65495 bytes", s.mss)
	}
	o.MSS, o.NoDelay = s.mss, s.nodelay
	if s.tos != "" {
		v, err := parseTOS(s.tos)
		if err != nil {
			return o, err
		}
		o.TOS, o.SetTOS = v, true
	}
	if s.ttl < 0 || s.ttl > 255 {
		return o, usagef("invalid -T %d: want a TTL of 1 to 255", s.ttl)
	}
	o.TTL = s.ttl
	return o, nil
}

// tosNames are RFC 1349's type-of-service names, as iperf 2 accepts them.
var tosNames = map[string]int{"lowdelay": 0x10, "throughput": 0x08, "reliability": 0x04, "lowcost": 0x02, "mincost": 0x02}

// parseTOS reads a TOS byte as iperf does: hex (0x10), octal (020),
// decimal (16) or an RFC 1349 name.
func parseTOS(s string) (int, error) {
	if v, ok := tosNames[strings.ToLower(s)]; ok {
		return v, nil
	}
	v, err := strconv.ParseInt(s, 0, 64)
	if err != nil || v < 0 || v > 255 {
		return 0, usagef("invalid -S %q: want a TOS byte 0-255 (0x10, 16, 020) or lowdelay, throughput, reliability, lowcost", s)
	}
	return int(v), nil
}

// parseBind reads iperf 2's client -B: host, host:port, [v6]:port or a
// bare IPv6 address. port is 0 when none was given.
func parseBind(s string) (host string, port int, err error) {
	if strings.Contains(s, "%") {
		return "", 0, usagef("invalid -B %q: binding to a device (%%dev) is not supported; give an address", s)
	}
	host, ps, hasPort := s, "", false
	switch {
	case strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]"):
		host = s[1 : len(s)-1]
	case strings.HasPrefix(s, "["):
		if host, ps, err = net.SplitHostPort(s); err != nil {
			return "", 0, usagef("invalid -B %q: want host, host:port or [v6]:port", s)
		}
		hasPort = true
	case strings.Count(s, ":") == 1:
		host, ps, _ = net.SplitHostPort(s)
		hasPort = true
	}
	if host == "" {
		return "", 0, usagef("invalid -B %q: no address", s)
	}
	if hasPort {
		p, perr := strconv.Atoi(ps)
		if perr != nil || p < 1 || p > 65535 {
			return "", 0, usagef("invalid -B %q: port must be 1-65535", s)
		}
		port = p
	}
	return host, port, nil
}
