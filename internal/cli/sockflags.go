package cli

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/wirebench/wirebench/internal/client"
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

// typed are the socket flags as sockopt.Typed.
func (s *sockFlags) typed() sockopt.Typed {
	return sockopt.Typed{Window: s.window, MSS: s.mss, NoDelay: s.nodelay, TOS: s.tos, TTL: s.ttl}
}

// options turns the flags into socket options.
func (s *sockFlags) options() (sockopt.Options, error) {
	o, err := s.typed().Options()
	return o, usage(err)
}

// parseTOS reads a TOS byte as iperf does (sockopt.ParseTOS).
func parseTOS(s string) (int, error) {
	v, err := sockopt.ParseTOS(s)
	return v, usage(err)
}

// parseBind reads iperf 2's client -B (client.ParseBind).
func parseBind(s string) (host string, port int, err error) {
	host, port, err = client.ParseBind(s)
	return host, port, usage(err)
}
