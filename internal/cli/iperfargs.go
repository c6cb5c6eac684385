package cli

// joinOptionalValues is applied after iperfargs.Rewrite turns iperf's
// -s/-c into subcommands.

import (
	"slices"
)

// optionalValues lists the flags whose value is optional (cobra's
// NoOptDefVal) with the values they take, which cobra only accepts as
// "--flag=value".
var optionalValues = map[string][]string{"--latency": {"udp", "icmp"}}

// joinOptionalValues turns "--latency icmp" into "--latency=icmp": written
// apart, cobra would take icmp for a host name.
func joinOptionalValues(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if vals, ok := optionalValues[a]; ok && i+1 < len(args) && slices.Contains(vals, args[i+1]) {
			out = append(out, a+"="+args[i+1])
			i++
			continue
		}
		out = append(out, a)
	}
	return out
}
