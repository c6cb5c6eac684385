package sockopt

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/internal/units"
)

// Typed are iperf's per-socket flags as typed (-w, -M, -N, -S/--tos,
// -T/--ttl): Typed.Options checks them and turns them into Options.
type Typed struct {
	Window  string // -w: a size like 64K
	MSS     int    // -M
	NoDelay bool   // -N
	TOS     string // -S: 0x10, 16, 020 or an RFC 1349 name
	TTL     int    // -T
}

// Options checks the flags and turns them into socket options; every error
// is a mistake in what was typed and names its flag.
func (t Typed) Options() (Options, error) {
	var o Options
	if t.Window != "" {
		n, err := units.ParseSize(t.Window)
		if err != nil || n <= 0 || n > 1<<30 {
			return o, fmt.Errorf("invalid -w %q: want a buffer size like 64K (at most 1G)", t.Window)
		}
		o.Buffer = int(n)
	}
	if t.MSS != 0 && (t.MSS < 88 || t.MSS > 65495) {
		return o, fmt.Errorf("invalid -M %d: want an MSS of 88 to 65495 bytes", t.MSS)
	}
	o.MSS, o.NoDelay = t.MSS, t.NoDelay
	if t.TOS != "" {
		v, err := ParseTOS(t.TOS)
		if err != nil {
			return o, err
		}
		o.TOS, o.SetTOS = v, true
	}
	if t.TTL < 0 || t.TTL > 255 {
		return o, fmt.Errorf("invalid -T %d: want a TTL of 1 to 255", t.TTL)
	}
	o.TTL = t.TTL
	return o, nil
}

// tosNames are RFC 1349's type-of-service names, as iperf 2 accepts them.
var tosNames = map[string]int{"lowdelay": 0x10, "throughput": 0x08, "reliability": 0x04, "lowcost": 0x02, "mincost": 0x02}

// ParseTOS reads a TOS byte as iperf does: hex (0x10), octal (020),
// decimal (16) or an RFC 1349 name.
func ParseTOS(s string) (int, error) {
	if v, ok := tosNames[strings.ToLower(s)]; ok {
		return v, nil
	}
	v, err := strconv.ParseInt(s, 0, 64)
	if err != nil || v < 0 || v > 255 {
		return 0, fmt.Errorf("invalid -S %q: want a TOS byte 0-255 (0x10, 16, 020) or lowdelay, throughput, reliability, lowcost", s)
	}
	return int(v), nil
}
