package session

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/internal/result"
)

// IsRefused reports whether err is an ICMP port-unreachable surfacing on a
// connected UDP socket.
func IsRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// RefusedAtOnce reports whether a client test found no server listening:
// a TCP connection refused (err), or a UDP test whose datagrams drew port
// unreachable before any server report (r.Error keeps that error's text;
// the result has no receiver). A server that is still starting looks like
// this.
func RefusedAtOnce(r *result.Result, err error) bool {
	if err != nil {
		return IsRefused(err)
	}
	return r != nil && r.Receiver == nil && strings.Contains(r.Error, syscall.ECONNREFUSED.Error())
}

// RetryWhileRefused runs a client test, and runs it again every 100 ms
// while it is refused at once (RefusedAtOnce), for up to grace: the
// server may print that it started before it has bound its port (a
// device's iperf, a pScheduler participant). It returns the last try.
func RetryWhileRefused(ctx context.Context, grace time.Duration, run func(context.Context) (*result.Result, error)) (*result.Result, error) {
	until := time.Now().Add(grace)
	for {
		r, err := run(ctx)
		if !RefusedAtOnce(r, err) || ctx.Err() != nil || !time.Now().Before(until) {
			return r, err
		}
		select {
		case <-ctx.Done():
			return r, err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Iperf3Hint is what an iperf2-dialect test that the peer ended at once
// says: an iperf3 server resets (or closes) an iperf 2 test as soon as it
// has read the header as its cookie and parameters. The matrix looks for
// it to say it once, not in every cell.
const Iperf3Hint = "is it an iperf3 server? try --dialect iperf3"
