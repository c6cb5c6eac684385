package labctl

// The text `wirebench lab` prints: what `lab up` made, what `lab status`
// sees and what `lab down` removed.

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/edtwire"
	"github.com/wirebench/wirebench/internal/netlab"
	"github.com/wirebench/wirebench/internal/report"
)

// pidNote is "; ended processes PID..." for pids, or "".
func PIDNote(pids []int) string {
	if len(pids) == 0 {
		return ""
	}
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = fmt.Sprint(p)
	}
	return "; ended processes " + strings.Join(s, " ")
}

// WriteUp says what `lab up` made and what to run where.
func WriteUp(w io.Writer, st State) {
	a, b := st.Hosts["a"], st.Hosts["b"]
	wire := "unshaped (veth speed)"
	switch {
	case st.Medium != "":
		wire = fmt.Sprintf("shaped as %s (%s each way)", st.Medium, RateText(st.RateBPS))
	case st.RateBPS != 0:
		wire = fmt.Sprintf("shaped as a %s Ethernet wire each way", RateText(st.RateBPS))
	}
	fmt.Fprintf(w, "lab %s is up: %s, MTU %d, net %s, no default route\n", st.Name, wire, st.MTU, st.Net)
	fmt.Fprintf(w, "  a  %-15s namespace %s (%s)\n", a.Addr, a.Namespace, a.Ifname)
	target := b.Addr
	if r, ok := st.Hosts["r"]; ok && (st.Model != nil || st.Wire != nil) {
		if st.Model != nil {
			target = r.Addr
		}
		fmt.Fprintf(w, "  r  %-15s namespace %s (%s towards a; wbl-rb towards b)\n", r.Addr, r.Namespace, r.Ifname)
	}
	fmt.Fprintf(w, "  b  %-15s namespace %s (%s)\n", b.Addr, b.Namespace, b.Ifname)
	if m := st.Model; m != nil {
		dir := "a -> b"
		if m.Both {
			dir = "both ways"
		}
		fmt.Fprintf(w, "  model %q, %s, in wirebench relay (UDP; TCP gets only its delay and rate):\n", m.Spec, dir)
		for _, r := range m.Relays {
			fmt.Fprintf(w, "    %s -> %s  seed %d, pid %d, log %s\n", r.Listen, r.To, r.Seed, r.PID, r.Log)
		}
		fmt.Fprintf(w, "  a reaches b only through the relay: send to %s, not %s (nothing forwards it)\n", target, b.Addr)
	}
	if st.Wire != nil {
		fmt.Fprintf(w, "  exact wire: a forwarder in r (pid %d) gives every frame its departure time; r's kernel forwards nothing\n", st.Wire.PID)
	}
	if st.RateBPS != 0 {
		fmt.Fprintf(w, "  UDP goodput the wire allows at 1470 bytes: %.2f Mbit/s\n",
			netlab.WireGoodput(st.RateBPS, 1470, 28)/1e6)
		frame := st.MTU + netlab.EthernetHeader + netlab.EthernetOverhead
		switch {
		case st.Wire != nil: // no bucket
		case st.Filler != nil:
			fmt.Fprintf(w, "  filled wire: filler frames (pid %d) use the wire's idle time, so a burst after idle leaves at the wire's rate;\n"+
				"  they go to no one (EtherType 0x88b5, dropped by the far end) and show in its interface counters; after 2 s\n"+
				"  without traffic the filler empties the wire's bucket instead and sleeps until the lab sends (lab status: its cost)\n", st.Filler.PID)
		case st.Burst > frame:
			fmt.Fprintf(w, "  bucket %d bytes: after idle that much leaves at veth speed (a large ping reads short);\n"+
				"  --burst %d is exact after idle where timers fire on time (docs/lab-hosts.md)\n", st.Burst, frame)
		case st.Burst == frame:
			fmt.Fprintf(w, "  bucket of one frame: exact after idle, but where timers fire late (a busy machine, a VM)\n"+
				"  the wire delivers less than its rate (docs/lab-hosts.md)\n")
		}
	}
	n := NameFlag(st.Name)
	client := "wirebench client " + target + " -u -b 100M"
	switch {
	case st.Medium != "":
		client += " --medium " + st.Medium
	case st.RateBPS != 0:
		client += " --link-rate " + RateText(st.RateBPS)
	}
	fmt.Fprintf(w, "run:\n  wirebench lab exec%s b -- wirebench server\n  wirebench lab exec%s a -- %s\n", n, n, client)
	down := ""
	if st.Model != nil {
		down = " (prints what the relay did)"
	}
	fmt.Fprintf(w, "see: wirebench lab status%s    remove: wirebench lab down%s%s\n", n, n, down)
}

// RateText formats a bit rate the way --rate reads it back (100M, 1G, 2.5M).
func RateText(bps uint64) string {
	switch {
	case bps >= 1e9 && bps%1e7 == 0:
		return fmt.Sprintf("%gG", float64(bps)/1e9)
	case bps >= 1e6 && bps%1e4 == 0:
		return fmt.Sprintf("%gM", float64(bps)/1e6)
	case bps >= 1e3 && bps%10 == 0:
		return fmt.Sprintf("%gk", float64(bps)/1e3)
	}
	return fmt.Sprint(bps)
}

