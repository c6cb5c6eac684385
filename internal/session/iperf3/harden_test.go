package iperf3

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	i3wire "github.com/wirebench/wirebench/internal/wire/iperf3"
)

// TestWBPeriodBounded: the per-stream interval length a client asks for
// (wb_interval_ms) cannot make the server keep more than maxWBIntervals
// intervals; a period made longer says so.
func TestWBPeriodBounded(t *testing.T) {
	for _, tc := range []struct {
		ms      int64
		streams int
		longest time.Duration
		want    time.Duration
		warn    bool
	}{
		{100, 1, 40 * time.Second, 100 * time.Millisecond, false},
		{1, 1, 40 * time.Second, 10 * time.Millisecond, false},
		{0, 1, 40 * time.Second, time.Second, false},
		{1 << 62, 1, 40 * time.Second, time.Hour, false},
		{1, 128, time.Hour, time.Hour * 128 / maxWBIntervals, true},
		{0, 128, 2 * time.Hour, 2 * time.Hour * 128 / maxWBIntervals, true},
	} {
		sv := &i3ServerTest{t: &i3Test{p: &i3wire.Params{WB: &i3wire.WBParams{IntervalMs: tc.ms}}, streams: make([]*i3SrvStream, tc.streams)},
			r: result.New("server")}
		got := sv.wbPeriod(tc.longest)
		if got != tc.want || (len(sv.r.Warnings) > 0) != tc.warn {
			t.Errorf("%d ms, %d streams, %v: period %v (want %v), warnings %q", tc.ms, tc.streams, tc.longest, got, tc.want, sv.r.Warnings)
		}
		if n := int64(tc.longest/got) * int64(tc.streams); n > maxWBIntervals {
			t.Errorf("%d ms, %d streams, %v: %d intervals", tc.ms, tc.streams, tc.longest, n)
		}
	}
}

// TestIperf3ClientServerErrorDuringTest: an iperf3 server that answers with
// SERVER_ERROR during the test (seen from a real iperf3 3.12 server on a
// loaded host) ends our client's test with that error; the client used to
// wait forever for a second control message that never comes.
func TestIperf3ClientServerErrorDuringTest(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx := deadlineCtx(t)
	served := make(chan error, 1)
	go func() {
		served <- func() error {
			c, err := ln.Accept()
			if err != nil {
				return err
			}
			defer c.Close()
			conn := i3wire.NewConn(c)
			if _, err := conn.ReadCookie(ctx); err != nil {
				return err
			}
			if err := conn.WriteState(ctx, i3wire.ParamExchange); err != nil {
				return err
			}
			if _, err := conn.ReadParams(ctx); err != nil {
				return err
			}
			if err := conn.WriteState(ctx, i3wire.CreateStreams); err != nil {
				return err
			}
			d, err := ln.Accept()
			if err != nil {
				return err
			}
			defer d.Close()
			go func() { _, _ = io.Copy(io.Discard, d) }()
			for _, st := range []i3wire.State{i3wire.TestStart, i3wire.TestRunning} {
				if err := conn.WriteState(ctx, st); err != nil {
					return err
				}
			}
			return conn.WriteServerErr(ctx, &i3wire.ServerErr{IErrno: i3wire.ErrnoServerExpired})
		}()
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	r, err := runClient(ctx, session.ClientConfig{Host: "127.0.0.1", Port: port, Dialect: session.DialectIperf3, Duration: 5 * time.Second})
	if err != nil {
		t.Fatalf("RunClient: %v", err)
	}
	if r.Error == "" {
		t.Errorf("the server's error is not in the result: %+v", r)
	}
	if err := <-served; err != nil {
		t.Errorf("fake server: %v", err)
	}
}
