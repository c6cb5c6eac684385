// Package selftest is `wirebench loopback`: a server and a client of this
// one process over 127.0.0.1, a TCP test then a UDP test, measuring what
// this host itself can generate and count.
package selftest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/report"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2"
	"github.com/wirebench/wirebench/internal/units"
)

// Run runs a TCP test of duration d, then a UDP test at rate, each
// against a server of this process on 127.0.0.1. With text not nil it
// prints each test there as it runs (header, intervals, summary); logf
// gets the server's operational lines. It returns both results (those
// that ran) and every failure joined: a test that could not run or ended
// early, or an error writing text.
func Run(ctx context.Context, d time.Duration, rate units.Rate, text io.Writer, logf func(string, ...any)) (Doc, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan *result.Result, 16)
	srv, err := iperf2.Listen(ctx, session.ServerConfig{Bind: "127.0.0.1", Port: -1, IdleTimeout: 2 * time.Second,
		OnLog:    func(msg string) { logf("server: %s", msg) },
		OnResult: func(_ int, r *result.Result) { served <- r }})
	if err != nil {
		return Doc{}, fmt.Errorf("starting the loopback server: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	tests := []session.ClientConfig{
		{Host: "127.0.0.1", Port: srv.Port(), Duration: d, Interval: time.Second},
		{Host: "127.0.0.1", Port: srv.Port(), Duration: d, Interval: time.Second, UDP: true, Rate: rate},
	}
	var failed error
	doc := Doc{Schema: result.Schema, Kind: Kind, Tests: []*result.Result{}}
	for i, cfg := range tests {
		var t *report.Text
		if text != nil {
			t = report.NewText(text, fmt.Sprint(i+1))
			cfg.OnInterval = func(in result.Interval) { t.Interval(fmt.Sprint(i+1), in, cfg.UDP, false) }
			cfg.OnConnected = t.Connected
			if p, err := dialect.Prepare(cfg); err == nil {
				t.Header(session.PreviewTest(p), "client", "", "")
			}
		}
		r, err := dialect.RunClient(ctx, cfg)
		if err != nil {
			failed = errors.Join(failed, err)
			continue
		}
		attachServerCount(r, served)
		if t == nil {
			doc.Tests = append(doc.Tests, result.Sanitize(r))
		} else {
			t.Summary(r)
			if err := t.Err(); err != nil {
				return doc, err
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
	return doc, failed
}

// Kind is the "kind" of loopback's JSON document.
const Kind = "loopback"

// Doc is loopback's one JSON document: both client results (none in text
// output, where they were printed).
type Doc struct {
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
