package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/wirebench/wirebench/internal/dialect"
	"github.com/wirebench/wirebench/internal/result"
	"github.com/wirebench/wirebench/internal/session"
	"github.com/wirebench/wirebench/internal/units"
)

// ProbeConfig says what /probe may do.
type ProbeConfig struct {
	// Allow lists the networks a probe may be sent to; empty refuses
	// every target.
	Allow []netip.Prefix
	// MaxDuration bounds a probe's test (default DefaultProbeMaxDuration);
	// MaxRate bounds the UDP rate asked for, bit/s (default
	// DefaultProbeMaxRate).
	MaxDuration time.Duration
	MaxRate     float64
	// MaxConcurrent bounds the probes running at once (default 2); more
	// are answered 429.
	MaxConcurrent int
	// Run runs the test (default dialect.RunClient) and Resolve looks a
	// target's name up (default the system resolver); seams for tests.
	Run     func(ctx context.Context, cfg session.ClientConfig) (*result.Result, error)
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
}

// Probe bounds.
const (
	DefaultProbeDuration    = time.Second
	DefaultProbeMaxDuration = 10 * time.Second
	DefaultProbeMaxRate     = 1e9
	// probeGrace is how long past its duration a probe may take to get
	// its report before it is ended.
	probeGrace = 10 * time.Second
)

func (c *ProbeConfig) applyDefaults() {
	if c.MaxDuration <= 0 {
		c.MaxDuration = DefaultProbeMaxDuration
	}
	if c.MaxRate <= 0 {
		c.MaxRate = DefaultProbeMaxRate
	}
	if c.MaxConcurrent <= 0 {
		c.MaxConcurrent = 2
	}
	if c.Run == nil {
		c.Run = dialect.RunClient
	}
	if c.Resolve == nil {
		c.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
}

// probeError is a refusal with its HTTP status.
type probeError struct {
	status int
	msg    string
}

func (e *probeError) Error() string { return e.msg }

func refuse(status int, format string, a ...any) error {
	return &probeError{status: status, msg: fmt.Sprintf(format, a...)}
}

// probeRequest turns a /probe query into the test to run, checking the
// target against the allowed networks after resolving it: the address
// checked is the address tested.
func (c *ProbeConfig) probeRequest(ctx context.Context, q map[string][]string) (session.ClientConfig, error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	var cfg session.ClientConfig
	target := get("target")
	if target == "" {
		return cfg, refuse(http.StatusBadRequest, "missing target: /probe?target=HOST[:PORT]")
	}
	host, port := target, get("port")
	if h, p, err := net.SplitHostPort(target); err == nil {
		host, port = h, p
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return cfg, refuse(http.StatusBadRequest, "invalid port %q: want 1-65535", port)
		}
		cfg.Port = n
	}
	switch p := get("proto"); p {
	case "", "udp":
		cfg.UDP = true
	case "tcp":
	default:
		return cfg, refuse(http.StatusBadRequest, "invalid proto %q: want udp or tcp", p)
	}
	cfg.Duration = DefaultProbeDuration
	if d := get("duration"); d != "" {
		s, err := strconv.ParseFloat(d, 64)
		if err != nil || math.IsNaN(s) || s <= 0 || time.Duration(s*float64(time.Second)) > c.MaxDuration {
			return cfg, refuse(http.StatusBadRequest, "invalid duration %q: want seconds above 0, at most %g", d, c.MaxDuration.Seconds())
		}
		cfg.Duration = time.Duration(s * float64(time.Second))
	}
	if v := get("rate"); v != "" {
		r, err := units.ParseRate(v)
		if err != nil {
			return cfg, refuse(http.StatusBadRequest, "%v", err)
		}
		if !r.PPS && r.Value > c.MaxRate {
			return cfg, refuse(http.StatusBadRequest, "rate %s is above this server's probe limit %s", v, units.FormatBits(c.MaxRate))
		}
		cfg.Rate = r
	}
	if v := get("length"); v != "" {
		n, err := units.ParseSize(v)
		if err != nil || n <= 0 || n > 65507 {
			return cfg, refuse(http.StatusBadRequest, "invalid length %q: want 1 to 65507 bytes", v)
		}
		cfg.Length = int(n)
	}
	cfg.Dialect = get("dialect")
	addr, err := c.allowed(ctx, host)
	if err != nil {
		return cfg, err
	}
	cfg.Host = addr.String()
	out, err := dialect.Prepare(cfg)
	if err != nil {
		return cfg, refuse(http.StatusBadRequest, "%v", err)
	}
	if out.UDP && out.Rate.PPS && out.Rate.Value*float64(max(out.Length, 1))*8 > c.MaxRate {
		return cfg, refuse(http.StatusBadRequest, "rate %s × %d bytes is above this server's probe limit %s", out.Rate, out.Length, units.FormatBits(c.MaxRate))
	}
	return out, nil
}

