package cli

import (
	"context"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/units"
)

// newLoopbackCmd is the no-configuration first run: a server and a client
// in one process on 127.0.0.1, measuring this machine's own stack.
func newLoopbackCmd(e *env) *cobra.Command {
	var seconds float64
	var rate string
	var json bool
	cmd := &cobra.Command{
		Use:   "loopback",
		Short: "Measure TCP and UDP over 127.0.0.1 with a server and a client in this one process",
		Long: `Run a wirebench server and client in one process over the loopback interface:
a TCP test, then a UDP test at the given rate. It needs no second machine and no
configuration, and shows what this host itself can generate and count — the
ceiling of any measurement made from it.`,
		Example: `  wirebench loopback
  wirebench loopback -t 5 -b 1G
  wirebench loopback --json`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(*cobra.Command, []string) error {
			if seconds <= 0 || seconds > 3600 {
				return usagef("invalid duration -t %v: want 0 < seconds ≤ 3600", seconds)
			}
			r, err := units.ParseRate(rate)
			if err != nil {
				return usageError{err}
			}
			return runLoopback(e, time.Duration(seconds*float64(time.Second)), r, json)
		},
	}
	cmd.Flags().Float64VarP(&seconds, "time", "t", 2, "seconds per test")
	cmd.Flags().StringVarP(&rate, "bandwidth", "b", "100M", "UDP rate (bit/s with k/M/G, or pps)")
	cmd.Flags().BoolVar(&json, "json", false, `print one JSON document (kind "loopback") with both client results`)
	return cmd
}

func runLoopback(e *env, d time.Duration, rate units.Rate, json bool) error {
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	served := make(chan *result.Result, 16)
	srv, err := session.Listen(ctx, session.ServerConfig{Bind: "127.0.0.1", Port: -1, IdleTimeout: 2 * time.Second,
		OnLog:    func(msg string) { e.logf("server: %s", msg) },
		OnResult: func(_ int, r *result.Result) { served <- r }})
	if err != nil {
		return fmt.Errorf("starting the loopback server: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	tests := []session.ClientConfig{
		{Host: "127.0.0.1", Port: srv.Port(), Duration: d, Interval: time.Second},
		{Host: "127.0.0.1", Port: srv.Port(), Duration: d, Interval: time.Second, UDP: true, Rate: rate},
	}
	var failed error
	doc := loopbackDoc{Schema: result.Schema, Kind: "loopback", Tests: []*result.Result{}}
	for i, cfg := range tests {
		text := report.NewText(e.stdout, fmt.Sprint(i+1))
		if !json {
			cfg.OnInterval = func(in result.Interval) { text.Interval(fmt.Sprint(i+1), in, cfg.UDP, false) }
			cfg.OnConnected = text.Connected
			if p, err := dialect.Prepare(cfg); err == nil {
				text.Header(previewTest(p), "client", "", "")
			}
		}
		r, err := dialect.RunClient(ctx, cfg)
		if err != nil {
			failed = errors.Join(failed, err)
			continue
		}
		attachServerCount(r, served)
		if json {
			doc.Tests = append(doc.Tests, result.Sanitize(r))
		} else {
			text.Summary(r)
			if err := text.Err(); err != nil {
				return err
			}
		}
		if r.Error != "" {
			failed = errors.Join(failed, fmt.Errorf("%s test ended early: %s", r.Test.Protocol, r.Error))
		}
	}
	cancel()
	if err := <-done; err != nil {
		failed = errors.Join(failed, err)
	}
	if json {
		enc := stdjson.NewEncoder(e.stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			return errors.Join(failed, fmt.Errorf("writing JSON: %w", err))
		}
	}
	return failed
}

// loopbackDoc is loopback's one JSON document: both client results.
type loopbackDoc struct {
	Schema string           `json:"schema"`
	Kind   string           `json:"kind"`
	Tests  []*result.Result `json:"tests"`
}

// attachServerCount gives a TCP client result the in-process server's own
// receive count: iperf2 servers report nothing back over TCP, but here the
// server is in the same process.
func attachServerCount(r *result.Result, served <-chan *result.Result) {
	select {
	case s := <-served:
		if r.Receiver == nil && s.Receiver != nil {
			rcv := *s.Receiver
			rcv.Source = "server"
			r.Receiver = &rcv
		}
	case <-time.After(3 * time.Second):
		r.Warn("the in-process server did not report this test within 3 s")
	}
}
