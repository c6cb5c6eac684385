package labctl

// What the lab's own processes (the filler, the exact wire's forwarder,
// the relays) cost in CPU time, for `lab status`.

import (
	"fmt"
	"io"
	"slices"

	"github.com/wirebench/wirebench/internal/netlab"
	"github.com/wirebench/wirebench/internal/proccpu"
)

// ProcCost is the CPU time one of the lab's processes has used since it
// started.
type ProcCost struct {
	// Role is "filler", "wire" or "relay".
	Role string `json:"role"`
	proccpu.Usage
	// CoreShare is CPU over age: the fraction of one core used on
	// average since the process started.
	CoreShare float64 `json:"core_share"`
}

// readCosts reads the cost of each of the lab's processes that runs
// inside one of its namespaces (a PID outside them is no longer the
// lab's).
func readCosts(st *State, nss []netlab.NSInfo, relays []RelayStatus) []ProcCost {
	if st == nil {
		return nil
	}
	var in []int
	for _, ns := range nss {
		in = append(in, ns.PIDs...)
	}
	var out []ProcCost
	add := func(role string, pid int) {
		if pid <= 0 || !slices.Contains(in, pid) {
			return
		}
		if u, err := proccpu.Read(pid); err == nil {
			out = append(out, ProcCost{Role: role, Usage: u, CoreShare: u.Share()})
		}
	}
	if st.Filler != nil {
		add("filler", st.Filler.PID)
	}
	if st.Wire != nil {
		add("wire", st.Wire.PID)
	}
	for _, r := range relays {
		add("relay", r.PID)
	}
	return out
}

// writeCosts writes the cost part of `lab status`: one line per process
// and, with more than one, their sum.
func writeCosts(w io.Writer, cs []ProcCost) {
	if len(cs) == 0 {
		return
	}
	fmt.Fprintf(w, "  cost (CPU time since each process started, from /proc/PID/stat):\n")
	var sum float64
	for _, c := range cs {
		fmt.Fprintf(w, "    %-6s pid %d: %s\n", c.Role, c.PID, c.Usage)
		sum += c.CoreShare
	}
	if len(cs) > 1 {
		fmt.Fprintf(w, "    together: %.2f %% of a core\n", 100*sum)
	}
}
