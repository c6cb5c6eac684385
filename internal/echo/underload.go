package echo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/ping"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/stats"
	"github.com/wirebench/wirebench/internal/version"
)

// Probe protocols of UnderLoad besides ProtoUDP.
const ProtoICMP = result.ProbeICMP

// Defaults of the probe beside a load.
const (
	DefaultLoadInterval = 10 * time.Millisecond
	DefaultIdle         = time.Second
	defaultICMPSize     = 56
	// icmpChunk is how many ICMP probes run per PingSize call in the
	// loaded phase: each call waits for its replies, so stopping between
	// calls loses no probe; at most one chunk runs after the load ends.
	icmpChunk = 5
)

// LoadProbeConfig configures the light probe that UnderLoad runs. The zero
// value of each field means its default.
type LoadProbeConfig struct {
	// Proto is ProtoUDP (default: echo requests to the wirebench server)
	// or ProtoICMP (ping, through internal/ping).
	Proto string
	Host  string
	Port  int // UDP only, default DefaultPort
	// Interval is the time between probes (default 10 ms); probes are
	// sent one at a time, so under a long RTT fewer are sent.
	Interval time.Duration
	// Size is the UDP message size (default DefaultSize) or the ICMP
	// payload size (default 56).
	Size    int
	Timeout time.Duration // per probe, default DefaultTimeout
	// Idle is how long to probe before the load starts (default 1 s).
	Idle time.Duration
	// Dial opens the UDP probe's socket (default net.Dialer).
	Dial DialFunc
	// Ping is the ICMP configuration; its Target is resolved from Host
	// when nil.
	Ping ping.Config
}

