package cli

// `lab up --model`: a wirebench relay per port in the lab's middle host r,
// started detached by `lab up`, shown by `lab status`, stopped (and its
// closing report shown) by `lab down`. See docs/lab-hosts.md.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/lab"
	"github.com/wirebench/wirebench/internal/lab/model"
	"github.com/wirebench/wirebench/internal/netlab"
)

// defaultModelPorts are the ports a lab's relay listens on: wirebench
// server's iperf2 port and its iperf3 port, so that both dialects cross the
// model without any flag on either end.
var defaultModelPorts = []int{5001, 5201}

// labRelayReady is how long `lab up` waits for a relay to bind its socket.
const labRelayReady = 10 * time.Second

// selfArgv returns the command line that runs this wirebench binary with
// args. The lab tests replace it: their wirebench is the test binary.
var selfArgv = func(args ...string) ([]string, error) {
	p, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding wirebench's own binary: %w", err)
	}
	return append([]string{p}, args...), nil
}

// labModelSt is the relay part of the state file.
type labModelSt struct {
	// Spec is the model as given to --model; Both says it applies to b→a
	// too.
	Spec   string       `json:"spec"`
	Both   bool         `json:"both,omitempty"`
	Relays []labRelaySt `json:"relays"`
}

// labRelaySt is one relay process in r.
type labRelaySt struct {
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

// labRelayPlan is what `lab up --model` will start, checked before
// anything is created.
type labRelayPlan struct {
	spec  string
	both  bool
	ports []int
}

// relayPlan checks the model flags; nil means no relay.
func (f labUpFlags) relayPlan() (*labRelayPlan, error) {
	if !f.modelSet {
		if f.modelPorts != nil || f.modelBoth {
			return nil, usagef("--model-port and --model-both need --model")
		}
		return nil, nil
	}
	if _, err := model.Parse(f.model); err != nil {
		return nil, usagef("invalid --model: %s", strings.TrimPrefix(err.Error(), "model: "))
	}
	ports := f.modelPorts
	if ports == nil {
		ports = defaultModelPorts
	}
	if len(ports) == 0 {
		return nil, usagef("--model-port: give at least one port")
	}
	for i, p := range ports {
		if p < 1 || p > 65535 {
			return nil, usagef("invalid --model-port %d: want 1-65535", p)
		}
		if slices.Contains(ports[:i], p) {
			return nil, usagef("--model-port %d given twice", p)
		}
	}
	return &labRelayPlan{spec: f.model, both: f.modelBoth, ports: ports}, nil
}

// labRelayFiles returns the log and report paths of the lab's relay on port.
// Lab names hold no '-', so "lab-NAME-relay-" never matches another lab.
func labRelayFiles(name string, port int) (logPath, reportPath string) {
	base := filepath.Join(labStateDir, "lab-"+name+"-relay-"+strconv.Itoa(port))
	return base + ".log", base + ".json"
}

// removeLabRelayFiles removes every relay log and report of the lab, and
// its exact wire's files.
func removeLabRelayFiles(name string) error {
	paths, err := filepath.Glob(filepath.Join(labStateDir, "lab-"+name+"-relay-*"))
	if err != nil {
		return err
	}
	wire, err := filepath.Glob(filepath.Join(labStateDir, "lab-"+name+"-wire*"))
	if err != nil {
		return err
	}
	paths = append(paths, wire...)
	var errs []error
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("removing %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// startLabRelays starts one relay per planned port in r, listening on r's
// address towards a and forwarding to b's address on the same port, and
// waits until each has bound its socket. On error the caller removes the
// lab, and with it any relay that did start.
func startLabRelays(ctx context.Context, l *netlab.Lab, plan *labRelayPlan) (*labModelSt, error) {
	_, rAddr, ok := l.RouterA()
	if !ok {
		return nil, errors.New("lab has no middle host r")
	}
	if err := os.MkdirAll(labStateDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", labStateDir, err)
	}
	st := &labModelSt{Spec: plan.spec, Both: plan.both}
	for _, port := range plan.ports {
		ps := strconv.Itoa(port)
		rs := labRelaySt{Listen: net.JoinHostPort(rAddr.String(), ps), To: net.JoinHostPort(l.B.Addr.String(), ps)}
		rs.Log, rs.Report = labRelayFiles(l.Config.Lab, port)
		args := []string{"relay", "--listen", rs.Listen, "--to", rs.To, "--model=" + plan.spec, "--tcp", "--json"}
		if plan.both {
			args = append(args, "--both")
		}
		argv, err := selfArgv(args...)
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

// relayReadyRE matches the line a relay logs once its socket is bound
// (see newRelayCmd) and captures its seed.
var relayReadyRE = regexp.MustCompile(`(?m)^wirebench: relaying .* seed (\d+)\)$`)

// startDetached starts argv in namespace ns in a session of its own, with
// stdout to reportPath and stderr to logPath, so that it outlives `lab up`,
// and waits until its log matches ready. It returns its PID and the match.
func startDetached(ctx context.Context, ns string, argv []string, logPath, reportPath string, ready *regexp.Regexp) (int, [][]byte, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, nil, err
	}
	defer logf.Close()
	repf, err := os.OpenFile(reportPath, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, nil, err
	}
	defer repf.Close()
	cmd := &exec.Cmd{Path: argv[0], Args: argv, Stdout: repf, Stderr: logf}
	detach(cmd)
	if err := netlab.StartIn(ns, cmd); err != nil {
		return 0, nil, err
	}
	// Reap it if it ends while this process lives (at once on a failed
	// start; in a test that runs `lab up` in process, when `lab down` ends
	// it). After `lab up` exits, init adopts it.
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.NewTimer(labRelayReady)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		b, err := os.ReadFile(logPath)
		if err != nil {
			return 0, nil, err
		}
		if m := ready.FindSubmatch(b); m != nil {
			return cmd.Process.Pid, m, nil
		}
		select {
		case err := <-done:
			b, _ := os.ReadFile(logPath)
			return 0, nil, fmt.Errorf("it ended (%v): %s", err, lastLine(b))
		case <-deadline.C:
			_ = cmd.Process.Kill()
			return 0, nil, fmt.Errorf("it did not start within %v: %s", labRelayReady, lastLine(b))
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			return 0, nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// lastLine returns the last non-empty line of b, or a note that b is empty.
func lastLine(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return "no output"
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	return string(b)
}

// labRelayStatus is one relay in `lab status`.
type labRelayStatus struct {
	labRelaySt
	// Running says the PID is alive and inside the lab's r namespace.
	Running bool `json:"running"`
	// LastLog is the last line of the relay's log when it is not running.
	LastLog string `json:"last_log,omitempty"`
}

// relayStatuses reports the state file's relays, running or not.
func relayStatuses(st *labState, nss []netlab.NSInfo) []labRelayStatus {
	if st == nil || st.Model == nil {
		return nil
	}
	var rpids []int
	for _, ns := range nss {
		if ns.Name == st.Hosts["r"].Namespace {
			rpids = ns.PIDs
		}
	}
	out := []labRelayStatus{}
	for _, r := range st.Model.Relays {
		s := labRelayStatus{labRelaySt: r, Running: slices.Contains(rpids, r.PID)}
		if !s.Running {
			b, _ := os.ReadFile(r.Log)
			s.LastLog = lastLine(b)
		}
		out = append(out, s)
	}
	return out
}

func printRelayStatus(w io.Writer, spec string, rs []labRelayStatus) {
	for _, r := range rs {
		state := "running"
		if !r.Running {
			state = "NOT RUNNING (" + r.LastLog + ")"
		}
		fmt.Fprintf(w, "  relay pid %d %s: %s -> %s, model %q, seed %d, log %s\n", r.PID, state, r.Listen, r.To, spec, r.Seed, r.Log)
	}
}

// labDown is `lab down --json`: what was removed and each relay's closing
// report.
type labDown struct {
	Schema    string   `json:"schema"`
	Kind      string   `json:"kind"`
	Name      string   `json:"name"`
	Removed   []string `json:"removed"`
	EndedPIDs []int    `json:"ended_pids"`
	// Relays are the closing documents of the lab's relays (docs/lab.md).
	Relays []lab.Report `json:"relays,omitempty"`
	// Warnings say which relay left no report, and why if its log tells.
	Warnings []string `json:"warnings"`
}

// collectRelayReports reads the closing reports the lab's relays wrote
// when `lab down` ended them: the relays the state file lists, or, if it
// is lost, every report file of the lab.
func collectRelayReports(name string, st *labState) ([]lab.Report, []string) {
	type item struct{ listen, log, report string }
	var items []item
	if st != nil && st.Model != nil {
		for _, r := range st.Model.Relays {
			items = append(items, item{r.Listen, r.Log, r.Report})
		}
	} else {
		paths, _ := filepath.Glob(filepath.Join(labStateDir, "lab-"+name+"-relay-*.json"))
		for _, p := range paths {
			items = append(items, item{"port " + strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "lab-"+name+"-relay-"), ".json"),
				strings.TrimSuffix(p, ".json") + ".log", p})
		}
	}
	var reps []lab.Report
	var warns []string
	for _, it := range items {
		b, err := os.ReadFile(it.report)
		var rep lab.Report
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
func wireDrops(st *labState) []string {
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
