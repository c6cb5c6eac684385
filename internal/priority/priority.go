// Package priority raises this process's CPU scheduling priority, where the
// system allows it, so that a busy host delays a server's readers less.
//
// A wirebench server reads every UDP test on its port with one reader; an
// iperf 2.1 client waits about 2 s for the answer to its FIN, re-sending it
// every 10 ms meanwhile. On a host whose cores are taken by other work, a
// server at the default priority got a small share of the CPU, fell seconds
// behind what had arrived, and its clients gave up (docs/server.md, "A
// reader that keeps its share"). A lower nice value gives every thread of
// the process a larger share when the cores are contended; it takes
// nothing from anyone while they are not.
//
// On Linux, Raise sets the nice value of every thread of the process (new
// threads inherit it from the thread that makes them); it needs root or
// CAP_SYS_NICE to go below 0. Elsewhere it reports that it cannot.
package priority

import (
	"errors"
	"fmt"
)

// DefaultNice is the nice value a server asks for: a share of a contended
// core about nine times that of a process at nice 0, not a real-time class,
// so nothing else on the host is ever starved.
const DefaultNice = -10

// ErrNotPermitted says the process may not lower its nice value: it runs
// as neither root nor with CAP_SYS_NICE (nor a high enough RLIMIT_NICE).
var ErrNotPermitted = errors.New("not permitted (run as root, or grant CAP_SYS_NICE, e.g. setcap cap_sys_nice+ep on the binary)")

// ErrUnsupported says this system offers no per-process nice value here.
var ErrUnsupported = errors.New("not supported on this system")

// Outcome is what Raise did.
type Outcome struct {
	// Asked is the nice value asked for; Nice the one the process has
	// now (its first thread's).
	Asked, Nice int
	// Raised says the priority was raised to Asked (or already was at
	// least that high).
	Raised bool
	// Err says why it was not, when it was not.
	Err error
}

// String says the outcome in a few words, for logs and warnings.
func (o Outcome) String() string {
	switch {
	case o.Raised:
		return fmt.Sprintf("at nice %d", o.Nice)
	case o.Err != nil:
		return fmt.Sprintf("at nice %d: raising it to %d was %v", o.Nice, o.Asked, o.Err)
	}
	return fmt.Sprintf("at nice %d", o.Nice)
}

// Raise sets the process to nice (-20..19, lower is a larger share of the
// CPU) when that is higher than it has. A nice of 0 or above changes
// nothing: Raise never lowers a priority.
func Raise(nice int) Outcome {
	if nice < -20 || nice > 19 {
		return Outcome{Asked: nice, Err: fmt.Errorf("nice %d is outside -20..19", nice)}
	}
	return raise(nice)
}