func (c *LoadProbeConfig) applyDefaults() {
	if c.Proto == "" {
		c.Proto = ProtoUDP
	}
	if c.Port == 0 {
		c.Port = DefaultPort
	}
	if c.Interval == 0 {
		c.Interval = DefaultLoadInterval
	}
	if c.Size == 0 {
		c.Size = DefaultSize
		if c.Proto == ProtoICMP {
			c.Size = defaultICMPSize
		}
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Idle == 0 {
		c.Idle = DefaultIdle
	}
}

// phaseProber probes for one phase: for d, or until ctx ends when d is 0.
type phaseProber interface {
	phase(ctx context.Context, d time.Duration, stop *atomic.Bool) (result.RTTStats, error)
	close()
}

// UnderLoad probes RTT for cfg.Idle, then runs load and probes beside it
// until load returns. It returns an error when the probe could not start
// (the load then does not run) or found no echo service in the idle
// phase; otherwise the result, with the probe's own failures in Error.
func UnderLoad(ctx context.Context, cfg LoadProbeConfig, load func(context.Context)) (*result.UnderLoad, error) {
	cfg.applyDefaults()
	p, info, err := newPhaseProber(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	defer p.close()
	r := &result.UnderLoad{Schema: Schema, Kind: result.KindUnderLoad, Version: version.String(), StartedAt: time.Now(),
		Probe: info, Warnings: []string{}}
	var never atomic.Bool
	r.Idle, err = p.phase(ctx, cfg.Idle, &never)
	if err != nil {
		return nil, fmt.Errorf("idle latency probe: %w", err)
	}
	if r.Idle.Received == 0 && ctx.Err() == nil {
		return nil, fmt.Errorf("idle latency probe: no reply from %s to %d %s probes (is it a wirebench server, and is the port open?)",
			cfg.Host, r.Idle.Sent, cfg.Proto)
	}
	var stop atomic.Bool
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var perr error
	go func() {
		defer close(done)
		r.Loaded, perr = p.phase(pctx, 0, &stop)
	}()
	load(ctx)
	stop.Store(true)
	cancel()
	<-done
	if perr != nil {
		r.Error = "loaded latency probe: " + perr.Error()
	}
	if r.Loaded.Received == 0 {
		r.Warnings = append(r.Warnings, "no probe was answered while the load ran")
	}
	return r, nil
}

func newPhaseProber(ctx context.Context, cfg *LoadProbeConfig) (phaseProber, result.LatencyProbe, error) {
	info := result.LatencyProbe{Proto: cfg.Proto, Host: cfg.Host, Size: cfg.Size, Interval: cfg.Interval.Seconds(),
		Timeout: cfg.Timeout.Seconds(), Idle: cfg.Idle.Seconds()}
	switch cfg.Proto {
	case ProtoUDP:
		ecfg := Config{Host: cfg.Host, Port: cfg.Port, Proto: ProtoUDP, Interval: cfg.Interval, Size: cfg.Size,
			Timeout: cfg.Timeout, Dial: cfg.Dial, Count: 1}
		ecfg.applyDefaults()
		if err := ecfg.Validate(); err != nil {
			return nil, info, ConfigError{fmt.Errorf("latency probe: %w", err)}
		}
		ecfg.Count = 0
		sp, err := newProber(ctx, &ecfg)
		if err != nil {
			return nil, info, fmt.Errorf("latency probe: %w", err)
		}
		info.Port, info.Peer = cfg.Port, sp.peer()
		return &udpPhases{p: sp, cfg: ecfg}, info, nil
	case ProtoICMP:
		pc := cfg.Ping
		if pc.Target == nil {
			ip, err := resolve(ctx, cfg.Host)
			if err != nil {
				return nil, info, err
			}
			pc.Target = ip
		}
		pg, err := ping.New(pc)
		if err != nil {
			return nil, info, fmt.Errorf("latency probe: %w", err)
		}
		info.Peer, info.Socket = pc.Target.String(), string(pg.Info().Kind)
		return &icmpPhases{p: pg, cfg: cfg}, info, nil
	}
	return nil, info, ConfigError{fmt.Errorf("unknown latency probe %q (want udp or icmp)", cfg.Proto)}
}

// resolve finds host's first address.
func resolve(ctx context.Context, host string) (net.IP, error) {
	if ip := net.ParseIP(host); ip != nil {
		return ip, nil
	}
	ips, err := net.DefaultResolver.LookupIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return nil, fmt.Errorf("resolving %s: %w", host, errors.Join(err, errors.New("no address")))
	}
	return ips[0], nil
}

// udpPhases probes with echo requests on one UDP socket.
type udpPhases struct {
	p   prober
	cfg Config
}

func (u *udpPhases) close() { u.p.close() }

func (u *udpPhases) phase(ctx context.Context, d time.Duration, _ *atomic.Bool) (result.RTTStats, error) {
	cfg := u.cfg
	cfg.Duration = d
	var st result.RTTStats
	before := u.p.late()
	err := runLoop(ctx, u.p, &cfg, stats.NewRTTRecorder(), &st)
	st.Late -= before
	return st, err
}

// icmpPhases probes with ICMP echo.
type icmpPhases struct {
	p   *ping.Pinger
	cfg *LoadProbeConfig
}

func (c *icmpPhases) close() { _ = c.p.Close() }

func (c *icmpPhases) phase(ctx context.Context, d time.Duration, stop *atomic.Bool) (result.RTTStats, error) {
	var st result.RTTStats
	rec := stats.NewRTTRecorder()
	start := time.Now()
	add := func(sr *result.PingSize) {
		st.Sent += int64(sr.Sent)
		st.Received += int64(sr.Received)
		st.Late += int64(sr.Late)
		st.Errors += int64(sr.SendErrors + sr.Unreachable + sr.TooBig)
		for _, s := range sr.Samples {
			rec.Record(s)
		}
	}
	var err error
	if d > 0 {
		n := max(int(d/c.cfg.Interval), 1)
		var sr *result.PingSize
		sr, err = c.p.PingSize(ctx, c.cfg.Size, n, c.cfg.Interval, c.cfg.Timeout)
		if sr != nil {
			add(sr)
		}
	} else {
		for !stop.Load() {
			// Chunks run on the parent of ctx's cancellation: stop, not
			// ctx, ends this phase, so no chunk is cut short.
			sr, e := c.p.PingSize(context.WithoutCancel(ctx), c.cfg.Size, icmpChunk, c.cfg.Interval, c.cfg.Timeout)
			if sr != nil {
				add(sr)
			}
			if e != nil {
				err = e
				break
			}
		}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		err = nil
	}
	st.Timeouts = st.Sent - st.Received - st.Errors
	st.Seconds = time.Since(start).Seconds()
	st.RTT = rec.Summary()
	if st.Sent > 0 {
		st.LossPct = 100 * float64(st.Sent-st.Received) / float64(st.Sent)
	}
	if st.Seconds > 0 {
		st.RequestsPerSecond = float64(st.Received) / st.Seconds
	}
	return st, err
}

// ClientUnderLoad runs one client test (dialect.RunClient) beside an RTT
// probe of the same host (UnderLoad). A probe that fails once the test has
// run costs only the latency figures: the test's result comes back with a
// warning saying why, and a nil latency result. When the probe cannot
// start, nothing runs and the error is the probe's (a ConfigError for a
// bad probe configuration), for the caller to name as its own option.
func ClientUnderLoad(ctx context.Context, cfg session.ClientConfig, probe LoadProbeConfig) (*result.Result, *result.UnderLoad, error) {
	var r *result.Result
	var rerr error
	probe.Host = cfg.Host
	lat, err := UnderLoad(ctx, probe, func(ctx context.Context) { r, rerr = dialect.RunClient(ctx, cfg) })
	if err != nil {
		if r == nil {
			return nil, nil, errors.Join(rerr, err)
		}
		r.Warn("--latency: the RTT probe failed: " + err.Error())
		return r, nil, rerr
	}
	return r, lat, rerr
}
