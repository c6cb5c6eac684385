package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/echo"
	"github.com/wirebench/wirebench/internal/matrix"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2"
	"github.com/wirebench/wirebench/internal/sweep"
)

// TestMatrixCellAboveMediumSuspect (issue 19, point 2): UDP over loopback
// at 40 Mbit/s judged against a deliberately wrong --medium eth10 (at most
// 9.57 Mbit/s of 1470-byte UDP) is not ok: both cells are "suspect", with
// the reason in words, in JSON and in the text table.
func TestMatrixCellAboveMediumSuspect(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := iperf2.Listen(ctx, session.ServerConfig{Bind: "127.0.0.1", Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	echo.Register(srv, echo.ServerConfig{})
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	defer func() { cancel(); <-done }()
	base := []string{"matrix", "127.0.0.1", "-p", strconv.Itoa(srv.Port()), "-t", "0.5", "--proto", "udp", "-b", "40M", "--medium", "eth10"}

	var out, errb bytes.Buffer
	if code := run(context.Background(), append(base, "--json"), &out, &errb); code != exitOK {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	var m result.Matrix
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("decoding: %v\n%s", err, out.String())
	}
	if len(m.Cells) != 2 {
		t.Fatalf("cells %+v", m.Cells)
	}
	for _, c := range m.Cells {
		t.Logf("%s: %.2f %% of line, %s: %s", c.Name(), deref(c.PercentOfLine), c.Status, c.Reason)
		if c.PercentOfLine == nil || *c.PercentOfLine <= 100.1 {
			t.Errorf("%s: %v %% of eth10: the test did not run above the medium", c.Name(), c.PercentOfLine)
			continue
		}
		if c.Status != matrix.StatusSuspect || !strings.Contains(c.Reason, "more than the medium can carry") {
			t.Errorf("%s: status %q, reason %q: want suspect, saying why", c.Name(), c.Status, c.Reason)
		}
		if l := c.Result.Link; l == nil || l.Status != "suspect" || l.Reason == "" {
			t.Errorf("%s: the result's link %+v is not suspect", c.Name(), l)
		}
	}
	out.Reset()
	if code := run(context.Background(), base, &out, &errb); code != exitOK {
		t.Fatalf("text: exit %d\n%s", code, errb.String())
	}
	if n := strings.Count(out.String(), "suspect: the receiver goodput is"); n != 2 {
		t.Errorf("text shows %d suspect cells, want 2:\n%s", n, out.String())
	}
}

// TestSweepPointAboveMediumSuspect (issue 19, point 2): a plain reflector
// passes up to 2000 datagrams/s of 1472 bytes over loopback, 246 % of what
// a deliberately wrong --medium eth10 carries (813/s; a loaded host that
// passes less still passes more than that): the point is "suspect", with
// the reason in JSON and in the table.
func TestSweepPointAboveMediumSuspect(t *testing.T) {
	port := plainReflector(t)
	base := []string{"sweep", "127.0.0.1", "-p", port, "--mode", "reflect", "--max-rate", "2000pps", "--trial", "300ms", "--gap", "50ms",
		"--medium", "eth10", "--sizes", "1472"}
	var out, errb bytes.Buffer
	if code := run(context.Background(), append(base, "--json"), &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var r result.Sweep
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || len(r.Sizes) != 1 {
		t.Fatalf("JSON: %v\n%s", err, out.String())
	}
	s := r.Sizes[0]
	t.Logf("1472 B: %.0f/s, %.2f %% of line, %s: %s", s.RatePPS, deref(s.PercentOfLine), s.Status, s.Reason)
	if s.PercentOfLine == nil || *s.PercentOfLine <= 100.1 {
		t.Fatalf("%v %% of eth10: the sweep did not pass a rate above the medium", s.PercentOfLine)
	}
	if s.Status != sweep.StatusSuspect || !strings.Contains(s.Reason, "more than the medium can carry") {
		t.Errorf("status %q, reason %q: want suspect, saying why", s.Status, s.Reason)
	}
	out.Reset()
	if code := run(context.Background(), base, &out, &errb); code != exitOK {
		t.Fatalf("text: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "SUSPECT") || !strings.Contains(out.String(), "suspect: 1472 B: the rate is") {
		t.Errorf("the table does not say the point is suspect:\n%s", out.String())
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}
