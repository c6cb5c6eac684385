package admit

import (
	"fmt"
	"sync/atomic"
)

// Caps on what requests that prove nothing can make a server do (issue 36).
const (
	// DefaultMaxSendRate is the default cap, in bit/s of payload, on the
	// rate a server sends at in a UDP test a client asked for without
	// authenticating: a reverse or connect-back test at the line rate of
	// 1 GbE (about 957 Mbit/s of 1470-byte payloads) runs as asked; one
	// spoofed datagram can aim no more than that at its victim.
	DefaultMaxSendRate = 1e9
	// ConnsPerTest times a server's test limit is how many TCP
	// connections it serves at once: room for iperf3's data streams
	// beside their control connections.
	ConnsPerTest = 4
)

// Gate counts what is open (tests, connections) against a limit that every
// source shares. The zero value is ready; it is safe for concurrent use.
type Gate struct{ n atomic.Int64 }

// Take takes a slot unless limit are taken; open is how many were taken
// before, the figure a refusal is to say.
func (g *Gate) Take(limit int) (open int64, ok bool) {
	n := g.n.Add(1)
	if n > int64(limit) {
		g.n.Add(-1)
		return n - 1, false
	}
	return n - 1, true
}

// Give gives back a slot Take took.
func (g *Gate) Give() { g.n.Add(-1) }

// OverSendCap says why a server refuses a test in which it would send at
// asked bit/s (0: unpaced) when the test is capped (it asked for UDP
// traffic without authenticating) and limit (bit/s; 0 or less: none) is
// below that; "" when it runs.
func OverSendCap(capped bool, asked, limit float64) string {
	if !capped || limit <= 0 || (asked > 0 && asked <= limit) {
		return ""
	}
	what := "unpaced (-b 0)"
	if asked > 0 {
		what = "at " + bits(asked)
	}
	return fmt.Sprintf("refused a UDP test in which this server would send %s: it sends at most %s to a client that did not authenticate (--max-rate)", what, bits(limit))
}

// bits spells a rate as units.FormatBits (on this floor too, so not
// importable) and iperf do: "957 Mbits/sec", "1.00 Gbits/sec".
// TestBitsSpellsAsUnits keeps the two the same.
func bits(v float64) string {
	prefix := ""
	for _, p := range []string{"K", "M", "G", "T"} {
		if v < 1000 {
			break
		}
		v, prefix = v/1000, p
	}
	switch {
	case prefix == "":
		return fmt.Sprintf("%.0f bits/sec", v)
	case v < 9.995:
		return fmt.Sprintf("%.2f %sbits/sec", v, prefix)
	case v < 99.95:
		return fmt.Sprintf("%.1f %sbits/sec", v, prefix)
	}
	return fmt.Sprintf("%.0f %sbits/sec", v, prefix)
}
