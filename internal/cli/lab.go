package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/edtwire"
	"github.com/wirebench/wirebench/internal/linerate"
	"github.com/wirebench/wirebench/internal/netlab"
	"github.com/wirebench/wirebench/internal/units"
)

// labStateDir holds one state file per lab that is up: what `lab up`
// created, for `lab status` (the kernel's view is what `lab down` acts on,
// so a lost state file loses nothing).
const labStateDir = "/run/wirebench"

// labDownGrace is how long `lab down` waits for processes in the lab to end
// after SIGTERM before it sends SIGKILL.
const labDownGrace = 3 * time.Second

// labState is the state file, /run/wirebench/lab-NAME.json.
type labState struct {
	Schema  string `json:"schema"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Net     string `json:"net"`
	Medium  string `json:"medium,omitempty"`
	RateBPS uint64 `json:"rate_bps,omitempty"`
	// Burst is the shaper's bucket in bytes (netlab's default, 1 ms of
	// the rate, unless --burst said otherwise).
	Burst   int                  `json:"burst,omitempty"`
	MTU     int                  `json:"mtu"`
	Created time.Time            `json:"created"`
	Hosts   map[string]labHostSt `json:"hosts"`
	// Model is the relay in the middle host r (`lab up --model`).
	Model *labModelSt `json:"model,omitempty"`
	// Wire is the exact wire's forwarder in r (`lab up --wire exact`).
	Wire *labWireSt `json:"wire,omitempty"`
}

// labHostSt is one host of a lab in the state file.
type labHostSt struct {
	Namespace string `json:"namespace"`
	Ifname    string `json:"ifname"`
	Addr      string `json:"addr"`
}

// exitStatus carries a command's own exit code out of `lab exec`; run
// returns it as wirebench's exit code without printing anything.
type exitStatus struct{ code int }

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func labStatePath(name string) string { return filepath.Join(labStateDir, "lab-"+name+".json") }

// labNeedsRoot turns netlab.Available's error into the one line a user
// without privileges sees.
func labNeedsRoot() error {
	err := netlab.Available()
	if errors.Is(err, netlab.ErrNotSupported) {
		return errors.New("wirebench lab needs Linux network namespaces; this system has none")
	}
	if err != nil {
		return fmt.Errorf("lab needs root (or CAP_SYS_ADMIN and CAP_NET_ADMIN) and iproute2's ip and tc: %w", err)
	}
	return nil
}

func newLabCmd(e *env) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "lab",
		Short: "A two-host lab without hardware: network namespaces a and b joined by a shaped veth wire",
		Long: `wirebench lab makes a named lab that outlives the command: network namespaces
a (198.18.0.1) and b (198.18.0.2) joined by a veth pair, optionally shaped as an
Ethernet wire in both directions. With --model a third host, r (198.18.0.0
towards a), sits between them and runs "wirebench relay" with that device
model: a reaches b only through it. Run programs in it with "lab exec", remove
it with "lab down". Needs root (or CAP_SYS_ADMIN and CAP_NET_ADMIN). See
docs/lab-hosts.md.`,
		Example: `  wirebench lab up --medium eth100
  wirebench lab exec b -- wirebench server &
  wirebench lab exec a -- wirebench client 198.18.0.2 -u -b 100M --medium eth100
  wirebench lab status --json
  wirebench lab down
  wirebench lab up --medium eth100 --model loss=1%,seed=7
  wirebench lab exec a -- wirebench client 198.18.0.0 -u -b 10M
  wirebench lab down --json`,
		Args: exactArgs(0, "a subcommand: up, down, status or exec"),
		RunE: func(c *cobra.Command, _ []string) error { return usagef("lab: choose up, down, status or exec") },
		PersistentPreRunE: func(*cobra.Command, []string) error {
			if err := netlab.ValidateLabName(name); err != nil {
				return usagef("invalid --name: %v", strings.TrimPrefix(err.Error(), "netlab: "))
			}
			return nil
		},
	}
	cmd.PersistentFlags().StringVar(&name, "name", "wb", "lab name (1-16 of a-z, 0-9, _): namespaces wbl-lab-NAME-a and -b")
	cmd.AddCommand(newLabUpCmd(e, &name), newLabDownCmd(e, &name), newLabStatusCmd(e, &name), newLabExecCmd(e, &name),
		newLabWireRunCmd(e))
	for _, c := range cmd.Commands() {
		c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	}
	return cmd
}

// labUpFlags are `lab up`'s options.
type labUpFlags struct {
	net    string
	medium string
	rate   string
	burst  int
	mtu    int
	// model is --model; modelSet says it was given (an empty model is a
	// relay that changes nothing).
	model      string
	modelSet   bool
	modelPorts []int
	modelBoth  bool
	// wire is --wire: tbf or exact.
	wire string
}

// config turns the flags into a netlab configuration (shaped both ways;
// with --model a router lab whose only path is a relay in r).
func (f labUpFlags) config(name string) (netlab.Config, string, error) {
	cfg := netlab.Config{Lab: name, MTU: f.mtu, Burst: f.burst, ShapeBothWays: true, Router: f.modelSet, RelayOnly: f.modelSet}
	p, err := netip.ParsePrefix(f.net)
	if err != nil {
		return cfg, "", usagef("invalid --net %q: want a network like 198.18.0.0/24", f.net)
	}
	if err := netlab.ValidateNet(p); err != nil {
		return cfg, "", usagef("invalid --net: %v", strings.TrimPrefix(err.Error(), "netlab: "))
	}
	cfg.Net = p
	medium := f.medium
	switch {
	case f.medium != "" && f.rate != "":
		return cfg, "", usagef("choose one of --medium and --rate")
	case f.medium != "":
		m, err := linerate.LookupMedium(f.medium)
		if err != nil {
			return cfg, "", usagef("%v (known media: %s)", err, strings.Join(linerate.MediumNames(), ", "))
		}
		if m.Kind != linerate.Ethernet {
			return cfg, "", usagef("--medium %s: the lab emulates Ethernet wires only (eth10, eth100, eth1g, ...); for other media use a device model, --model rate=...,overhead=...", f.medium)
		}
		cfg.RateBPS = uint64(m.BitRate)
	case f.rate != "":
		s := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(f.rate)), "bit") // tc style: 100mbit
		r, err := units.ParseRate(s)
		if err != nil || r.PPS || r.Value < 1000 || r.Value > 100e9 {
			return cfg, "", usagef("invalid --rate %q: want a bit rate from 1k to 100G, like 100mbit or 100M", f.rate)
		}
		cfg.RateBPS = uint64(r.Value)
		medium = ""
	}
	if f.burst != 0 && cfg.RateBPS == 0 {
		return cfg, "", usagef("--burst needs --medium or --rate")
	}
	w, err := netlab.ParseWire(f.wire)
	if err != nil {
		return cfg, "", usagef("invalid --wire %q: want tbf or exact", f.wire)
	}
	if w == netlab.WireExact {
		switch {
		case cfg.RateBPS == 0:
			return cfg, "", usagef("--wire exact needs --medium or --rate")
		case f.modelSet:
			return cfg, "", usagef("--wire exact and --model both need host r; choose one")
		case f.burst != 0:
			return cfg, "", usagef("--burst is tbf's bucket; the exact wire has none")
		}
		cfg.Wire, cfg.Router = w, true
	}
	if err := cfg.Validate(); err != nil {
		return cfg, "", usagef("%v", strings.TrimPrefix(err.Error(), "netlab: "))
	}
	return cfg, medium, nil
}

func newLabUpCmd(e *env, name *string) *cobra.Command {
	var f labUpFlags
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Create the lab (first removing what a crashed run left behind)",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(c *cobra.Command, _ []string) error {
			f.modelSet = c.Flags().Changed("model")
			if !c.Flags().Changed("model-port") {
				f.modelPorts = nil
			}
			cfg, medium, err := f.config(*name)
			if err != nil {
				return err
			}
			plan, err := f.relayPlan()
			if err != nil {
				return err
			}
			if err := labNeedsRoot(); err != nil {
				return err
			}
			return labUp(e, cfg, medium, plan)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "put host r between a and b running wirebench relay with device model `SPEC` (docs/lab.md); a reaches b only through it")
	fl.IntSliceVar(&f.modelPorts, "model-port", defaultModelPorts, "UDP (and TCP) ports the relay listens on, one relay each")
	fl.BoolVar(&f.modelBoth, "model-both", false, "apply the model to b -> a as well")
	fl.StringVar(&f.net, "net", netlab.DefaultNet.String(), "IPv4 network inside 198.18.0.0/15 (at most a /30): a gets its .1, b its .2")
	fl.StringVar(&f.medium, "medium", "", "shape both directions as Ethernet medium `NAME` (eth10, eth100, eth1g, ...)")
	fl.StringVar(&f.rate, "rate", "", "shape both directions as an Ethernet wire of this rate (e.g. 100mbit)")
	fl.IntVar(&f.mtu, "mtu", netlab.DefaultMTU, "MTU of the veth pair")
	fl.StringVar(&f.wire, "wire", "tbf", "how the wire is emulated: tbf (exact rates on a busy machine, bursts after idle at veth speed) or exact (an experimental departure-time forwarder in host r; docs/lab-hosts.md)")
	fl.IntVar(&f.burst, "burst", 0, "the shaper's bucket in `BYTES` (default 1 ms of the rate: exact in rate on a busy machine, but that much leaves at veth speed after idle; one frame, MTU+38, is exact after idle where timers fire on time; docs/lab-hosts.md)")
	return cmd
}

// labUp creates the lab: it refuses when the lab is already up, removes a
// crashed run's leftovers, builds the namespaces, writes the state file and
// prints what to run where.
func labUp(e *env, cfg netlab.Config, medium string, plan *labRelayPlan) error {
	name := cfg.Lab
	nss, err := netlab.LabNamespaces(name)
	if err != nil {
		return err
	}
	if st, err := readLabState(name); err == nil && labComplete(st, nss) {
		return fmt.Errorf("lab %s is already up (see `wirebench lab status%s`); remove it first with `wirebench lab down%s`",
			name, nameFlag(name), nameFlag(name))
	}
	if len(nss) > 0 {
		removed, killed, err := netlab.RemoveLab(e.ctx, name, labDownGrace)
		fmt.Fprintf(e.stderr, "wirebench: removed leftovers of an earlier lab %s: namespaces %s%s\n",
			name, strings.Join(removed, " "), pidNote(killed))
		if err != nil {
			return fmt.Errorf("removing leftovers of lab %s: %w", name, err)
		}
	}
	if err := os.Remove(labStatePath(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing stale state file: %w", err)
	}
	if err := removeLabRelayFiles(name); err != nil {
		return fmt.Errorf("removing a stale relay's files: %w", err)
	}
	lab, err := netlab.New(e.ctx, cfg)
	if err != nil {
		return fmt.Errorf("creating lab %s: %w", name, err)
	}
	var wst *labWireSt
	if cfg.Wire == netlab.WireExact {
		if wst, err = startLabWire(e.ctx, lab); err != nil {
			_, _, rerr := netlab.RemoveLab(context.Background(), name, labDownGrace)
			return errors.Join(fmt.Errorf("lab %s: %w", name, err), rerr, lab.Close(), removeLabRelayFiles(name))
		}
	}
	var mst *labModelSt
	if plan != nil {
		if mst, err = startLabRelays(e.ctx, lab, plan); err != nil {
			// RemoveLab ends any relay that did start; only then can the
			// namespaces go.
			_, _, rerr := netlab.RemoveLab(context.Background(), name, labDownGrace)
			return errors.Join(fmt.Errorf("lab %s: %w", name, err), rerr, lab.Close(), removeLabRelayFiles(name))
		}
	}
	st := labState{
		Schema: "wirebench/1", Kind: "lab", Name: name, Net: cfg.Net.String(), Medium: medium,
		RateBPS: cfg.RateBPS, Burst: lab.Config.Burst, MTU: lab.Config.MTU, Created: time.Now().UTC().Truncate(time.Second),
		Hosts: map[string]labHostSt{
			"a": {Namespace: lab.A.Name, Ifname: lab.A.Ifname, Addr: lab.A.Addr.String()},
			"b": {Namespace: lab.B.Name, Ifname: lab.B.Ifname, Addr: lab.B.Addr.String()},
		},
		Model: mst,
		Wire:  wst,
	}
	if ifname, addr, ok := lab.RouterA(); ok {
		st.Hosts["r"] = labHostSt{Namespace: lab.R.Name, Ifname: ifname, Addr: addr.String()}
	}
	if err := writeLabState(st); err != nil {
		if mst != nil || wst != nil {
			_, _, rerr := netlab.RemoveLab(context.Background(), name, labDownGrace)
			err = errors.Join(err, rerr, removeLabRelayFiles(name))
		}
		return errors.Join(err, lab.Close())
	}
	lab.Release()
	printLabUp(e.stdout, st)
	return nil
}

// labComplete reports whether every namespace the state file names exists.
func labComplete(st labState, nss []string) bool {
	for _, h := range st.Hosts {
		if !slices.Contains(nss, h.Namespace) {
			return false
		}
	}
	return len(st.Hosts) > 0
}

func nameFlag(name string) string {
	if name == "wb" {
		return ""
	}
	return " --name " + name
}

func pidNote(pids []int) string {
	if len(pids) == 0 {
		return ""
	}
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = fmt.Sprint(p)
	}
	return "; ended processes " + strings.Join(s, " ")
}

func printLabUp(w io.Writer, st labState) {
	a, b := st.Hosts["a"], st.Hosts["b"]
	wire := "unshaped (veth speed)"
	switch {
	case st.Medium != "":
		wire = fmt.Sprintf("shaped as %s (%s each way)", st.Medium, rateText(st.RateBPS))
	case st.RateBPS != 0:
		wire = fmt.Sprintf("shaped as a %s Ethernet wire each way", rateText(st.RateBPS))
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
		case st.Burst > frame:
			fmt.Fprintf(w, "  bucket %d bytes: after idle that much leaves at veth speed (a large ping reads short);\n"+
				"  --burst %d is exact after idle where timers fire on time (docs/lab-hosts.md)\n", st.Burst, frame)
		case st.Burst == frame:
			fmt.Fprintf(w, "  bucket of one frame: exact after idle, but where timers fire late (a busy machine, a VM)\n"+
				"  the wire delivers less than its rate (docs/lab-hosts.md)\n")
		}
	}
	n := nameFlag(st.Name)
	client := "wirebench client " + target + " -u -b 100M"
	switch {
	case st.Medium != "":
		client += " --medium " + st.Medium
	case st.RateBPS != 0:
		client += " --link-rate " + rateText(st.RateBPS)
	}
	fmt.Fprintf(w, "run:\n  wirebench lab exec%s b -- wirebench server\n  wirebench lab exec%s a -- %s\n", n, n, client)
	down := ""
	if st.Model != nil {
		down = " (prints what the relay did)"
	}
	fmt.Fprintf(w, "see: wirebench lab status%s    remove: wirebench lab down%s%s\n", n, n, down)
}

// rateText formats a bit rate the way --rate reads it back (100M, 1G, 2.5M).
func rateText(bps uint64) string {
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

func writeLabState(st labState) error {
	if err := os.MkdirAll(labStateDir, 0o755); err != nil {
		return fmt.Errorf("writing lab state: %w", err)
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("writing lab state: %w", err)
	}
	p := labStatePath(st.Name)
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing lab state: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("writing lab state: %w", err)
	}
	return nil
}

func readLabState(name string) (labState, error) {
	var st labState
	b, err := os.ReadFile(labStatePath(name))
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("reading %s: %w", labStatePath(name), err)
	}
	return st, nil
}

func newLabDownCmd(e *env, name *string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Remove every namespace, link, qdisc and process of the lab; print what its relay did",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			if err := labNeedsRoot(); err != nil {
				return err
			}
			var stp *labState
			if st, err := readLabState(*name); err == nil {
				stp = &st
			}
			wireWarns := wireDrops(stp)
			removed, killed, err := netlab.RemoveLab(e.ctx, *name, labDownGrace)
			// The relays wrote their closing reports when RemoveLab ended them.
			reps, warns := collectRelayReports(*name, stp)
			warns = append(warns, wireWarns...)
			if rerr := os.Remove(labStatePath(*name)); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
				err = errors.Join(err, fmt.Errorf("removing state file: %w", rerr))
			}
			if rerr := removeLabRelayFiles(*name); rerr != nil {
				err = errors.Join(err, rerr)
			}
			if err != nil {
				return fmt.Errorf("removing lab %s: %w", *name, err)
			}
			if asJSON {
				d := labDown{Schema: "wirebench/1", Kind: "lab-down", Name: *name, Removed: removed, EndedPIDs: killed,
					Relays: reps, Warnings: warns}
				if d.Removed == nil {
					d.Removed = []string{}
				}
				if d.EndedPIDs == nil {
					d.EndedPIDs = []int{}
				}
				if d.Warnings == nil {
					d.Warnings = []string{}
				}
				return writeJSONDoc(e.stdout, d)
			}
			if len(removed) == 0 {
				fmt.Fprintf(e.stdout, "lab %s: nothing to remove\n", *name)
			} else {
				fmt.Fprintf(e.stdout, "lab %s removed: namespaces %s%s\n", *name, strings.Join(removed, " "), pidNote(killed))
			}
			for _, r := range reps {
				r.WriteText(e.stdout)
			}
			for _, w := range warns {
				fmt.Fprintf(e.stdout, "warning: %s\n", w)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document, with each relay's closing report")
	return cmd
}

// labStatus is `lab status --json`.
type labStatus struct {
	Schema string `json:"schema"`
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	// State is "up" (the state file and all its namespaces exist),
	// "partial" (a crashed run's leftovers) or "down" (nothing exists).
	State      string          `json:"state"`
	Config     *labState       `json:"config,omitempty"`
	Namespaces []netlab.NSInfo `json:"namespaces"`
	// Relays are the relays in r (`lab up --model`), running or not.
	Relays []labRelayStatus `json:"relays,omitempty"`
	// Wire is the exact wire's counters per direction as its forwarder
	// last wrote them (every second), with `lab up --wire exact`.
	Wire []edtwire.Stats `json:"wire,omitempty"`
	// StateFileError says why the state file could not be read, if it
	// exists but is unreadable or garbled (the lab is then "partial").
	StateFileError string `json:"state_file_error,omitempty"`
}

func newLabStatusCmd(e *env, name *string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show what exists of the lab: namespaces, links, addresses, qdiscs, processes",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			if err := labNeedsRoot(); err != nil {
				return err
			}
			s, err := readLabStatus(*name)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSONDoc(e.stdout, s)
			}
			printLabStatus(e.stdout, s)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

func readLabStatus(name string) (labStatus, error) {
	s := labStatus{Schema: "wirebench/1", Kind: "lab-status", Name: name, State: "down", Namespaces: []netlab.NSInfo{}}
	nss, err := netlab.LabNamespaces(name)
	if err != nil {
		return s, err
	}
	for _, ns := range nss {
		info, err := netlab.Inspect(ns)
		if err != nil {
			return s, fmt.Errorf("inspecting lab %s: %w", name, err)
		}
		s.Namespaces = append(s.Namespaces, info)
	}
	st, err := readLabState(name)
	switch {
	case err == nil:
		s.Config = &st
	case !errors.Is(err, os.ErrNotExist):
		s.StateFileError = err.Error()
	}
	s.Relays = relayStatuses(s.Config, s.Namespaces)
	s.Wire = readWireStats(s.Config)
	switch {
	case s.Config != nil && labComplete(*s.Config, nss):
		s.State = "up"
	case len(nss) > 0 || s.Config != nil || s.StateFileError != "":
		s.State = "partial"
	}
	return s, nil
}

func printLabStatus(w io.Writer, s labStatus) {
	switch s.State {
	case "down":
		fmt.Fprintf(w, "lab %s: down (nothing exists)\n", s.Name)
		return
	case "partial":
		fmt.Fprintf(w, "lab %s: partial, the leftovers of an interrupted run (`wirebench lab up%s` or `lab down%s` removes them)\n",
			s.Name, nameFlag(s.Name), nameFlag(s.Name))
	default:
		fmt.Fprintf(w, "lab %s: up since %s, net %s\n", s.Name, s.Config.Created.Format(time.RFC3339), s.Config.Net)
	}
	if s.StateFileError != "" {
		fmt.Fprintf(w, "  state file: %s\n", s.StateFileError)
	}
	for _, ns := range s.Namespaces {
		fmt.Fprintf(w, "  %s\n", ns.Name)
		for _, l := range ns.Links {
			state := "down"
			if l.Up {
				state = "up"
			}
			q := l.Qdisc
			if l.RateBPS != 0 {
				q += " " + rateText(l.RateBPS) + "bit/s"
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
			fmt.Fprintf(w, "    processes%s\n", strings.TrimPrefix(pidNote(ns.PIDs), "; ended processes"))
		}
	}
	if s.Config != nil && s.Config.Model != nil {
		printRelayStatus(w, s.Config.Model.Spec, s.Relays)
	}
	printWireStatus(w, s.Config, s.Wire)
}

func newLabExecCmd(e *env, name *string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "exec a|b|r -- COMMAND [ARG...]",
		Short: "Run a command inside host a or b (or r, with --model or --wire exact) of the lab; its exit code is wirebench's",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) >= 2 && args[1] == "--" {
				args = append([]string{args[0]}, args[2:]...) // "--" after the host: flags stop at the host, so cobra keeps it
			}
			if len(args) < 2 {
				return usagef("expected a host (a or b) and a command, like: lab exec b -- wirebench server")
			}
			if args[0] != "a" && args[0] != "b" && args[0] != "r" {
				return usagef("unknown host %q: want a or b (or r in a lab with --model or --wire exact)", args[0])
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			if err := labNeedsRoot(); err != nil {
				return err
			}
			argv := args[1:]
			if argv[0] == "--" {
				argv = argv[1:]
			}
			return labExec(e, *name, args[0], argv)
		},
	}
	cmd.Flags().SetInterspersed(false) // everything after the host belongs to the command
	return cmd
}

// labExec runs argv in host's namespace with wirebench's standard streams
// and returns its exit status. SIGINT, SIGTERM and SIGHUP sent to wirebench
// are passed on to the command, and wirebench waits for it to end, so one
// `kill` (a script's, timeout's, a CI job's) stops both. Run from a
// terminal in the foreground, the command shares wirebench's process group
// and the terminal: Ctrl-C reaches it directly and is not passed on a
// second time. Elsewhere it gets a process group of its own, so a signal
// sent to wirebench's whole group reaches it once, through wirebench. When
// ctx ends (no signal came), the command gets SIGTERM.
func labExec(e *env, name, host string, argv []string) error {
	ns := netlab.LabNamespace(name, host)
	nss, err := netlab.LabNamespaces(name)
	if err != nil {
		return err
	}
	if !slices.Contains(nss, ns) {
		up := nameFlag(name)
		if host == "r" {
			up += " --model SPEC" // r exists only in a lab with a relay
		}
		return fmt.Errorf("lab %s has no host %s (no namespace %s): start it with `wirebench lab up%s`", name, host, ns, up)
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return fmt.Errorf("lab exec: %w", err)
	}
	cmd := &exec.Cmd{Path: path, Args: argv, Stdin: os.Stdin, Stdout: rawWriter(e.stdout), Stderr: e.stderr, WaitDelay: time.Second}
	ownGroup := !foregroundTerminal()
	ownProcessGroup(cmd, ownGroup)
	// Catch the signals before the command starts: one that comes
	// between is passed on once it runs, not lost or fatal to wirebench.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, labExecSignals...)
	defer signal.Stop(sigs)
	if e.signalsTaken != nil {
		e.signalsTaken.Store(true)
	}
	if err := netlab.StartIn(ns, cmd); err != nil {
		return fmt.Errorf("lab exec %s in %s: %w", argv[0], ns, err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	done, passed := e.ctx.Done(), false
	for {
		select {
		case s := <-sigs:
			if s == os.Interrupt && !ownGroup {
				continue // the terminal sent it to the command as well
			}
			_ = cmd.Process.Signal(s)
			passed = true
		case <-done:
			done = nil
			if !passed {
				_ = cmd.Process.Signal(syscall.SIGTERM)
			}
		case err := <-waited:
			return labExecStatus(argv[0], err)
		}
	}
}

// labExecSignals are the signals `lab exec` passes on to its command.
var labExecSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// labExecStatus turns the command's end into wirebench's: its exit code,
// or 128 + the signal that ended it, as a shell reports it.
func labExecStatus(name string, err error) error {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return exitStatus{128 + int(ws.Signal())}
		}
		return exitStatus{ee.ExitCode()}
	}
	return fmt.Errorf("lab exec %s: %w", name, err)
}

// rawWriter returns the file under wirebench's output wrapper, so that a
// command run by `lab exec` writes to the terminal itself (and sees one).
func rawWriter(w io.Writer) io.Writer {
	if ew, ok := w.(*errWriter); ok {
		if f, ok := ew.w.(*os.File); ok {
			return f
		}
	}
	return w
}
