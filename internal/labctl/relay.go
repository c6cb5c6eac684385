package labctl

// `lab up --model`: a wirebench relay per port in the lab's middle host r,
// started detached by Up, shown by ReadStatus, stopped (and its closing
// report read) by Down. See docs/lab-hosts.md.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/internal/netlab"
	"github.com/wirebench/wirebench/internal/result"
)

// DefaultModelPorts are the ports a lab's relay listens on: wirebench
// server's iperf2 port and its iperf3 port, so that both dialects cross the
// model without any flag on either end.
var DefaultModelPorts = []int{5001, 5201}

// Model is the relay part of the state file.
type Model struct {
	// Spec is the model as given to --model; Both says it applies to b→a
	// too.
	Spec   string  `json:"spec"`
	Both   bool    `json:"both,omitempty"`
	Relays []Relay `json:"relays"`
}

// Relay is one relay process in r.
type Relay struct {
	Listen string `json:"listen"`
	To     string `json:"to"`
	// Seed is the one the relay drew its fates from (the model's seed=, or
	// one it took from the clock).
	Seed uint64 `json:"seed"`
	PID  int    `json:"pid"`
	// Log holds the relay's stderr; Report its closing JSON document,
	// written when it ends.
	Log    string `json:"log"`
	Report string `json:"report"`
}

// RelayPlan is what `lab up --model` starts: one relay per port, each with
// the device model Spec (checked by the caller), applied both ways if Both.
type RelayPlan struct {
	Spec  string
	Both  bool
	Ports []int
}

// relayFiles returns the log and report paths of the lab's relay on port.
// Lab names hold no '-', so "lab-NAME-relay-" never matches another lab.
func relayFiles(name string, port int) (logPath, reportPath string) {
	base := filepath.Join(StateDir, "lab-"+name+"-relay-"+strconv.Itoa(port))
	return base + ".log", base + ".json"
}

// RemoveFiles removes the files of lab name's processes: every relay log
// and report, and its exact wire's files.
func RemoveFiles(name string) error {
	paths, err := filepath.Glob(filepath.Join(StateDir, "lab-"+name+"-relay-*"))
	if err != nil {
		return fmt.Errorf("listing the relays' files: %w", err)
	}
	for _, glob := range []string{"-wire*", "-filler*"} {
		more, err := filepath.Glob(filepath.Join(StateDir, "lab-"+name+glob))
		if err != nil {
			return fmt.Errorf("listing the wire's files: %w", err)
		}
		paths = append(paths, more...)
	}
	var errs []error
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("removing %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// startRelays starts one relay per planned port in r, listening on r's
// address towards a and forwarding to b's address on the same port, and
// waits until each has bound its socket. On error the caller removes the
// lab, and with it any relay that did start.
func startRelays(ctx context.Context, l *netlab.Lab, plan *RelayPlan, self func(...string) ([]string, error)) (*Model, error) {
	_, rAddr, ok := l.RouterA()
	if !ok {
		return nil, errors.New("lab has no middle host r")
	}
	if err := os.MkdirAll(StateDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", StateDir, err)
	}
	st := &Model{Spec: plan.Spec, Both: plan.Both}
	for _, port := range plan.Ports {
		ps := strconv.Itoa(port)
		rs := Relay{Listen: net.JoinHostPort(rAddr.String(), ps), To: net.JoinHostPort(l.B.Addr.String(), ps)}
		rs.Log, rs.Report = relayFiles(l.Config.Lab, port)
		args := []string{"relay", "--listen", rs.Listen, "--to", rs.To, "--model=" + plan.Spec, "--tcp", "--json"}
		if plan.Both {
			args = append(args, "--both")
		}
		argv, err := self(args...)
		if err != nil {
			return nil, err
		}
		var m [][]byte
		rs.PID, m, err = startDetached(ctx, l.R.Name, argv, rs.Log, rs.Report, relayReadyRE)
		if err == nil {
			rs.Seed, err = strconv.ParseUint(string(m[1]), 10, 64)
		}
		if err != nil {
			return nil, fmt.Errorf("starting the relay on %s: %w", rs.Listen, err)
		}
		st.Relays = append(st.Relays, rs)
	}
	return st, nil
}

// relayReadyRE matches the line `wirebench relay` logs once its socket is
// bound (the cli's relay command writes it) and captures its seed.
var relayReadyRE = regexp.MustCompile(`(?m)^wirebench: relaying .* seed (\d+)\)$`)

// RelayStatus is one relay in `lab status`.
type RelayStatus struct {
	Relay
	// Running says the PID is alive and inside the lab's r namespace.
	Running bool `json:"running"`
	// LastLog is the last line of the relay's log when it is not running.
	LastLog string `json:"last_log,omitempty"`
}

// relayStatuses reports the state file's relays, running or not.
func relayStatuses(st *State, nss []netlab.NSInfo) []RelayStatus {
	if st == nil || st.Model == nil {
		return nil
	}
	var rpids []int
	for _, ns := range nss {
		if ns.Name == st.Hosts["r"].Namespace {
			rpids = ns.PIDs
		}
	}
	out := []RelayStatus{}
	for _, r := range st.Model.Relays {
		s := RelayStatus{Relay: r, Running: slices.Contains(rpids, r.PID)}
		if !s.Running {
			b, _ := os.ReadFile(r.Log)
			s.LastLog = lastLine(b)
		}
		out = append(out, s)
	}
	return out
}

// collectRelayReports reads the closing reports the lab's relays wrote
// when `lab down` ended them: the relays the state file lists, or, if it
// is lost, every report file of the lab.
func collectRelayReports(name string, st *State) ([]result.Relay, []string) {
	type item struct{ listen, log, report string }
	var items []item
	if st != nil && st.Model != nil {
		for _, r := range st.Model.Relays {
			items = append(items, item{r.Listen, r.Log, r.Report})
		}
	} else {
		paths, _ := filepath.Glob(filepath.Join(StateDir, "lab-"+name+"-relay-*.json"))
		for _, p := range paths {
			items = append(items, item{"port " + strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "lab-"+name+"-relay-"), ".json"),
				strings.TrimSuffix(p, ".json") + ".log", p})
		}
	}
	var reps []result.Relay
	var warns []string
	for _, it := range items {
		b, err := os.ReadFile(it.report)
		var rep result.Relay
		if err == nil {
			err = json.Unmarshal(b, &rep)
		}
		if err != nil {
			lg, _ := os.ReadFile(it.log)
			warns = append(warns, fmt.Sprintf("the relay on %s left no closing report (%v); its log ends: %s", it.listen, err, lastLine(lg)))
			continue
		}
		reps = append(reps, rep)
	}
	return reps, warns
}

// wireDrops warns, for a lab with a relay, about packets the shaped wire
// after the relay dropped (tbf in r, whose queue a burst the relay
// releases after a stall can overflow): a test's loss then exceeds the
// relay's data.dropped by them. Counted when `lab down` starts.
func wireDrops(st *State) []string {
	if st == nil || st.Model == nil || st.RateBPS == 0 {
		return nil
	}
	info, err := netlab.Inspect(st.Hosts["r"].Namespace)
	if err != nil {
		return []string{fmt.Sprintf("could not read the wire's drop counts in r: %v", err)}
	}
	var out []string
	for _, l := range info.Links {
		if l.Drops != 0 {
			out = append(out, fmt.Sprintf("the shaped wire in r (%s on %s) dropped %d packets: its queue overflowed, and a test's loss includes them on top of the relay's own counts",
				l.Qdisc, l.Name, l.Drops))
		}
	}
	return out
}
