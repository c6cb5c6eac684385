package cli

// `lab up --model`: its flags and how its relays are shown. The relays
// themselves, one per port in the lab's middle host r, are labctl's. See
// docs/lab-hosts.md.

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/wirebench/wirebench/internal/lab/model"
	"github.com/wirebench/wirebench/internal/labctl"
)

// selfArgv returns the command line that runs this wirebench binary with
// args: labctl.Up starts the relays and the exact wire with it. The lab
// tests replace it: their wirebench is the test binary.
var selfArgv = func(args ...string) ([]string, error) {
	p, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding wirebench's own binary: %w", err)
	}
	return append([]string{p}, args...), nil
}

// relayPlan checks the model flags; nil means no relay.
func (f labUpFlags) relayPlan() (*labctl.RelayPlan, error) {
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
		ports = labctl.DefaultModelPorts
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
	return &labctl.RelayPlan{Spec: f.model, Both: f.modelBoth, Ports: ports}, nil
}

// printRelayStatus writes one line per relay of `lab status`.
func printRelayStatus(w io.Writer, spec string, rs []labctl.RelayStatus) {
	for _, r := range rs {
		state := "running"
		if !r.Running {
			state = "NOT RUNNING (" + r.LastLog + ")"
		}
		fmt.Fprintf(w, "  relay pid %d %s: %s -> %s, model %q, seed %d, log %s\n", r.PID, state, r.Listen, r.To, spec, r.Seed, r.Log)
	}
}
