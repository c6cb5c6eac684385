package pscheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/session/iperf2"
	"github.com/wirebench/wirebench/internal/sockopt"
	"github.com/wirebench/wirebench/internal/units"
)

// Timing of a throughput run, as the iperf3 tool reckons it: setup grows
// with the path's round-trip time (link-rtt, default 200 ms: a second per
// 50 ms, at least one), and the server's report takes a while after the
// test.
const (
	defaultLinkRTT   = 200 * time.Millisecond
	serverShutdown   = 2 * time.Second
	refusedRetryTime = 3 * time.Second
)

// setupTime is the allowance for connecting and exchanging the test.
func setupTime(linkRTT time.Duration) time.Duration {
	return max(linkRTT*20, time.Second)
}

// throughputTimes returns the test's own length (omit included) and the
// setup allowance.
func throughputTimes(s ThroughputSpec) (test, setup time.Duration, err error) {
	test = session.DefaultDuration
	if s.Duration != "" {
		if test, err = ParseDuration(s.Duration); err != nil {
			return 0, 0, fmt.Errorf("duration: %w", err)
		}
	}
	if s.Omit != "" {
		omit, err := ParseDuration(s.Omit)
		if err != nil {
			return 0, 0, fmt.Errorf("omit: %w", err)
		}
		test += omit.Truncate(time.Second)
	}
	rtt := defaultLinkRTT
	if s.LinkRTT != "" {
		if rtt, err = ParseDuration(s.LinkRTT); err != nil {
			return 0, 0, fmt.Errorf("link-rtt: %w", err)
		}
	}
	if test > 24*time.Hour || rtt > time.Minute {
		return 0, 0, fmt.Errorf("a test of %v over a path of %v round trip is longer than wirebench runs (a day, a minute)", test, rtt)
	}
	return test, setupTime(rtt), nil
}

// throughputDuration is the time a run takes from its start time.
func throughputDuration(s ThroughputSpec, cfg Config) (time.Duration, error) {
	test, setup, err := throughputTimes(s)
	return cfg.serverWait() + setup + test + serverShutdown, err
}

// clientConfig turns a spec into the client test wirebench runs against
// host (the spec's dest when host is ""), in the dialect the configuration
// gives for the dest (iperf2 when none: a wirebench or iperf 2 server).
func clientConfig(s ThroughputSpec, cfg Config, host string) (session.ClientConfig, error) {
	dev, name := cfg.dialectFor(s.Dest)
	if !s.SingleEnded {
		name, dev = session.DialectIperf2, Device{}
	}
	c := session.ClientConfig{
		Host: host, Dialect: name, Port: dev.Port, UDP: s.UDP, Parallel: s.Parallel,
		Length: s.BufferLength, Reverse: s.Reverse, Congestion: s.Congestion, ZeroCopy: s.ZeroCopy,
		BindHost: s.LocalAddress, IPv6: s.IPVersion == 6,
	}
	if c.Host == "" {
		c.Host = hostOnly(s.Dest)
	}
	if c.BindHost == "" && s.Source != "" && s.IPVersion != 0 {
		c.BindHost = s.Source
	}
	if s.SingleEndedPort != 0 {
		c.Port = s.SingleEndedPort
	}
	if s.Bandwidth > 0 {
		c.Rate = units.Rate{Value: s.Bandwidth}
	}
	var err error
	if s.Duration != "" {
		if c.Duration, err = ParseDuration(s.Duration); err != nil {
			return c, fmt.Errorf("duration: %w", err)
		}
	}
	c.Interval = time.Second // iperf3's default, which pScheduler's results assume
	if s.Interval != "" {
		if c.Interval, err = ParseDuration(s.Interval); err != nil {
			return c, fmt.Errorf("interval: %w", err)
		}
	}
	if s.Omit != "" {
		omit, err := ParseDuration(s.Omit)
		if err != nil {
			return c, fmt.Errorf("omit: %w", err)
		}
		c.Omit = omit.Truncate(time.Second)
	}
	c.Socket = sockopt.Options{Buffer: s.WindowSize, MSS: s.MSS, NoDelay: s.NoDelay, Congestion: s.Congestion}
	if s.IPTOS != nil {
		c.Socket.TOS, c.Socket.SetTOS = *s.IPTOS, true
	}
	if s.IPVersion == 4 && strings.Contains(c.Host, ":") {
		return c, fmt.Errorf("ip-version 4 with the IPv6 dest %s", c.Host)
	}
	prepared, err := dialect.Prepare(c)
	if err != nil {
		return c, fmt.Errorf("wirebench cannot run this test: %w", err)
	}
	return prepared, nil
}

