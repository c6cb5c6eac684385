// Package sharedcause words the causes of doubt that a server's tests
// share — its UDP socket's receive buffer overflowing, its host's CPU being
// the limit — and tallies them, so that a server with many clients says
// each cause once with its count (when it first appears, then each period
// while it recurs, and when the server stops) rather than once per test.
// Each test's own document keeps its warning: only the server's text leaves
// it to the tally. The per-test warnings are worded here, by the functions
// the session packages call, so that the tally knows them by their words.
package sharedcause

import (
	"fmt"
	"regexp"
	"strings"
)

// Cause is one cause of doubt a server's tests share.
type Cause int

// The causes.
const (
	// SocketDrops: the server's UDP socket dropped datagrams because its
	// receive buffer was full (host-side loss the tests count as lost).
	SocketDrops Cause = iota
	// CPULimit: this host's CPU was the limit of the test.
	CPULimit
	nCauses
)

// socketDropsWords and CPULimitWords begin each cause's per-test warning.
const (
	socketDropsWords = "our server socket dropped "
	// CPULimitWords begins the warning that this host's CPU was the limit
	// of a test (session's FillCPU).
	CPULimitWords = "this host's CPU was the limit: "
)

// SocketDropsWarning is a server test's warning that its UDP socket dropped
// dropped (the count in words, e.g. "12 datagrams") during the test; shared
// says other tests used the socket meanwhile, so the count, the socket's,
// may include drops of their datagrams.
func SocketDropsWarning(dropped string, shared bool) string {
	w := socketDropsWords + dropped + " during this test because its receive buffer was full (host-side loss, counted as lost)"
	if shared {
		w += "; other tests used the socket meanwhile, so some of these drops (host_drops) may be theirs"
	}
	return w
}

// CPULimitWarning is a test's warning that this host's CPU was the limit:
// the process used percent of one core with streams streams on cores
// cores while it fell short as what says.
func CPULimitWarning(percent float64, streams, cores int, what string) string {
	return fmt.Sprintf(CPULimitWords+"the process used %.0f%% of one core (%s, %s) while %s; the figures measure this host rather than the network",
		percent, plural(streams, "stream"), plural(cores, "core"), what)
}

// groupStream is the prefix a -P group's result puts before a stream's
// warning.
var groupStream = regexp.MustCompile(`^stream \d+: `)

// Of returns the shared cause warning w says (also as a -P group's
// "stream N: " warning); ok is false for a test's own warning.
func Of(w string) (c Cause, ok bool) {
	if loc := groupStream.FindStringIndex(w); loc != nil {
		w = w[loc[1]:]
	}
	switch {
	case strings.HasPrefix(w, socketDropsWords):
		return SocketDrops, true
	case strings.HasPrefix(w, CPULimitWords):
		return CPULimit, true
	}
	return 0, false
}

// Own returns the warnings of ws that are the test's own: those that say
// no shared cause (a new slice; ws is not changed).
func Own(ws []string) []string {
	own := make([]string, 0, len(ws))
	for _, w := range ws {
		if _, shared := Of(w); !shared {
			own = append(own, w)
		}
	}
	return own
}
