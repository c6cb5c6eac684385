package labctl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/wirebench/wirebench/internal/netlab"
	"github.com/wirebench/wirebench/internal/result"
)

// UpConfig is what Up makes.
type UpConfig struct {
	// Lab is netlab's configuration: the name, network, wire and host r.
	Lab netlab.Config
	// Medium is the medium the wire is shaped as, for the state file (""
	// for a bare rate or no shaping).
	Medium string
	// Relays, when not nil, are the device model's relays to start in r.
	Relays *RelayPlan
	// Self returns the command line that runs this wirebench with args:
	// the relays and the exact wire's forwarder are wirebench run again.
	Self func(args ...string) ([]string, error)
	// Leftovers, when not nil, is told which namespaces of an earlier,
	// crashed run of the lab Up removed and which processes in them it
	// ended, before it makes the lab anew.
	Leftovers func(removed []string, ended []int)
}

// Up creates the lab: it refuses when the lab is already up, removes a
// crashed run's leftovers, builds the namespaces, starts the exact wire or
// the relays in r, and writes the state file, which it returns. On error
// nothing of the lab is left.
func Up(ctx context.Context, c UpConfig) (State, error) {
	name := c.Lab.Lab
	if err := clearLeftovers(ctx, name, c.Leftovers); err != nil {
		return State{}, err
	}
	l, err := netlab.New(ctx, c.Lab)
	if err != nil {
		return State{}, fmt.Errorf("creating lab %s: %w", name, err)
	}
	// undo removes the lab once a process was started in it: RemoveLab
	// ends that process; only then can the namespaces go.
	undo := func(err error) error {
		_, _, rerr := netlab.RemoveLab(context.Background(), name, DownGrace)
		return errors.Join(err, rerr, l.Close(), RemoveFiles(name))
	}
	var wst *Wire
	if c.Lab.Wire == netlab.WireExact {
		if wst, err = startWire(ctx, l, c.Self); err != nil {
			return State{}, undo(fmt.Errorf("lab %s: %w", name, err))
		}
	}
	var fst *Wire
	if c.Lab.Wire == netlab.WireFilled && c.Lab.RateBPS != 0 {
		if fst, err = startFiller(ctx, l, c.Self); err != nil {
			return State{}, undo(fmt.Errorf("lab %s: %w", name, err))
		}
	}
	var mst *Model
	if c.Relays != nil {
		if mst, err = startRelays(ctx, l, c.Relays, c.Self); err != nil {
			return State{}, undo(fmt.Errorf("lab %s: %w", name, err))
		}
	}
	st := newState(l, c.Lab, c.Medium)
	st.Model, st.Wire, st.Filler = mst, wst, fst
	if err := WriteState(st); err != nil {
		if mst != nil || wst != nil || fst != nil {
			return State{}, undo(err)
		}
		return State{}, errors.Join(err, l.Close())
	}
	l.Release()
	return st, nil
}

// clearLeftovers refuses when lab name is up, and otherwise removes what
// an earlier run of it left: namespaces (told to leftovers), the state
// file, the files of its processes.
func clearLeftovers(ctx context.Context, name string, leftovers func([]string, []int)) error {
	nss, err := netlab.LabNamespaces(name)
	if err != nil {
		return err
	}
	if st, err := ReadState(name); err == nil && Complete(st, nss) {
		return fmt.Errorf("lab %s is already up (see `wirebench lab status%s`); remove it first with `wirebench lab down%s`",
			name, NameFlag(name), NameFlag(name))
	}
	if len(nss) > 0 {
		removed, killed, err := netlab.RemoveLab(ctx, name, DownGrace)
		if leftovers != nil {
			leftovers(removed, killed)
		}
		if err != nil {
			return fmt.Errorf("removing leftovers of lab %s: %w", name, err)
		}
	}
	if err := os.Remove(StatePath(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing stale state file: %w", err)
	}
	if err := RemoveFiles(name); err != nil {
		return fmt.Errorf("removing a stale relay's files: %w", err)
	}
	return nil
}

// newState is the state file of lab l, just made from cfg (l.Config is
// cfg with netlab's defaults filled in).
func newState(l *netlab.Lab, cfg netlab.Config, medium string) State {
	st := State{
		Schema: "wirebench/1", Kind: "lab", Name: cfg.Lab, Net: cfg.Net.String(), Medium: medium,
		RateBPS: cfg.RateBPS, Burst: l.Config.Burst, MTU: l.Config.MTU, Created: time.Now().UTC().Truncate(time.Second),
		Hosts: map[string]Host{
			"a": {Namespace: l.A.Name, Ifname: l.A.Ifname, Addr: l.A.Addr.String()},
			"b": {Namespace: l.B.Name, Ifname: l.B.Ifname, Addr: l.B.Addr.String()},
		},
	}
	if ifname, addr, ok := l.RouterA(); ok {
		st.Hosts["r"] = Host{Namespace: l.R.Name, Ifname: ifname, Addr: addr.String()}
	}
	return st
}

// Removal is what Down removed and each relay's closing report: `lab down
// --json`'s document.
type Removal struct {
	Schema    string   `json:"schema"`
	Kind      string   `json:"kind"`
	Name      string   `json:"name"`
	Removed   []string `json:"removed"`
	EndedPIDs []int    `json:"ended_pids"`
	// Relays are the closing documents of the lab's relays (docs/lab.md).
	Relays []result.Relay `json:"relays,omitempty"`
	// Warnings say which relay left no report, and why if its log tells,
	// and which packets the shaped wire after a relay dropped.
	Warnings []string `json:"warnings"`
}

// Down removes every namespace, link, qdisc and process of lab name, its
// state file and its processes' files, and returns what it removed with
// the closing reports its relays wrote as they ended.
func Down(ctx context.Context, name string) (Removal, error) {
	var stp *State
	if st, err := ReadState(name); err == nil {
		stp = &st
	}
	wireWarns := wireDrops(stp)
	removed, killed, err := netlab.RemoveLab(ctx, name, DownGrace)
	// The relays wrote their closing reports when RemoveLab ended them.
	reps, warns := collectRelayReports(name, stp)
	warns = append(warns, wireWarns...)
	if rerr := os.Remove(StatePath(name)); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		err = errors.Join(err, fmt.Errorf("removing state file: %w", rerr))
	}
	if rerr := RemoveFiles(name); rerr != nil {
		err = errors.Join(err, rerr)
	}
	if err != nil {
		return Removal{}, fmt.Errorf("removing lab %s: %w", name, err)
	}
	d := Removal{Schema: "wirebench/1", Kind: "lab-down", Name: name, Removed: removed, EndedPIDs: killed,
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
	return d, nil
}