// RunThroughput runs participant in.Participant's side of a throughput
// test: participant 0 is the client (the sender, or with reverse the
// receiver), participant 1 the server. In a single-ended test participant
// 0 tests a server pScheduler does not run (a device, with the dialect the
// configuration gives); in a loopback test participant 0 runs both.
func RunThroughput(ctx context.Context, in RunInput, cfg Config) ThroughputResult {
	var s ThroughputSpec
	if err := json.Unmarshal(in.Test.Spec, &s); err != nil {
		return failed(fmt.Sprintf("reading throughput spec: %v", err), "")
	}
	if err := sleepUntil(ctx, in.Schedule.Start); err != nil {
		return failed(err.Error(), "")
	}
	switch {
	case in.Participant == 1 && !s.SingleEnded && !s.Loopback:
		return runServer(ctx, s, cfg, cfg.serverPort(), s.Dest)
	case in.Participant != 0:
		return failed(fmt.Sprintf("invalid participant %d", in.Participant), "")
	case s.Loopback:
		return runLoopback(ctx, s, cfg)
	case s.SingleEnded:
		c, err := clientConfig(s, cfg, "")
		if err != nil {
			return failed(err.Error(), "")
		}
		return runClient(ctx, c, s)
	}
	port := cfg.serverPort()
	if len(in.ParticipantData) > 1 {
		var pd struct {
			Port int `json:"server-port"`
		}
		if err := json.Unmarshal(in.ParticipantData[1], &pd); err == nil && pd.Port > 0 {
			port = pd.Port
		}
	}
	c, err := clientConfig(s, cfg, "")
	if err != nil {
		return failed(err.Error(), "")
	}
	c.Port = port
	if err := waitCtx(ctx, cfg.serverWait()); err != nil {
		return failed("cancelled while waiting for the server to start", "")
	}
	return runClient(ctx, c, s)
}

// runClient runs the client test, trying again while the server refuses
// connections (it may still be starting), for up to refusedRetryTime.
func runClient(ctx context.Context, c session.ClientConfig, s ThroughputSpec) ThroughputResult {
	test, setup, _ := throughputTimes(s)
	ctx, cancel := context.WithTimeout(ctx, test+setup+refusedRetryTime+serverShutdown)
	defer cancel()
	diags := describeClient(c)
	r, err := session.RetryWhileRefused(ctx, refusedRetryTime, func(ctx context.Context) (*result.Result, error) {
		return dialect.RunClient(ctx, c)
	})
	if err != nil {
		return failed(fmt.Sprintf("wirebench client: %v", err), diags)
	}
	return convert(r, diags)
}

// runServer runs a one-shot wirebench server on port until its test ends
// or the run's time is up.
func runServer(ctx context.Context, s ThroughputSpec, cfg Config, port int, bind string) ThroughputResult {
	test, setup, err := throughputTimes(s)
	if err != nil {
		return failed(err.Error(), "")
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.serverWait()+setup+test+refusedRetryTime+serverShutdown)
	defer cancel()
	allow := sourcePrefixes(ctx, s)
	srv, res, err := listen(ctx, s, port, bind, allow...)
	if err != nil {
		return failed(err.Error(), "")
	}
	diags := fmt.Sprintf("wirebench server, one test, port %d", srv.Port())
	if s.Reverse && s.UDP && len(allow) == 0 {
		diags += "; the spec names no source, so UDP reverse is sent only to local networks"
	}
	srv.Serve(ctx)
	select {
	case r := <-res:
		return convert(r, diags)
	default:
		return failed("no test arrived at the wirebench server before the run's time was up", diags)
	}
}

