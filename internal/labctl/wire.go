package labctl

// `lab up --wire exact`: the lab's wire is a departure-time forwarder
// (internal/edtwire) running as its own process (`wirebench lab wire-run`,
// which is RunWire) in the middle host r, started detached by Up, its
// counters read by ReadStatus, ended by Down. See docs/lab-hosts.md.

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

	"github.com/wirebench/wirebench/internal/edtwire"
	"github.com/wirebench/wirebench/internal/netlab"
)

// Wire is the exact wire's part of the state file.
type Wire struct {
	PID int `json:"pid"`
	// Config holds the forwarder's configuration, Stats its counters
	// (rewritten every second), Log its stderr.
	Config string `json:"config"`
	Stats  string `json:"stats"`
	Log    string `json:"log"`
}

// wireFiles returns the exact wire's files (RemoveFiles removes them with
// the relays').
func wireFiles(name string) (cfg, stats, log string) {
	base := filepath.Join(StateDir, "lab-"+name+"-wire")
	return base + "-config.json", base + "-stats.json", base + ".log"
}

// wireReady is the line RunWire logs once it forwards; wireReadyRE
// matches it in the log.
const wireReady = "wirebench: exact wire forwarding"

var wireReadyRE = regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(wireReady))

// startWire writes the lab's forwarder configuration and starts
// `wirebench lab wire-run` in r, detached, waiting until it forwards.
func startWire(ctx context.Context, l *netlab.Lab, self func(...string) ([]string, error)) (*Wire, error) {
	c, err := l.WireConfig()
	if err != nil {
		return nil, err
	}
	st := &Wire{}
	st.Config, st.Stats, st.Log = wireFiles(l.Config.Lab)
	if err := startCounting(ctx, self, l.R.Name, st, c, "wire-run", wireReadyRE); err != nil {
		return nil, fmt.Errorf("starting the exact wire in r: %w", err)
	}
	return st, nil
}

// startCounting writes cfg as JSON to st.Config and starts `wirebench lab
// SUB --config … --stats …` detached in namespace ns, logging to st.Log,
// waiting until its log says ready; it sets st.PID. The exact wire's
// forwarder and the filler are started so.
func startCounting(ctx context.Context, self func(...string) ([]string, error), ns string, st *Wire, cfg any, sub string, ready *regexp.Regexp) error {
	if err := os.MkdirAll(StateDir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", StateDir, err)
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("encoding its configuration: %w", err)
	}
	if err := os.WriteFile(st.Config, b, 0o644); err != nil {
		return fmt.Errorf("writing its configuration: %w", err)
	}
	argv, err := self("lab", sub, "--config", st.Config, "--stats", st.Stats)
	if err != nil {
		return err
	}
	st.PID, _, err = startDetached(ctx, ns, argv, st.Log, os.DevNull, ready)
	return err
}

// RunWire is the exact wire's forwarder, run in r by `lab up --wire
// exact` as `wirebench lab wire-run`: it reads its configuration from
// cfgPath, forwards until ctx ends, and writes its counters to statsPath
// every second and when it ends. It logs to log that it forwards (the line
// Up waits for) and any counters it could not write.
func RunWire(ctx context.Context, cfgPath, statsPath string, log io.Writer) error {
	var c edtwire.Config
	if err := readJSON(cfgPath, &c); err != nil {
		return err
	}
	w, err := edtwire.Open(c)
	if err != nil {
		return err
	}
	w.Run()
	return runCounting(ctx, statsPath, log, wireReady, func() any { return w.Stats() }, w.Close)
}

// readJSON decodes the JSON file at path into v.
func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	return nil
}

// runCounting is the life of a lab process that runs until ctx ends
// (the exact wire's forwarder, the filler): it writes the counters stats
// returns to statsPath, logs ready, then rewrites the counters every
// second, and at the end closes and writes them a last time.
func runCounting(ctx context.Context, statsPath string, log io.Writer, ready string, stats func() any, close func() error) error {
	if err := writeCounters(statsPath, stats()); err != nil {
		return errors.Join(err, close())
	}
	fmt.Fprintln(log, ready)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			err := close()
			return errors.Join(err, writeCounters(statsPath, stats()))
		case <-tick.C:
			if err := writeCounters(statsPath, stats()); err != nil {
				fmt.Fprintf(log, "wirebench: %v\n", err)
			}
		}
	}
}

// writeCounters writes a process's counters to path, whole or not at all.
func writeCounters(path string, s any) error {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encoding the counters: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("writing the counters: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing the counters: %w", err)
	}
	return nil
}

// readWireStats reads the counters a lab's exact wire last wrote (nil
// when there are none yet).
func readWireStats(st *State) []edtwire.Stats {
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
