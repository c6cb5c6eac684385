package cli

// `lab up --wire exact`: the lab's wire is a departure-time forwarder
// (internal/edtwire) running as its own process in the middle host r,
// started detached by `lab up`, its counters shown by `lab status`, ended
// by `lab down`. See docs/lab-hosts.md.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/edtwire"
	"github.com/wirebench/wirebench/internal/netlab"
)

// labWireSt is the exact wire's part of the state file.
type labWireSt struct {
	PID int `json:"pid"`
	// Config holds the forwarder's configuration, Stats its counters
	// (rewritten every second), Log its stderr.
	Config string `json:"config"`
	Stats  string `json:"stats"`
	Log    string `json:"log"`
}

// labWireFiles returns the exact wire's files (removeLabRelayFiles
// removes them with the relays').
func labWireFiles(name string) (cfg, stats, log string) {
	base := filepath.Join(labStateDir, "lab-"+name+"-wire")
	return base + "-config.json", base + "-stats.json", base + ".log"
}

// wireReadyRE matches the line `lab wire-run` logs once it forwards.
var wireReadyRE = regexp.MustCompile(`(?m)^wirebench: exact wire forwarding`)

// startLabWire writes the lab's forwarder configuration and starts
// `wirebench lab wire-run` in r, detached, waiting until it forwards.
func startLabWire(ctx context.Context, l *netlab.Lab) (*labWireSt, error) {
	c, err := l.WireConfig()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(labStateDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", labStateDir, err)
	}
	st := &labWireSt{}
	st.Config, st.Stats, st.Log = labWireFiles(l.Config.Lab)
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(st.Config, b, 0o644); err != nil {
		return nil, fmt.Errorf("writing the wire's configuration: %w", err)
	}
	argv, err := selfArgv("lab", "wire-run", "--config", st.Config, "--stats", st.Stats)
	if err != nil {
		return nil, err
	}
	st.PID, _, err = startDetached(ctx, l.R.Name, argv, st.Log, os.DevNull, wireReadyRE)
	if err != nil {
		return nil, fmt.Errorf("starting the exact wire in r: %w", err)
	}
	return st, nil
}

// newLabWireRunCmd is the hidden `lab wire-run`: the exact wire's
// forwarder, run by `lab up --wire exact` inside r.
func newLabWireRunCmd(e *env) *cobra.Command {
	var cfgPath, statsPath string
	cmd := &cobra.Command{
		Use:    "wire-run",
		Short:  "Run the exact wire's forwarder in the current namespace (started by lab up --wire exact)",
		Hidden: true,
		Args:   exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			b, err := os.ReadFile(cfgPath)
			if err != nil {
				return err
			}
			var c edtwire.Config
			if err := json.Unmarshal(b, &c); err != nil {
				return fmt.Errorf("reading %s: %w", cfgPath, err)
			}
			w, err := edtwire.Open(c)
			if err != nil {
				return err
			}
			w.Run()
			if err := writeWireStats(statsPath, w.Stats()); err != nil {
				return errors.Join(err, w.Close())
			}
			fmt.Fprintln(e.stderr, "wirebench: exact wire forwarding")
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case <-e.ctx.Done():
					err := w.Close()
					return errors.Join(err, writeWireStats(statsPath, w.Stats()))
				case <-tick.C:
					if err := writeWireStats(statsPath, w.Stats()); err != nil {
						fmt.Fprintf(e.stderr, "wirebench: %v\n", err)
					}
				}
			}
		},
	}
	cmd.Flags().StringVar(&cfgPath, "config", "", "the forwarder's configuration (JSON)")
	cmd.Flags().StringVar(&statsPath, "stats", "", "file its counters are written to every second")
	return cmd
}

func writeWireStats(path string, s []edtwire.Stats) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("writing the wire's counters: %w", err)
	}
	return os.Rename(tmp, path)
}

// readWireStats reads the counters a lab's exact wire last wrote.
func readWireStats(st *labState) []edtwire.Stats {
	if st == nil || st.Wire == nil {
		return nil
	}
	b, err := os.ReadFile(st.Wire.Stats)
	if err != nil {
		return nil
	}
	var s []edtwire.Stats
	if json.Unmarshal(b, &s) != nil {
		return nil
	}
	return s
}

func printWireStatus(w io.Writer, st *labState, s []edtwire.Stats) {
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
