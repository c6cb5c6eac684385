package cli

import "github.com/wirebench/wirebench/internal/iperfargs"

// optionalValues lists the flags whose value is optional (cobra's
// NoOptDefVal) with the values they take, which cobra only accepts as
// "--flag=value".
var optionalValues = map[string][]string{"--latency": {"udp", "icmp"}}

// joinOptionalValues turns "--latency icmp" into "--latency=icmp"
// (iperfargs.JoinOptional); it is applied after iperfargs.Rewrite turns
// iperf's -s/-c into subcommands.
func joinOptionalValues(args []string) []string { return iperfargs.JoinOptional(args, optionalValues) }