// WriteText writes what exists of a lab.
func (s Status) WriteText(w io.Writer) {
	switch s.State {
	case StateDown:
		fmt.Fprintf(w, "lab %s: down (nothing exists)\n", s.Name)
		return
	case StatePartial:
		fmt.Fprintf(w, "lab %s: partial, the leftovers of an interrupted run (`wirebench lab up%s` or `lab down%s` removes them)\n",
			s.Name, NameFlag(s.Name), NameFlag(s.Name))
	default:
		fmt.Fprintf(w, "lab %s: up since %s, net %s\n", s.Name, s.Config.Created.Format(time.RFC3339), s.Config.Net)
	}
	if s.StateFileError != "" {
		fmt.Fprintf(w, "  state file: %s\n", s.StateFileError)
	}
	for _, ns := range s.Namespaces {
		fmt.Fprintf(w, "  %s\n", ns.Name)
		if ns.Unmounted {
			fmt.Fprintf(w, "    no namespace: only its file in /run/netns exists (the run was killed while creating it)\n")
		}
		for _, l := range ns.Links {
			state := "down"
			if l.Up {
				state = "up"
			}
			q := l.Qdisc
			if l.RateBPS != 0 {
				q += " " + RateText(l.RateBPS) + "bit/s"
			}
			if l.Drops != 0 {
				q += fmt.Sprintf(", %d packets dropped", l.Drops)
			}
			fmt.Fprintf(w, "    %-8s %-4s mtu %d  %s  qdisc %s\n", l.Name, state, l.MTU, strings.Join(l.Addrs, " "), q)
		}
		for _, r := range ns.Routes {
			fmt.Fprintf(w, "    route %s\n", r)
		}
		if len(ns.PIDs) > 0 {
			fmt.Fprintf(w, "    processes%s\n", strings.TrimPrefix(PIDNote(ns.PIDs), "; ended processes"))
		}
	}
	if s.Config != nil && s.Config.Model != nil {
		writeRelayStatus(w, s.Config.Model.Spec, s.Relays)
	}
	writeWireStatus(w, s.Config, s.Wire)
	writeFillerStatus(w, s.Config, s.Filler)
	writeCosts(w, s.Cost)
}

// writeRelayStatus writes one line per relay of `lab status`.
func writeRelayStatus(w io.Writer, spec string, rs []RelayStatus) {
	for _, r := range rs {
		state := "running"
		if !r.Running {
			state = "NOT RUNNING (" + r.LastLog + ")"
		}
		fmt.Fprintf(w, "  relay pid %d %s: %s -> %s, model %q, seed %d, log %s\n", r.PID, state, r.Listen, r.To, spec, r.Seed, r.Log)
	}
}

// writeWireStatus writes the exact wire's part of `lab status`.
func writeWireStatus(w io.Writer, st *State, s []edtwire.Stats) {
	if st == nil || st.Wire == nil {
		return
	}
	fmt.Fprintf(w, "  exact wire: forwarder pid %d in r, log %s\n", st.Wire.PID, st.Wire.Log)
	if s == nil {
		fmt.Fprintf(w, "    no counters yet (%s)\n", st.Wire.Stats)
	}
	for _, d := range s {
		fmt.Fprintf(w, "    %s\n", d)
	}
}

// WriteText says what `lab down` removed, what each relay did and what
// went wrong.
func (d Removal) WriteText(w io.Writer) {
	if len(d.Removed) == 0 {
		fmt.Fprintf(w, "lab %s: nothing to remove\n", d.Name)
	} else {
		fmt.Fprintf(w, "lab %s removed: namespaces %s%s\n", d.Name, strings.Join(d.Removed, " "), PIDNote(d.EndedPIDs))
	}
	for _, r := range d.Relays {
		report.WriteRelay(w, &r)
	}
	for _, m := range d.Warnings {
		fmt.Fprintf(w, "warning: %s\n", m)
	}
}

// writeFillerStatus writes the filler's part of `lab status`.
func writeFillerStatus(w io.Writer, st *State, s []netlab.FillStats) {
	if st == nil || st.Filler == nil {
		return
	}
	fmt.Fprintf(w, "  filled wire: filler pid %d, log %s\n", st.Filler.PID, st.Filler.Log)
	if s == nil {
		fmt.Fprintf(w, "    no counters yet (%s)\n", st.Filler.Stats)
	}
	for _, d := range s {
		fmt.Fprintf(w, "    %s\n", d)
	}
}

// WriteLeftovers says on w what Up removed of an earlier lab (its
// UpConfig.Leftovers).
func WriteLeftovers(w io.Writer, lab string) func(removed []string, ended []int) {
	return func(removed []string, ended []int) {
		fmt.Fprintf(w, "wirebench: removed leftovers of an earlier lab %s: namespaces %s%s\n", lab, strings.Join(removed, " "), PIDNote(ended))
	}
}