// allowed resolves host and returns its first address inside an allowed
// network, or a 403 refusal naming what was refused and why.
func (c *ProbeConfig) allowed(ctx context.Context, host string) (netip.Addr, error) {
	if len(c.Allow) == 0 {
		return netip.Addr{}, refuse(http.StatusForbidden, "probe of %s refused: this server allows no probe targets (start it with --probe-allow CIDR)", host)
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if addrs, err = c.Resolve(rctx, host); err != nil {
			return netip.Addr{}, refuse(http.StatusBadRequest, "probe of %s: resolving it: %v", host, err)
		}
	}
	for _, a := range addrs {
		a = a.Unmap()
		for _, p := range c.Allow {
			if p.Contains(a) {
				return a, nil
			}
		}
	}
	nets := make([]string, len(c.Allow))
	for i, p := range c.Allow {
		nets[i] = p.String()
	}
	return netip.Addr{}, refuse(http.StatusForbidden, "probe of %s refused: %v is outside --probe-allow (%s)", host, addrs, strings.Join(nets, ", "))
}

// probeHandler answers /probe: it runs one bounded test and writes its
// figures as Prometheus metrics (or, with format=json, the result
// document). done, when set, is given each result.
func (c *ProbeConfig) probeHandler(slots chan struct{}, done func(*result.Result)) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		cfg, err := c.probeRequest(req.Context(), req.URL.Query())
		if err != nil {
			status := http.StatusBadRequest
			var pe *probeError
			if errors.As(err, &pe) {
				status = pe.status
			}
			http.Error(w, err.Error(), status)
			return
		}
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		default:
			http.Error(w, fmt.Sprintf("too many probes running (at most %d at once); try again later", cap(slots)), http.StatusTooManyRequests)
			return
		}
		ctx, cancel := context.WithTimeout(req.Context(), cfg.Duration+probeGrace)
		defer cancel()
		began := time.Now()
		r, err := c.Run(ctx, cfg)
		took := time.Since(began)
		if r == nil {
			r = result.New("client")
		}
		if err != nil && r.Error == "" {
			r.Error = err.Error()
		}
		if done != nil {
			done(r)
		}
		if req.URL.Query().Get("format") == "json" {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(r)
			return
		}
		reg := probeMetrics(r, took)
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, req)
	}
}

// probeMetrics are a probe's figures as metrics; a figure the test did not
// get (no receiver report, not UDP) is left out rather than shown as 0.
func probeMetrics(r *result.Result, took time.Duration) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	gauge := func(name, help string, v float64) {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
		g.Set(v)
		reg.MustRegister(g)
	}
	ok := 0.0
	if r.Error == "" {
		ok = 1
	}
	gauge("probe_success", "1 when the test ran to its end, 0 when it failed (format=json says why).", ok)
	gauge("probe_duration_seconds", "How long the probe took.", took.Seconds())
	gauge("wirebench_probe_warnings", "Warnings of the test: a figure should not be trusted as it stands when above 0 (format=json lists them).", float64(len(r.Warnings)))
	if s := r.Sender; s != nil {
		gauge("wirebench_probe_sent_bytes", "Payload bytes sent.", float64(s.Bytes))
		gauge("wirebench_probe_sent_bits_per_second", "Sender rate, bit/s of payload.", s.BitsPerSecond)
	}
	if rc := r.Receiver; rc != nil {
		gauge("wirebench_probe_received_bytes", "Payload bytes the receiver counted.", float64(rc.Bytes))
		gauge("wirebench_probe_bits_per_second", "Receiver goodput, bit/s of payload.", rc.BitsPerSecond)
		if r.Test.Protocol == result.UDP {
			gauge("wirebench_probe_received_datagrams", "Datagrams the receiver counted.", float64(rc.Packets))
			gauge("wirebench_probe_lost_datagrams", "Datagrams the receiver counted lost.", float64(max(rc.Lost, 0)))
			if total := udpTotal(rc); total > 0 {
				gauge("wirebench_probe_lost_ratio", "Lost over expected datagrams (0..1).", float64(max(rc.Lost, 0))/float64(total))
			}
			gauge("wirebench_probe_jitter_seconds", "Receiver jitter, seconds.", rc.JitterMS/1e3)
		}
	}
	if l := r.Link; l != nil && l.TheoreticalBPS > 0 {
		gauge("wirebench_probe_percent_of_medium", "Receiver goodput as a percentage of what the medium allows.", l.PercentOfTheoretical)
	}
	return reg
}