// sourcePrefixes are the addresses of the spec's source (source-node's
// host, else source), to which the server may send a UDP reverse test: a
// wirebench server sends UDP reverse and connect-back tests only to local
// networks unless told otherwise, and a pScheduler source is often on a
// public one. None when the spec names no source or it does not resolve.
func sourcePrefixes(ctx context.Context, s ThroughputSpec) []netip.Prefix {
	src := s.Source
	if s.SourceNode != "" {
		src = s.SourceNode
	}
	if src == "" || !s.Reverse || !s.UDP {
		return nil
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", hostOnly(src))
	if err != nil {
		return nil
	}
	var out []netip.Prefix
	for _, ip := range ips {
		ip = ip.Unmap()
		out = append(out, netip.PrefixFrom(ip, ip.BitLen()))
	}
	return out
}

// listen opens a one-shot server; the returned channel gets its result.
// UDP reverse tests may be sent to allow as well as to local networks.
func listen(ctx context.Context, s ThroughputSpec, port int, bind string, allow ...netip.Prefix) (*session.Server, chan *result.Result, error) {
	res := make(chan *result.Result, 1)
	sc := session.ServerConfig{Port: port, OneShot: true, IPv6: s.IPVersion == 6, Interval: time.Second, AllowReverse: allow}
	if s.Interval != "" {
		sc.Interval, _ = ParseDuration(s.Interval)
	}
	if s.IPVersion != 0 && bind != "" && net.ParseIP(hostOnly(bind)) != nil {
		sc.Bind = hostOnly(bind)
	}
	sc.OnResult = func(_ int, r *result.Result) {
		select {
		case res <- r:
		default:
		}
	}
	srv, err := iperf2.Listen(ctx, sc)
	if err != nil {
		return nil, nil, fmt.Errorf("starting the wirebench server: %w", err)
	}
	return srv, res, nil
}

// runLoopback runs a server on a free port of this host and the client
// against it.
func runLoopback(ctx context.Context, s ThroughputSpec, cfg Config) ThroughputResult {
	s.SingleEnded = false
	srv, res, err := listen(ctx, s, -1, "")
	if err != nil {
		return failed(err.Error(), "")
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan struct{})
	go func() { srv.Serve(sctx); close(done) }()
	c, err := clientConfig(s, cfg, "")
	if err != nil {
		stop()
		<-done
		return failed(err.Error(), "")
	}
	c.Port = srv.Port()
	out := runClient(ctx, c, s)
	stop()
	<-done
	select {
	case r := <-res:
		out.Diags += "\n\nserver:\n" + describeServer(r)
		if s.Reverse {
			senderRate(&out, convert(r, ""))
		}
	default:
	}
	return out
}

// describeClient is the diags of a client run.
func describeClient(c session.ClientConfig) string {
	proto := "TCP"
	if c.UDP {
		proto = fmt.Sprintf("UDP at %.0f bit/s", c.Rate.Value)
	}
	return fmt.Sprintf("wirebench client: %s to %s port %d, dialect %s, %s, duration %v, omit %v, reverse %v",
		proto, c.Host, c.Port, c.Dialect, units.Plural(c.Parallel, "stream"), c.Duration, c.Omit, c.Reverse)
}

// describeServer sums up a server's result for diags.
func describeServer(r *result.Result) string {
	if r.Receiver != nil {
		return fmt.Sprintf("received %d bytes at %.0f bit/s", r.Receiver.Bytes, r.Receiver.BitsPerSecond)
	}
	if r.Sender != nil {
		return fmt.Sprintf("sent %d bytes at %.0f bit/s", r.Sender.Bytes, r.Sender.BitsPerSecond)
	}
	return "no figures"
}

// failed is a throughput result for a run that measured nothing.
func failed(msg, diags string) ThroughputResult {
	return ThroughputResult{Succeeded: false, Error: msg, Diags: diags, Intervals: []ThroughputInterval{}}
}

// sleepUntil waits for the run's start time; "" means now.
func sleepUntil(ctx context.Context, start string) error {
	if start == "" {
		return nil
	}
	t, err := parseStart(start)
	if err != nil {
		return err
	}
	if err := waitCtx(ctx, time.Until(t)); err != nil {
		return fmt.Errorf("cancelled before the start time %s", start)
	}
	return nil
}

// waitCtx waits d or until ctx ends.
func waitCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
