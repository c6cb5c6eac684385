package iperf2

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
)

func TestRefusedAtOnce(t *testing.T) {
	refusedUDP := &result.Result{Error: "sending udp: the peer answered 5 times that its UDP port is closed (is the server running and listening for UDP, e.g. iperf -s -u?): udpio: sendmmsg: connection refused"}
	cases := []struct {
		r    *result.Result
		err  error
		want bool
	}{
		{nil, fmt.Errorf("dialing: %w", syscall.ECONNREFUSED), true},
		{nil, fmt.Errorf("dialing: %w", syscall.EHOSTUNREACH), false},
		{refusedUDP, nil, true},
		{&result.Result{Error: refusedUDP.Error, Receiver: &result.Receiver{}}, nil, false}, // the server reported: it ran
		{&result.Result{Error: "stopped early"}, nil, false},
		{&result.Result{}, nil, false},
	}
	for i, c := range cases {
		if got := session.RefusedAtOnce(c.r, c.err); got != c.want {
			t.Errorf("case %d: RefusedAtOnce = %v, want %v", i, got, c.want)
		}
	}
}

// TestRetryWhileRefused: a test refused at once is run again until the
// server listens, and not past the grace.
func TestRetryWhileRefused(t *testing.T) {
	tries := 0
	r, err := session.RetryWhileRefused(context.Background(), time.Minute, func(context.Context) (*result.Result, error) {
		if tries++; tries < 3 {
			return nil, fmt.Errorf("dialing: %w", syscall.ECONNREFUSED)
		}
		return &result.Result{}, nil
	})
	if err != nil || r == nil || tries != 3 {
		t.Errorf("after %d tries: %v, %v; want a result on the third", tries, r, err)
	}
	tries = 0
	_, err = session.RetryWhileRefused(context.Background(), 0, func(context.Context) (*result.Result, error) {
		tries++
		return nil, syscall.ECONNREFUSED
	})
	if tries != 1 || err == nil {
		t.Errorf("with no grace: %d tries, error %v; want one try and the refusal", tries, err)
	}
}
